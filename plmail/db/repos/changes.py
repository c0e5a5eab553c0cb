"""Rows of the JMAP change log."""

from __future__ import annotations

from collections.abc import Sequence

from plmail.db.database import Database


class ChangeLogRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def insert(self, rows: Sequence[tuple[int, str, str, str]]) -> None:
        async with self.db.connection() as conn:
            await conn.executemany(
                """INSERT INTO jmap_change_log (account_id, object_type, entity_id, change_type, created_at)
                   VALUES ($1, $2, $3, $4, now())""",
                rows,
            )

    async def notify(self, channel: str, payload: str) -> None:
        await self.db.execute("SELECT pg_notify($1, $2)", channel, payload)

    async def latest_sequence(self, account_id: int, object_type: str) -> int:
        value = await self.db.fetchval(
            "SELECT coalesce(max(sequence), 0) FROM jmap_change_log WHERE account_id = $1 AND object_type = $2",
            account_id, object_type,
        )
        return int(value)

    async def since(self, account_id: int, object_type: str, sequence: int, limit: int) -> list[tuple[int, str, str]]:
        rows = await self.db.fetch(
            """SELECT sequence, entity_id, change_type FROM jmap_change_log
                WHERE account_id = $1 AND object_type = $2 AND sequence > $3
                ORDER BY sequence LIMIT $4""",
            account_id, object_type, sequence, limit,
        )
        return [(r["sequence"], r["entity_id"], r["change_type"]) for r in rows]
