"""Content-addressed storage for raw messages and MIME parts, in PostgreSQL.

A blob's name is the SHA-256 of its bytes, so storing the same attachment twice costs nothing, and bytes
that no longer match their name are reported as damaged instead of being handed out. The bytes sit in the
database beside the rows that name them: a batch's originals are written in the batch's own transaction
(a batch that rolls back leaves nothing behind), a worker on another machine reads them, and a first import
does not create a file per message, which cost more than all the rest of the Python side of an import.

Earlier versions kept blobs as files under the data directory; those files are still read, and a housekeeping
job moves them into the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import timedelta
from pathlib import Path

from plmail.db.database import Database
from plmail.domain.enums import ProviderKind
from plmail.domain.errors import CorruptBlobError, NotFoundError
from plmail.domain.registry import ProviderRegistry
from plmail.mail.repos.blobs import BlobRepository

# Hashing more than this is handed to a thread, so checking a large attachment does not stall the loop.
_HASH_INLINE_BYTES = 256 * 1024
_DIGEST = re.compile(r"[0-9a-f]{64}")
# Bytes are written a moment before the row naming them (an upload, then its upload row), so the sweep
# spares anything written or re-stored this recently.
SWEEP_GRACE = timedelta(hours=1)
LEGACY_BATCH = 2000  # blob files moved into the database per run of the housekeeping job

log = logging.getLogger(__name__)


def _checked(digest: str) -> str:
    if not _DIGEST.fullmatch(digest):
        raise ValueError(f"not a blob name: {digest!r}")
    return digest


class LegacyBlobFiles:
    """Blob files written before blobs moved into the database: `ab/abcd…`, or `ab/cd/abcd…` from the
    first layout. Read and removed, never written."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def paths(self, digest: str) -> tuple[Path, Path]:
        digest = _checked(digest)
        return self.root / digest[:2] / digest, self.root / digest[:2] / digest[2:4] / digest

    def read(self, digest: str, limit: int | None = None) -> bytes | None:
        for path in self.paths(digest):
            try:
                with path.open("rb") as handle:
                    return handle.read() if limit is None else handle.read(limit)
            except FileNotFoundError:
                continue
        return None

    def remove(self, digest: str) -> None:
        for path in self.paths(digest):
            path.unlink(missing_ok=True)

    def some(self, limit: int) -> list[Path]:
        """Up to `limit` blob files still on disk, in either layout; names that are not digests are skipped."""
        found: list[Path] = []
        if not self.root.is_dir():
            return found
        pending = [self.root]
        while pending and len(found) < limit:
            directory = pending.pop()
            with os.scandir(directory) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False) and len(entry.name) == 2:
                        pending.append(Path(entry.path))
                    elif entry.is_file(follow_symlinks=False) and _DIGEST.fullmatch(entry.name):
                        found.append(Path(entry.path))
                        if len(found) >= limit:
                            break
        return found

    def set_aside(self, path: Path) -> None:
        """Keep a file whose bytes no longer match its name where a person can look at it, out of the way."""
        path.replace(path.with_name(path.name + ".damaged"))

    def prune_empty_directories(self) -> None:
        for directory in sorted((p for p in self.root.glob("*/**") if p.is_dir()), reverse=True):
            with contextlib.suppress(OSError):
                directory.rmdir()


