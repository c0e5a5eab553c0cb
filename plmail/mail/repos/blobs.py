"""The blob table: content-addressed bytes of raw messages, MIME parts and JMAP uploads."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from plmail.db.database import Database

# One statement carries at most this many bytes: a page of fifty large attachments would otherwise be
# a single protocol message of a gigabyte.
STATEMENT_BYTES = 32 * 1024 * 1024


def _named_by_nothing(digest: str) -> str:
    """The one definition of "unreferenced": no message original, stored part or upload names the digest."""
    return f"""NOT EXISTS (SELECT 1 FROM message m WHERE m.raw_path = {digest})
           AND NOT EXISTS (SELECT 1 FROM message_part p WHERE p.sha256 = {digest})
           AND NOT EXISTS (SELECT 1 FROM jmap_upload u WHERE u.sha256 = {digest})"""


class BlobRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def insert(self, blobs: Sequence[tuple[str, bytes]]) -> None:
        """Store (digest, bytes) pairs. A digest already there keeps its bytes but is locked and dated now,
        so the sweep cannot take it while the rows that will name it are still uncommitted. Rows go in
        digest order, so two batches holding the same bytes wait on each other instead of deadlocking."""
        ordered = sorted(dict(blobs).items())
        chunk: list[tuple[str, bytes]] = []
        size = 0
        for digest, data in ordered:
            if chunk and size + len(data) > STATEMENT_BYTES:
                await self._insert(chunk)
                chunk, size = [], 0
            chunk.append((digest, data))
            size += len(data)
        if chunk:
            await self._insert(chunk)

    async def _insert(self, blobs: Sequence[tuple[str, bytes]]) -> None:
        await self.db.execute(
            """INSERT INTO blob (digest, data, created_at)
               SELECT d, b, now() FROM unnest($1::text[], $2::bytea[]) AS x(d, b) ORDER BY d
               ON CONFLICT (digest) DO UPDATE SET created_at = now()""",
            [d for d, _ in blobs], [b for _, b in blobs],
        )

    async def known(self, digests: Sequence[str]) -> set[str]:
        rows = await self.db.fetch("SELECT digest FROM blob WHERE digest = ANY($1::text[])", list(digests))
        return {r["digest"] for r in rows}

    async def data(self, digest: str) -> bytes | None:
        value: bytes | None = await self.db.fetchval("SELECT data FROM blob WHERE digest = $1", digest)
        return value

    async def head(self, digest: str, limit: int) -> bytes | None:
        value: bytes | None = await self.db.fetchval(
            "SELECT substring(data FROM 1 FOR $2) FROM blob WHERE digest = $1", digest, limit)
        return value

    async def unreferenced(self, digests: Sequence[str]) -> list[str]:
        rows = await self.db.fetch(
            f"SELECT d FROM unnest($1::text[]) AS x(d) WHERE {_named_by_nothing('x.d')} ORDER BY d", list(digests))
        return [r["d"] for r in rows]

    async def delete(self, digests: Sequence[str]) -> None:
        await self.db.execute("DELETE FROM blob WHERE digest = ANY($1::text[])", list(digests))

    async def sweep(self, grace: timedelta) -> int:
        """Delete blobs nothing names, unless written or re-stored within `grace`."""
        status = await self.db.execute(
            f"DELETE FROM blob b WHERE b.created_at < now() - $1::interval AND {_named_by_nothing('b.digest')}",
            grace,
        )
        return int(status.split()[-1])
