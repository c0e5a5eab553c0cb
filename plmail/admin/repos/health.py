"""The one question health checks ask the database."""

from __future__ import annotations

from plmail.db.database import Database


class HealthRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def ping(self) -> object:
        return await self.db.fetchval("SELECT 1")
