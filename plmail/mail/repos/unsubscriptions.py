"""Which lists a user unsubscribed from (migration 2026-12-06T12:00)."""

from __future__ import annotations

from plmail.db.database import Database


class UnsubscriptionRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def record(self, user_id: int, list_key: str, method: str, target: str) -> bool:
        """True when this is the first record for the list (a second click changes nothing)."""
        inserted = await self.db.fetchval(
            """INSERT INTO unsubscription (user_id, list_key, method, target) VALUES ($1, $2, $3, $4)
               ON CONFLICT (user_id, list_key) DO NOTHING RETURNING true""", user_id, list_key, method, target)
        return bool(inserted)

    async def forget(self, user_id: int, list_key: str) -> None:
        await self.db.execute("DELETE FROM unsubscription WHERE user_id = $1 AND list_key = $2", user_id, list_key)

    async def done(self, user_id: int, list_key: str) -> str | None:
        """The method used, when the user unsubscribed from the list."""
        value = await self.db.fetchval(
            "SELECT method FROM unsubscription WHERE user_id = $1 AND list_key = $2", user_id, list_key)
        return str(value) if value is not None else None
