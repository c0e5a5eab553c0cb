"""What extraction reads of stored mail: headers, raw HTML, calendar parts, and who the mail belongs to."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from plmail.db.database import Database
from plmail.domain.enums import ProviderKind
from plmail.domain.messages import MEETING_HEADER_MARKS


@dataclass(frozen=True, slots=True)
class StoredPart:
    id: int
    content_type: str
    charset: str | None
    sha256: str | None  # None: a lazy stub whose bytes were never fetched


@dataclass(frozen=True, slots=True)
class StoredAttachment:
    """A part that is not a calendar: only its type and name, which a cheap supports() may look at."""

    content_type: str
    filename: str | None


@dataclass(frozen=True, slots=True)
class MessageInput:
    """One stored message as the extraction service needs it, with its owner's zone and addresses."""

    id: int
    account_id: int
    user_id: int
    provider_kind: ProviderKind
    received_at: datetime | None
    sent_at: datetime | None
    subject: str | None
    from_address: str | None
    headers: dict[str, Any]
    body_html: str | None
    raw_path: str | None
    parts: tuple[StoredPart, ...]
    user_zone: str
    addresses: frozenset[str]
    attachments: tuple[StoredAttachment, ...] = ()

    @property
    def arrived_at(self) -> datetime | None:
        return self.received_at or self.sent_at


def _loads(value: object) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _addresses(row: asyncpg.Record) -> frozenset[str]:
    settings = _loads(row["account_settings"])
    aliases = settings.get("aliases", []) if isinstance(settings, dict) else []
    values = [row["account_email"], row["user_email"], *(aliases if isinstance(aliases, list) else [])]
    return frozenset(str(v).strip().lower() for v in values if isinstance(v, str) and v.strip())


@dataclass(frozen=True, slots=True)
class BookingScan:
    """A coarse superset of KItinerary's cheap test for a backfill's scan (the run asks supports() after)."""

    sender_domains: tuple[str, ...]
    subject_stems: tuple[str, ...]
    attachment_types: tuple[str, ...]
    attachment_suffixes: tuple[str, ...]


# The arrival order every extraction pass walks in, so an older revision is read before a newer one.
_ARRIVAL = "coalesce(m.received_at, m.sent_at, m.created_at)"
# The same meeting marks the pipeline checks on arrival (`names_a_meeting`), for a scan of stored mail.
_MEETING_HEADERS = "ARRAY[" + ", ".join(f"'%{mark}%'" for mark in MEETING_HEADER_MARKS) + "]"


class CalendarSourceRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def inputs(self, user_id: int, message_ids: Sequence[int]) -> list[MessageInput]:
        """The user's messages among ``message_ids``, in arrival order, with their calendar parts."""
        if not message_ids:
            return []
        rows = await self.db.fetch(
            f"""SELECT m.id, m.account_id, a.user_id, a.provider_kind, m.received_at, m.sent_at, m.subject,
                       m.from_address, m.headers, m.body_html, m.raw_path, u.time_zone, u.email AS user_email,
                       a.email AS account_email, a.settings AS account_settings
                  FROM message m JOIN account a ON a.id = m.account_id JOIN app_user u ON u.id = a.user_id
                 WHERE a.user_id = $1 AND m.id = ANY($2::bigint[])
                 ORDER BY {_ARRIVAL}, m.id""",
            user_id, list(dict.fromkeys(message_ids)),
        )
        parts = await self.db.fetch(
            """SELECT p.id, p.message_id, p.content_type, p.charset, p.sha256, p.filename, p.is_calendar
                 FROM message_part p JOIN message m ON m.id = p.message_id JOIN account a ON a.id = m.account_id
                WHERE a.user_id = $1 AND p.message_id = ANY($2::bigint[]) ORDER BY p.id""",
            user_id, [r["id"] for r in rows],
        )
        by_message: dict[int, list[StoredPart]] = {}
        attached: dict[int, list[StoredAttachment]] = {}
        for p in parts:
            if p["is_calendar"]:
                by_message.setdefault(p["message_id"], []).append(
                    StoredPart(p["id"], p["content_type"], p["charset"], p["sha256"])
                )
            else:
                attached.setdefault(p["message_id"], []).append(StoredAttachment(p["content_type"], p["filename"]))
        return [
            MessageInput(
                id=r["id"], account_id=r["account_id"], user_id=r["user_id"],
                provider_kind=ProviderKind(r["provider_kind"]), received_at=r["received_at"], sent_at=r["sent_at"],
                subject=r["subject"], from_address=r["from_address"],
                headers=h if isinstance(h := _loads(r["headers"]), dict) else {}, body_html=r["body_html"],
                raw_path=r["raw_path"], parts=tuple(by_message.get(r["id"], ())), user_zone=r["time_zone"] or "UTC",
                addresses=_addresses(r), attachments=tuple(attached.get(r["id"], ())),
            )
            for r in rows
        ]

    async def remember_raw(self, user_id: int, message_id: int, digest: str) -> None:
        await self.db.execute(
            """UPDATE message m SET raw_path = $3 FROM account a
                WHERE m.id = $1 AND a.id = m.account_id AND a.user_id = $2 AND m.raw_path IS NULL""",
            message_id, user_id, digest,
        )

    async def candidates(
        self, user_id: int, *, after: tuple[datetime, int] | None, limit: int, bookings: BookingScan | None = None
    ) -> list[tuple[datetime, int]]:
        """(arrival, id) of the user's messages an extractor might read, oldest first, a page at a time.

        Raw SQL with text filters on purpose: a backfill must find Graph meeting messages by their
        headers and markup by the extractor's own hint, and only a scan of stored columns can.
        """
        rows = await self.db.fetch(
            f"""SELECT {_ARRIVAL} AS arrival, m.id FROM message m JOIN account a ON a.id = m.account_id
                 WHERE a.user_id = $1
                   AND ($2::timestamptz IS NULL OR ({_ARRIVAL}, m.id) > ($2::timestamptz, $3::bigint))
                   AND (EXISTS (SELECT 1 FROM message_part p WHERE p.message_id = m.id AND p.is_calendar)
                        OR m.body_html ILIKE '%ld+json%' OR m.body_html ILIKE '%itemscope%'
                        OR m.headers::text ILIKE ANY({_MEETING_HEADERS})
                        OR EXISTS (SELECT 1 FROM event_source_link l WHERE l.message_id = m.id)
                        OR ($5::boolean AND (
                               lower(split_part(m.from_address, '@', 2)) = ANY($6::text[])
                            OR lower(split_part(m.from_address, '@', 2)) LIKE ANY($7::text[])
                            OR m.subject ILIKE ANY($8::text[])
                            OR EXISTS (SELECT 1 FROM message_part p WHERE p.message_id = m.id
                                         AND (lower(p.content_type) = ANY($9::text[])
                                              OR lower(coalesce(p.filename, '')) LIKE ANY($10::text[]))))))
                 ORDER BY {_ARRIVAL}, m.id LIMIT $4""",
            user_id, after[0] if after else None, after[1] if after else None, limit, bookings is not None,
            list(bookings.sender_domains) if bookings else [],
            [f"%.{d}" for d in bookings.sender_domains] if bookings else [],
            [f"%{stem}%" for stem in bookings.subject_stems] if bookings else [],
            list(bookings.attachment_types) if bookings else [],
            [f"%{suffix}" for suffix in bookings.attachment_suffixes] if bookings else [],
        )
        return [(r["arrival"], r["id"]) for r in rows]

    async def user_ids(self, email: str | None = None) -> list[int]:
        """Users to backfill: one by address, or every user (the one query here not scoped to a user,
        because it is the one that enumerates them)."""
        rows = await self.db.fetch(
            "SELECT id FROM app_user WHERE $1::text IS NULL OR email = lower($1) ORDER BY id", email
        )
        return [r["id"] for r in rows]
