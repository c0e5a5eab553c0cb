"""How much database space a user's mail takes: its rows and the stored originals and parts they name."""

from __future__ import annotations

from collections.abc import Sequence

from plmail.db.database import Database


class QuotaRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def used(self, account_ids: Sequence[int]) -> int:
        """Octets on disk (as PostgreSQL stores them, compressed) of the accounts' messages, their parts and the
        blobs those name; a blob two messages share counts once."""
        if not account_ids:
            return 0
        value = await self.db.fetchval(
            """WITH mine AS (SELECT id, raw_path FROM message WHERE account_id = ANY($1::bigint[])),
                    digests AS (SELECT raw_path AS d FROM mine WHERE raw_path IS NOT NULL
                                UNION SELECT p.sha256 FROM message_part p JOIN mine ON mine.id = p.message_id
                                       WHERE p.sha256 IS NOT NULL)
               SELECT coalesce((SELECT sum(pg_column_size(m.*)) FROM message m
                                 WHERE m.account_id = ANY($1::bigint[])), 0)
                    + coalesce((SELECT sum(pg_column_size(p.*)) FROM message_part p
                                  JOIN mine ON mine.id = p.message_id), 0)
                    + coalesce((SELECT sum(pg_column_size(b.data)) FROM blob b
                                  JOIN digests ON digests.d = b.digest), 0)""",
            list(account_ids),
        )
        return int(value or 0)
