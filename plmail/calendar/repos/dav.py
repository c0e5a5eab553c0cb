"""What CalDAV needs beyond the events themselves: the href a client named an event by, and each calendar's
change log position (its sync token and CTag), always under the owning user."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from plmail.db.database import Database
from plmail.db.repos.jmap_changes import under_share_lock

EVENT_KIND = "CalendarEvent"


@dataclass(frozen=True, slots=True)
class ChangedEvent:
    event_id: int
    sequence: int


class CalendarDavRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def hrefs(self, user_id: int, event_ids: Sequence[int]) -> dict[int, tuple[int, str]]:
        """Each event's (calendar, href) a client gave it, for the events that have one."""
        if not event_ids:
            return {}
        rows = await self.db.fetch(
            """SELECT event_id, calendar_id, href FROM calendar_dav_resource
                WHERE user_id = $1 AND event_id = ANY($2::bigint[])""",
            user_id, list(dict.fromkeys(event_ids)),
        )
        return {int(r["event_id"]): (int(r["calendar_id"]), str(r["href"])) for r in rows}

    async def event_at(self, user_id: int, calendar_id: int, href: str) -> int | None:
        value = await self.db.fetchval(
            "SELECT event_id FROM calendar_dav_resource WHERE user_id = $1 AND calendar_id = $2 AND href = $3",
            user_id, calendar_id, href,
        )
        return int(value) if value is not None else None

    async def events_at(self, user_id: int, calendar_id: int, hrefs: Sequence[str]) -> dict[str, int]:
        if not hrefs:
            return {}
        rows = await self.db.fetch(
            """SELECT href, event_id FROM calendar_dav_resource
                WHERE user_id = $1 AND calendar_id = $2 AND href = ANY($3::text[])""",
            user_id, calendar_id, list(dict.fromkeys(hrefs)),
        )
        return {str(r["href"]): int(r["event_id"]) for r in rows}

    async def name(self, user_id: int, calendar_id: int, href: str, event_id: int, body: bytes,
                   body_of: datetime) -> None:
        """The client's name for the event and the bytes it sent, kept for the event's version ``body_of``; a
        name an older (deleted) event had is taken over."""
        await self.db.execute(
            """DELETE FROM calendar_dav_resource WHERE event_id = $4 AND user_id = $1
                                                 AND (calendar_id <> $2 OR href <> $3)""",
            user_id, calendar_id, href, event_id,
        )
        await self.db.execute(
            """INSERT INTO calendar_dav_resource (calendar_id, href, user_id, event_id, body, body_of)
               SELECT c.id, $3, $1, $4, $5, $6 FROM calendar c WHERE c.id = $2 AND c.user_id = $1
               ON CONFLICT (calendar_id, href) DO UPDATE
                  SET event_id = EXCLUDED.event_id, body = EXCLUDED.body, body_of = EXCLUDED.body_of""",
            user_id, calendar_id, href, event_id, body, body_of,
        )

    async def bodies(self, user_id: int, event_ids: Sequence[int]) -> dict[int, tuple[bytes, datetime]]:
        """The bytes clients sent for these events, with the event version each belongs to."""
        if not event_ids:
            return {}
        rows = await self.db.fetch(
            """SELECT event_id, body, body_of FROM calendar_dav_resource
                WHERE user_id = $1 AND event_id = ANY($2::bigint[]) AND body IS NOT NULL""",
            user_id, list(dict.fromkeys(event_ids)),
        )
        return {int(r["event_id"]): (bytes(r["body"]), r["body_of"]) for r in rows}

    async def watermarks(self, user_id: int, calendar_ids: Sequence[int]) -> dict[int, int]:
        """Each calendar's newest change sequence (0 for one nothing happened in yet)."""
        rows = await under_share_lock(self.db, "calendar_change", lambda: self.db.fetch(
            """SELECT c.id, coalesce((SELECT max(x.sequence) FROM calendar_change x
                                       WHERE x.calendar_id = c.id AND x.user_id = $1), 0) AS sequence
                 FROM calendar c WHERE c.user_id = $1 AND c.id = ANY($2::int[])""",
            user_id, list(calendar_ids),
        ))
        return {int(r["id"]): int(r["sequence"]) for r in rows}

    async def changed_since(self, user_id: int, calendar_id: int, after: int, upto: int) -> list[ChangedEvent]:
        """The events whose rows changed in the calendar between two sequences, once each, latest change last."""
        rows = await self.db.fetch(
            """SELECT entity_id, max(sequence) AS sequence FROM calendar_change
                WHERE user_id = $1 AND calendar_id = $2 AND object_type = $3 AND sequence > $4 AND sequence <= $5
                GROUP BY entity_id ORDER BY max(sequence)""",
            user_id, calendar_id, EVENT_KIND, after, upto,
        )
        return [ChangedEvent(int(r["entity_id"]), int(r["sequence"])) for r in rows]
