"""Installation-wide settings kept as JSON under a key."""

from __future__ import annotations

import json
from typing import Any

from plmail.db.database import Database


class SettingsRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def get(self, key: str) -> dict[str, Any]:
        value = await self.db.fetchval("SELECT value FROM app_setting WHERE key = $1", key)
        loaded = json.loads(value) if isinstance(value, str) else value
        return loaded if isinstance(loaded, dict) else {}

    async def put(self, key: str, value: dict[str, Any]) -> None:
        await self.db.execute(
            """INSERT INTO app_setting (key, value, updated_at) VALUES ($1, $2::jsonb, now())
               ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()""",
            key, json.dumps(value),
        )
