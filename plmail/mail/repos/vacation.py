"""The users' automatic replies, and whom they answered when."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from plmail.db.database import Database
from plmail.domain.outgoing import IncomingMail, VacationSettings


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


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

    async def answering(self, account_ids: Sequence[int], earliest: datetime, latest: datetime) -> set[int]:
        """Which of the accounts belong to a user whose automatic reply is on at some minute between the two."""
        rows = await self.db.fetch(
            """SELECT a.id FROM account a JOIN vacation_response v ON v.user_id = a.user_id
                WHERE a.id = ANY($1::int[]) AND v.is_enabled
                  AND (v.from_date IS NULL OR date_trunc('minute', v.from_date) <= $3)
                  AND (v.to_date IS NULL OR date_trunc('minute', $2::timestamptz) < v.to_date)""",
            list(account_ids), earliest, latest,
        )
        return {r["id"] for r in rows}

    async def replied_since(self, user_id: int, sender: str, since: datetime) -> bool:
        return bool(await self.db.fetchval(
            """SELECT EXISTS (SELECT 1 FROM vacation_reply WHERE user_id = $1 AND lower(sender) = lower($2)
                                 AND replied_at >= $3)""", user_id, sender, since))

    async def record_reply(self, user_id: int, sender: str, at: datetime) -> None:
        await self.db.execute("INSERT INTO vacation_reply (user_id, sender, replied_at) VALUES ($1, lower($2), $3)",
                              user_id, sender, at)

    async def incoming(self, message_id: int) -> IncomingMail | None:
        """What deciding on an automatic reply to a received message needs."""
        row = await self.db.fetchrow(
            """SELECT a.user_id, m.account_id, m.from_address, m.headers, m.sent_at, m.received_at, m.to_addresses,
                      m.cc_addresses, (m.flags ? '$draft' OR m.flags ? '\\Draft') AS is_draft,
                      EXISTS (SELECT 1 FROM message_label ml JOIN label l ON l.id = ml.label_id
                               WHERE ml.message_id = m.id AND l.role = 'inbox') AS in_inbox,
                      EXISTS (SELECT 1 FROM message_label ml JOIN label l ON l.id = ml.label_id
                               WHERE ml.message_id = m.id AND l.role = 'spam') AS in_spam
                 FROM message m JOIN account a ON a.id = m.account_id WHERE m.id = $1""", message_id)
        if row is None:
            return None
        headers = _json(row["headers"]) or {}
        recipients = tuple(str(a.get("address") or "").lower() for a in
                           [*(_json(row["to_addresses"]) or []), *(_json(row["cc_addresses"]) or [])]
                           if isinstance(a, dict))
        return IncomingMail(row["user_id"], row["account_id"], row["from_address"], headers, row["sent_at"],
                            row["received_at"], recipients, row["is_draft"], row["in_inbox"], row["in_spam"])

    async def prune_replies(self, before: datetime) -> int:
        rows = await self.db.fetch("DELETE FROM vacation_reply WHERE replied_at < $1 RETURNING id", before)
        return len(rows)
