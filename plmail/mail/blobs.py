"""Content-addressed storage for raw messages and MIME parts in the data directory.

A blob's name is the SHA-256 of its bytes, so storing the same attachment twice costs nothing and
a half-written file can never be mistaken for a finished one (it is renamed into place only when
complete).
"""

from __future__ import annotations

import hashlib
import itertools
import os
from collections.abc import Awaitable, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Protocol

from plmail.domain.enums import ProviderKind
from plmail.domain.errors import NotFoundError

_WRITERS = ThreadPoolExecutor(max_workers=8, thread_name_prefix="blob-writer")
_PARALLEL_FROM = 4
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
LAYOUT_MARK = ".layout-flat"


class BlobStore:
    """Blobs live one level down (`ab/abcd…`): 256 directories made once. Stores written before used two levels
    (`ab/cd/abcd…`), so a first import created a directory for nearly every message; reads still look there,
    for a store that has no layout mark."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._made: set[Path] = set()  # fan-out directories known to exist: a mkdir per blob costs a syscall
        self._names = itertools.count()
        self._pid = os.getpid()
        self._legacy: bool | None = None

    @staticmethod
    def _checked(digest: str) -> str:
        if len(digest) != 64 or not all(c in "0123456789abcdef" for c in digest):
            raise ValueError(f"not a blob name: {digest!r}")
        return digest

    def path_for(self, digest: str) -> Path:
        """Where a blob is written, and found unless the store predates the flat layout (see `locate`)."""
        digest = self._checked(digest)
        return self.root / digest[:2] / digest

    def locate(self, digest: str) -> Path:
        """The file holding a blob, in either layout; the flat path when it is in neither."""
        path = self.path_for(digest)
        if self._has_legacy() and not path.exists():
            older = self.root / digest[:2] / digest[2:4] / digest
            if older.exists():
                return older
        return path

    def _has_legacy(self) -> bool:
        if self._legacy is None:
            mark = self.root / LAYOUT_MARK
            if mark.exists():
                self._legacy = False
            elif not self.root.exists() or not any(self.root.iterdir()):
                self.root.mkdir(parents=True, exist_ok=True)
                mark.touch()
                self._legacy = False
            else:
                self._legacy = True
        return self._legacy

    def put(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        target = self.locate(digest)
        if target.exists():
            return digest
        target = self.path_for(digest)
        directory = target.parent
        if directory not in self._made:
            directory.mkdir(parents=True, exist_ok=True)
            self._made.add(directory)
        # Plain os calls: a buffered file object adds an isatty ioctl and a seek to every blob.
        while True:
            tmp = directory / f".incoming-{digest[:16]}-{self._pid}-{next(self._names)}"
            try:
                fd = os.open(tmp, _CREATE, 0o600)
                break
            except FileExistsError:  # another process with our pid before a restart; take the next name
                continue
            except FileNotFoundError:  # the directory was removed behind our back
                directory.mkdir(parents=True, exist_ok=True)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return digest

    def put_many(self, blobs: Iterable[bytes]) -> list[str]:
        """Several files at once: creating a file waits on the disk, not the CPU, and a batch's originals
        are on the pipeline's critical path while the database stores the rows."""
        items = list(blobs)
        if len(items) < _PARALLEL_FROM:
            return [self.put(data) for data in items]
        return list(_WRITERS.map(self.put, items))

    def get(self, digest: str) -> bytes:
        try:
            return self.locate(digest).read_bytes()
        except FileNotFoundError:
            raise NotFoundError(f"Stored content {digest[:12]}… is missing from the data directory.") from None

    def exists(self, digest: str) -> bool:
        return self.locate(digest).exists()


class RawMessageFetcher(Protocol):
    """Fetches the original bytes of a message from its provider, for providers that do not hand
    them over at sync time (Gmail and Graph: a second API call, so it happens on first use)."""

    kind: ProviderKind

    async def fetch_raw(self, account_id: int, message_id: int) -> bytes: ...


class RawMessageResolver:
    """Original bytes of a stored message: from the blob store, or fetched once and stored."""

    def __init__(self, store: BlobStore, fetchers: Iterable[RawMessageFetcher] = ()) -> None:
        self.store = store
        self._fetchers = {fetcher.kind: fetcher for fetcher in fetchers}

    def register(self, fetcher: RawMessageFetcher) -> None:
        self._fetchers[fetcher.kind] = fetcher

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
            return self.store.get(raw_path)
        fetcher = self._fetchers.get(kind)
        if fetcher is None:
            raise NotFoundError("The original of this message was not stored and its provider cannot send it again.")
        data = await fetcher.fetch_raw(account_id, message_id)
        await remember(self.store.put(data))
        return data