class BlobStore:
    def __init__(self, db: Database, legacy_root: Path | None = None) -> None:
        self.repo = BlobRepository(db)
        self.legacy = LegacyBlobFiles(legacy_root) if legacy_root is not None else None

    async def put(self, data: bytes) -> str:
        return (await self.put_many([data]))[0]

    async def put_many(self, blobs: Iterable[bytes]) -> list[str]:
        """Store bytes under their SHA-256; inside a transaction they are kept only if it commits."""
        items = list(blobs)
        digests = [await _sha256(data) for data in items]
        await self.repo.insert(list(zip(digests, items, strict=True)))
        return digests

    async def put_hashed(self, blobs: Sequence[tuple[str, bytes]]) -> None:
        """Store (SHA-256, bytes) pairs whose digests the caller has just computed from those very bytes."""
        await self.repo.insert([(_checked(digest), data) for digest, data in blobs])

    async def get(self, digest: str) -> bytes:
        data = await self.repo.data(_checked(digest))
        if data is None and self.legacy is not None:
            data = await asyncio.to_thread(self.legacy.read, digest)
            if data is None:  # moved into the database between the two looks
                data = await self.repo.data(digest)
        if data is None:
            raise NotFoundError(f"Stored content {digest[:12]}… is missing.")
        if await _sha256(data) != digest:
            raise CorruptBlobError(f"Stored content {digest[:12]}… is damaged: its bytes no longer match its name.")
        return data

    async def head(self, digest: str, limit: int) -> bytes | None:
        """The first `limit` bytes of a blob, unchecked (a header block to show); None when it is not stored."""
        data = await self.repo.head(_checked(digest), limit)
        if data is None and self.legacy is not None:
            data = await asyncio.to_thread(self.legacy.read, digest, limit)
        return data

    async def exists(self, digest: str) -> bool:
        if await self.repo.known([_checked(digest)]):
            return True
        return self.legacy is not None and any(path.exists() for path in self.legacy.paths(digest))

    async def sweep(self) -> int:
        """Remove bytes nothing refers to any more (mail of removed accounts, expunged mail, lapsed uploads).
        Files of earlier versions are left alone: whether they are referenced is not known without reading
        every row."""
        return await self.repo.sweep(SWEEP_GRACE)

    async def absorb_legacy_files(self, limit: int = LEGACY_BATCH) -> int:
        """Move blob files of earlier versions into the database, a batch at a time; returns how many moved.
        A file is removed only once its bytes are stored; one whose bytes do not match its name is set aside."""
        legacy = self.legacy
        if legacy is None:
            return 0
        paths = await asyncio.to_thread(legacy.some, limit)
        if not paths:
            await asyncio.to_thread(legacy.prune_empty_directories)
            return 0
        moving: list[tuple[Path, str, bytes]] = []
        for path in paths:
            data = await asyncio.to_thread(path.read_bytes)
            if await _sha256(data) != path.name:
                log.warning("blob file %s does not match its name; set aside as .damaged", path)
                await asyncio.to_thread(legacy.set_aside, path)
                continue
            moving.append((path, path.name, data))
        await self.repo.insert([(digest, data) for _, digest, data in moving])
        for path, _, _ in moving:
            await asyncio.to_thread(path.unlink, True)
        return len(moving)

    async def discard(self, digests: Sequence[str]) -> int:
        """Remove those of `digests` that nothing names any more (the content is shared); returns how many."""
        unused = await self.repo.unreferenced([_checked(d) for d in digests])
        await self.repo.delete(unused)
        if self.legacy is not None:
            for digest in unused:
                await asyncio.to_thread(self.legacy.remove, digest)
        return len(unused)


async def _sha256(data: bytes) -> str:
    if len(data) <= _HASH_INLINE_BYTES:
        return hashlib.sha256(data).hexdigest()
    return await asyncio.to_thread(lambda: hashlib.sha256(data).hexdigest())


class RawMessageResolver:
    """Original bytes of a stored message: from the blob store, or fetched once and stored."""

    def __init__(self, store: BlobStore, providers: ProviderRegistry) -> None:
        self.store = store
        self.fetchers = providers.raw_fetchers

    async def load(
        self,
        *,
        raw_path: str | None,
        account_id: int,
        message_id: int,
        kind: ProviderKind,
        remember: Callable[[str], Awaitable[None]],
    ) -> bytes:
        if raw_path:
            return await self.store.get(raw_path)
        fetcher = self.fetchers.get(kind)
        if fetcher is None:
            raise NotFoundError("The original of this message was not stored and its provider cannot send it again.")
        data = await fetcher.fetch_raw(account_id, message_id)
        await remember(await self.store.put(data))
        return data
