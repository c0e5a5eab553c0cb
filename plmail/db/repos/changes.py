"""Rows of the JMAP change log."""

from __future__ import annotations

from collections.abc import Sequence

from plmail.db.database import Database


class ChangeLogRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def insert(self, rows: Sequence[tuple[int, str, str, str, bool]]) -> None:
        """One statement for the batch, in the given order: the sequence numbers clients resume from follow it.
        A row marked for the unified account is logged under its account's user's unified key (minus the
        user id); one whose account is gone is dropped."""
        if not rows:
            return
        await self.db.execute(
            """INSERT INTO jmap_change_log (account_id, object_type, entity_id, change_type, created_at)
               SELECT CASE WHEN x.u THEN -ac.user_id ELSE x.a END, x.o, x.e, x.c, now()
                 FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bool[])
                      WITH ORDINALITY AS x(a, o, e, c, u, n)
                 LEFT JOIN account ac ON x.u AND ac.id = x.a
                WHERE NOT x.u OR ac.id IS NOT NULL
                ORDER BY x.n""",
            [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], [r[3] for r in rows],
            [r[4] for r in rows],
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
