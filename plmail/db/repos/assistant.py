"""What holding and classifying read and write on messages."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from plmail.db.database import Database


@dataclass(frozen=True, slots=True)
class MessageForModel:
    id: int
    account_id: int
    user_id: int
    thread_id: int | None
    from_address: str | None
    from_name: str | None
    subject: str
    text: str
    headers: dict[str, Any]
    provider_labels: list[str] | None
    category: str | None
    ai_categorised_at: datetime | None
    held: bool  # held and not yet released


@dataclass(frozen=True, slots=True)
class ReleasedMessage:
    id: int
    account_id: int
    user_id: int
    thread_id: int | None


@dataclass(frozen=True, slots=True)
class HoldStats:
    held: int
    median_seconds: float | None
    p95_seconds: float | None
    shown_before_verdict: int


def _loads(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


class AssistantRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def messages(self, message_ids: Sequence[int]) -> list[MessageForModel]:
        rows = await self.db.fetch(
            """SELECT m.id, m.account_id, a.user_id, m.thread_id, m.from_address, m.from_name,
                      coalesce(m.subject, '') AS subject, left(coalesce(m.body_text, m.preview, ''), 4000) AS text,
                      m.headers, m.provider_labels, m.category, m.ai_categorised_at,
                      m.category_held_at IS NOT NULL AND m.category_released_at IS NULL AS held
                 FROM message m JOIN account a ON a.id = m.account_id
                WHERE m.id = ANY($1::bigint[]) ORDER BY m.id""",
            list(message_ids),
        )
        return [MessageForModel(r["id"], r["account_id"], r["user_id"], r["thread_id"], r["from_address"],
                                r["from_name"], r["subject"], r["text"], _loads(r["headers"]) or {},
                                _loads(r["provider_labels"]), r["category"], r["ai_categorised_at"], r["held"])
                for r in rows]

    async def record_verdict(self, message_id: int, category: str | None, reason: str | None, error: str | None
                             ) -> None:
        """The model was asked about this message; it is never asked again, whatever it answered."""
        await self.db.execute(
            """UPDATE message SET ai_categorised_at = now(), ai_category = $2, ai_reason = $3, ai_error = $4,
                                  updated_at = now() WHERE id = $1""",
            message_id, category, reason, error,
        )

    async def set_category(self, message_id: int, category: str) -> bool:
        status = await self.db.execute(
            "UPDATE message SET category = $2, updated_at = now() WHERE id = $1 AND category IS DISTINCT FROM $2",
            message_id, category,
        )
        return status.endswith(" 1")

    async def release(self, message_ids: Sequence[int]) -> list[ReleasedMessage]:
        """Mark held messages released; returns those that were still held."""
        rows = await self.db.fetch(
            """UPDATE message m SET category_released_at = now(), updated_at = now()
                 FROM account a
                WHERE a.id = m.account_id AND m.id = ANY($1::bigint[])
                  AND m.category_held_at IS NOT NULL AND m.category_released_at IS NULL
                RETURNING m.id, m.account_id, a.user_id, m.thread_id""",
            list(message_ids),
        )
        return [ReleasedMessage(r["id"], r["account_id"], r["user_id"], r["thread_id"]) for r in rows]

    async def overdue(self, older_than_seconds: int, limit: int = 1000) -> list[int]:
        rows = await self.db.fetch(
            """SELECT id FROM message WHERE category_held_at IS NOT NULL AND category_released_at IS NULL
                  AND category_held_at < now() - make_interval(secs => $1) ORDER BY category_held_at LIMIT $2""",
            older_than_seconds, limit,
        )
        return [r["id"] for r in rows]

    async def never_asked(self, user_id: int, own_addresses: Sequence[str], limit: int) -> list[int]:
        """The user's newest mail the model has never been asked about (own sent copies excluded)."""
        rows = await self.db.fetch(
            """SELECT m.id FROM message m JOIN account a ON a.id = m.account_id
                WHERE a.user_id = $1 AND m.ai_categorised_at IS NULL
                  AND (m.from_address IS NULL OR NOT (m.from_address = ANY($2::text[])))
                ORDER BY coalesce(m.received_at, m.sent_at) DESC NULLS LAST, m.id DESC LIMIT $3""",
            user_id, list(own_addresses), limit,
        )
        return [r["id"] for r in rows]

    async def users_with_accounts(self) -> list[tuple[int, list[int], list[str]]]:
        rows = await self.db.fetch(
            """SELECT a.user_id, array_agg(a.id ORDER BY a.id) AS accounts,
                      array_agg(DISTINCT lower(a.email)) AS emails
                 FROM account a WHERE a.is_active GROUP BY a.user_id ORDER BY a.user_id"""
        )
        return [(r["user_id"], list(r["accounts"]), [e for e in r["emails"] if e]) for r in rows]

    async def hold_stats(self) -> HoldStats:
        row = await self.db.fetchrow(
            """SELECT count(*) AS held,
                      percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM category_released_at
                                                                                - category_held_at)) AS p50,
                      percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM category_released_at
                                                                                 - category_held_at)) AS p95,
                      count(*) FILTER (WHERE ai_categorised_at IS NULL OR ai_categorised_at > category_released_at
                                       OR ai_category IS NULL) AS early
                 FROM message WHERE category_held_at IS NOT NULL AND category_released_at IS NOT NULL"""
        )
        assert row is not None
        return HoldStats(row["held"], row["p50"], row["p95"], row["early"])
