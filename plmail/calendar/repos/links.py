"""Provenance: which message put which event on the calendar, and what exactly it said."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from plmail.db.database import Database


@dataclass(frozen=True, slots=True)
class LinkValues:
    event_id: int
    message_id: int
    part_id: int | None
    extractor: str
    confidence: int
    dedup_key: str
    applied: bool
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ProvenanceRow:
    message_id: int
    thread_id: int | None
    subject: str
    from_name: str
    from_address: str
    arrived_at: datetime | None
    extractor: str
    confidence: int
    dedup_key: str
    applied: bool
    linked_at: datetime


@dataclass(frozen=True, slots=True)
class StoredPayload:
    extractor: str
    dedup_key: str
    part_id: int | None
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ThreadLink:
    """One link of a message in a conversation, with the id of the event it points at."""

    message_id: int
    event_id: int
    extractor: str
    applied: bool


class EventSourceLinkRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def upsert(self, user_id: int, link: LinkValues) -> None:
        """One row per (event, message, extractor). ``applied`` is OR-ed in: a message that once won and
        was later superseded was applied, and a replay of it must not rewrite that history."""
        await self.db.execute(
            """INSERT INTO event_source_link (event_id, message_id, message_part_id, extractor, confidence, dedup_key,
                                              applied, payload, created_at, updated_at)
               SELECT e.id, m.id, p.id, $4, $5, $6, $7, $8::jsonb, now(), now()
                 FROM calendar_event e
                 JOIN message m ON m.id = $2
                 JOIN account a ON a.id = m.account_id AND a.user_id = e.user_id
                 LEFT JOIN message_part p ON p.id = $3 AND p.message_id = m.id
                WHERE e.id = $1 AND e.user_id = $9
               ON CONFLICT (event_id, message_id, extractor) DO UPDATE
                  SET message_part_id = EXCLUDED.message_part_id, confidence = EXCLUDED.confidence,
                      dedup_key = EXCLUDED.dedup_key, applied = event_source_link.applied OR EXCLUDED.applied,
                      payload = EXCLUDED.payload, updated_at = now()""",
            link.event_id, link.message_id, link.part_id, link.extractor, link.confidence, link.dedup_key[:128],
            link.applied, json.dumps(link.payload), user_id,
        )

    async def latest_applied_arrival(self, user_id: int, event_id: int) -> datetime | None:
        """When the newest mail that was applied to the event arrived (the tie-breaker on equal SEQUENCE)."""
        value = await self.db.fetchval(
            """SELECT max(coalesce(m.received_at, m.sent_at))
                 FROM event_source_link l
                 JOIN calendar_event e ON e.id = l.event_id
                 JOIN message m ON m.id = l.message_id
                WHERE l.event_id = $1 AND e.user_id = $2 AND l.applied""",
            event_id, user_id,
        )
        return value if isinstance(value, datetime) else None

    async def dedup_keys(self, user_id: int, event_id: int) -> list[str]:
        rows = await self.db.fetch(
            """SELECT DISTINCT l.dedup_key FROM event_source_link l JOIN calendar_event e ON e.id = l.event_id
                WHERE l.event_id = $1 AND e.user_id = $2""",
            event_id, user_id,
        )
        return [r["dedup_key"] for r in rows]

    async def source_account(self, user_id: int, event_id: int) -> int | None:
        """The account of the newest message that put the event on the calendar (and still counts)."""
        value = await self.db.fetchval(
            """SELECT m.account_id FROM event_source_link l
                 JOIN calendar_event e ON e.id = l.event_id
                 JOIN message m ON m.id = l.message_id
                 JOIN account a ON a.id = m.account_id
                WHERE l.event_id = $1 AND e.user_id = $2 AND a.user_id = $2
                ORDER BY l.applied DESC, coalesce(m.received_at, m.sent_at) DESC NULLS LAST, m.id DESC LIMIT 1""",
            event_id, user_id,
        )
        return int(value) if value is not None else None

    async def provenance(self, user_id: int, event_id: int) -> list[ProvenanceRow]:
        """Every message linked to the event, applied or superseded, oldest mail first."""
        rows = await self.db.fetch(
            """SELECT l.message_id, m.thread_id, coalesce(m.subject, '') AS subject,
                      coalesce(m.from_name, '') AS from_name, coalesce(m.from_address, '') AS from_address,
                      coalesce(m.received_at, m.sent_at) AS arrived_at, l.extractor, l.confidence, l.dedup_key,
                      l.applied, l.created_at
                 FROM event_source_link l
                 JOIN calendar_event e ON e.id = l.event_id
                 JOIN message m ON m.id = l.message_id
                 JOIN account a ON a.id = m.account_id
                WHERE l.event_id = $1 AND e.user_id = $2 AND a.user_id = $2
                ORDER BY coalesce(m.received_at, m.sent_at) NULLS FIRST, m.id, l.extractor""",
            event_id, user_id,
        )
        return [
            ProvenanceRow(r["message_id"], r["thread_id"], r["subject"], r["from_name"], r["from_address"],
                          r["arrived_at"], r["extractor"], r["confidence"], r["dedup_key"], r["applied"],
                          r["created_at"])
            for r in rows
        ]

    async def payloads_for_message(self, user_id: int, message_id: int) -> list[StoredPayload]:
        rows = await self.db.fetch(
            """SELECT l.extractor, l.dedup_key, l.message_part_id, l.payload
                 FROM event_source_link l JOIN calendar_event e ON e.id = l.event_id
                WHERE l.message_id = $1 AND e.user_id = $2 ORDER BY l.id""",
            message_id, user_id,
        )
        found: list[StoredPayload] = []
        for r in rows:
            payload = json.loads(r["payload"]) if isinstance(r["payload"], str) else r["payload"]
            found.append(StoredPayload(r["extractor"], r["dedup_key"], r["message_part_id"],
                                       payload if isinstance(payload, dict) else {}))
        return found

    async def for_thread(self, user_id: int, thread_id: int) -> list[ThreadLink]:
        """Every link of every message in one conversation: one indexed query per conversation opened,
        instead of one per message for a partial that is included once per message."""
        rows = await self.db.fetch(
            """SELECT l.message_id, l.event_id, l.extractor, l.applied
                 FROM message m
                 JOIN account a ON a.id = m.account_id
                 JOIN event_source_link l ON l.message_id = m.id
                 JOIN calendar_event e ON e.id = l.event_id
                WHERE a.user_id = $1 AND e.user_id = $1 AND m.thread_id = $2
                ORDER BY l.message_id, l.id""",
            user_id, thread_id,
        )
        return [ThreadLink(r["message_id"], r["event_id"], r["extractor"], r["applied"]) for r in rows]

    async def first_sources(self, user_id: int, event_ids: list[int]) -> dict[int, tuple[int, int | None]]:
        """For each event, the earliest message that was applied to it: (message id, thread id)."""
        if not event_ids:
            return {}
        rows = await self.db.fetch(
            """SELECT DISTINCT ON (l.event_id) l.event_id, m.id AS message_id, m.thread_id
                 FROM event_source_link l
                 JOIN calendar_event e ON e.id = l.event_id
                 JOIN message m ON m.id = l.message_id
                 JOIN account a ON a.id = m.account_id
                WHERE e.user_id = $1 AND a.user_id = $1 AND l.event_id = ANY($2::bigint[]) AND l.applied
                ORDER BY l.event_id, coalesce(m.received_at, m.sent_at) NULLS LAST, m.id""",
            user_id, list(dict.fromkeys(event_ids)),
        )
        return {int(r["event_id"]): (int(r["message_id"]), r["thread_id"]) for r in rows}
