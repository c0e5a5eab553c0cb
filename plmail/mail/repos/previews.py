"""The attachment_preview table: the PNG drawn of a PDF blob's first page, or NULL where it could not be drawn."""

from __future__ import annotations

from collections.abc import Sequence

from plmail.db.database import Database


class PreviewRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def drawn(self, digests: Sequence[str]) -> dict[str, bytes | None]:
        """The outcome kept for each digest already tried: its PNG, or None where it could not be drawn."""
        rows = await self.db.fetch("SELECT digest, image FROM attachment_preview WHERE digest = ANY($1::text[])",
                                   list(digests))
        return {r["digest"]: r["image"] for r in rows}

    async def keep(self, digest: str, image: bytes | None) -> None:
        """Remember the outcome; only while its blob row is there (the row goes with it)."""
        await self.db.execute(
            """INSERT INTO attachment_preview (digest, image)
               SELECT $1::text, $2::bytea WHERE EXISTS (SELECT 1 FROM blob WHERE digest = $1::text)
               ON CONFLICT (digest) DO UPDATE SET image = EXCLUDED.image, created_at = now()""",
            digest, image,
        )
