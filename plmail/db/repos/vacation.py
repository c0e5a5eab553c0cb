"""The users' automatic replies, and whom they answered when."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from plmail.db.database import Database
from plmail.domain.messages import HeaderValue
from plmail.domain.outgoing import VacationSettings


class VacationRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def get(self, user_id: int) -> VacationSettings | None:
        row = await self.db.fetchrow(
            """SELECT is_enabled, from_date, to_date, subject, text_body, html_body FROM vacation_response
                WHERE user_id = $1""", user_id)
        if row is None:
            return None
        return VacationSettings(row["is_enabled"], row["from_date"], row["to_date"], row["subject"],
                                row["text_body"], row["html_body"])

    async def put(self, user_id: int, settings: VacationSettings) -> None:
        await self.db.execute(
            """INSERT INTO vacation_response (user_id, is_enabled, from_date, to_date, subject, text_body, html_body,
                                              updated_at)
               VALUES ($1, $2, $3, $4, $5, $6, $7, now())
               ON CONFLICT (user_id) DO UPDATE SET is_enabled = EXCLUDED.is_enabled, from_date = EXCLUDED.from_date,
                   to_date = EXCLUDED.to_date, subject = EXCLUDED.subject, text_body = EXCLUDED.text_body,
                   html_body = EXCLUDED.html_body, updated_at = now()""",
            user_id, settings.is_enabled, settings.from_date, settings.to_date, settings.subject, settings.text_body,
            settings.html_body,
        )

    async def answering(self, account_ids: Sequence[int], now: datetime) -> set[int]:
        """Which of the accounts belong to a user whose automatic reply is on now."""
        rows = await self.db.fetch(
            """SELECT a.id FROM account a JOIN vacation_response v ON v.user_id = a.user_id
                WHERE a.id = ANY($1::int[]) AND v.is_enabled
                  AND (v.from_date IS NULL OR v.from_date <= $2) AND (v.to_date IS NULL OR $2 < v.to_date)""",
            list(account_ids), now,
        )
        return {r["id"] for r in rows}

    async def replied_since(self, user_id: int, sender: str, since: datetime) -> bool:
        return bool(await self.db.fetchval(
            """SELECT EXISTS (SELECT 1 FROM vacation_reply WHERE user_id = $1 AND lower(sender) = lower($2)
                                 AND replied_at >= $3)""", user_id, sender, since))

    async def record_reply(self, user_id: int, sender: str, at: datetime) -> None:
        await self.db.execute("INSERT INTO vacation_reply (user_id, sender, replied_at) VALUES ($1, lower($2), $3)",
                              user_id, sender, at)

    async def incoming(self, message_id: int) -> tuple[int, str | None, dict[str, HeaderValue], bool] | None:
        """(user id, sender, stored headers, whether it is in the Inbox) of a received message."""
        row = await self.db.fetchrow(
            """SELECT a.user_id, m.from_address, m.headers,
                      EXISTS (SELECT 1 FROM message_label ml JOIN label l ON l.id = ml.label_id
                               WHERE ml.message_id = m.id AND l.role = 'inbox') AS in_inbox
                 FROM message m JOIN account a ON a.id = m.account_id WHERE m.id = $1""", message_id)
        if row is None:
            return None
        headers = json.loads(row["headers"]) if isinstance(row["headers"], str) else (row["headers"] or {})
        return row["user_id"], row["from_address"], headers, row["in_inbox"]

    async def prune_replies(self, before: datetime) -> int:
        rows = await self.db.fetch("DELETE FROM vacation_reply WHERE replied_at < $1 RETURNING id", before)
        return len(rows)
