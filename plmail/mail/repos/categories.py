"""What re-sorting stored mail reads and writes: every message's stored category signals, in id order."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from plmail.db.database import Database


@dataclass(frozen=True, slots=True)
class CategorySignals:
    """The stored fields the category cascade reads, and the category the message has now."""

    id: int
    thread_id: int | None
    from_address: str | None
    headers: dict[str, Any]
    provider_labels: list[str] | None
    category: str | None
    ai_category: str | None


class CategoryRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def account_ids(self, user_id: int | None) -> list[int]:
        rows = await self.db.fetch(
            "SELECT id FROM account WHERE ($1::int IS NULL OR user_id = $1) ORDER BY id", user_id
        )
        return [r["id"] for r in rows]

    async def signals_after(self, account_id: int, last_id: int, limit: int) -> list[CategorySignals]:
        rows = await self.db.fetch(
            """SELECT id, thread_id, from_address, headers, provider_labels, category, ai_category FROM message
                WHERE account_id = $1 AND id > $2 ORDER BY id LIMIT $3""",
            account_id, last_id, limit,
        )
        return [
            CategorySignals(
                r["id"], r["thread_id"], r["from_address"], json.loads(r["headers"]),
                json.loads(r["provider_labels"]) if r["provider_labels"] is not None else None,
                r["category"], r["ai_category"],
            )
            for r in rows
        ]

    async def set_categories(self, updates: Sequence[tuple[int, str]]) -> None:
        await self.db.execute(
            """UPDATE message SET category = v.c, updated_at = now()
                 FROM unnest($1::bigint[], $2::text[]) AS v(i, c) WHERE message.id = v.i""",
            [u[0] for u in updates], [u[1] for u in updates],
        )
