"""Rows of applied_action: the idempotency key of every action sent with one (a notification's button, a
replayed offline queue), so that a replay is refused instead of applied twice."""

from __future__ import annotations

from plmail.db.database import Database


class AppliedActionRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def claim(self, user_id: int, idempotency_key: str) -> bool:
        """Records the key; False when it was recorded already (a replay)."""
        row = await self.db.fetchval(
            """INSERT INTO applied_action (user_id, idempotency_key) VALUES ($1, $2)
               ON CONFLICT DO NOTHING RETURNING true""", user_id, idempotency_key)
        return bool(row)

    async def release(self, user_id: int, idempotency_key: str) -> None:
        await self.db.execute("DELETE FROM applied_action WHERE user_id = $1 AND idempotency_key = $2",
                              user_id, idempotency_key)

    async def forget_older_than(self, days: int) -> int:
        status = await self.db.execute(
            "DELETE FROM applied_action WHERE applied_at < now() - make_interval(days => $1)", days)
        return int(status.split()[-1])
