"""Calendar events and their materialised occurrences, always reached through the owning user."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from plmail.db.database import Database
from plmail.domain.calendar import EventValues, StoredEvent

_EVENT_COLUMNS = (
    "calendar_id", "user_id", "uid", "sequence", "starts_at", "ends_at", "time_zone", "is_all_day", "is_floating",
    "title", "location", "description", "status", "kind", "source", "confidence", "recurrence", "raw_rrule",
    "dedup_key_version", "my_participation", "organizer", "attendees",
)
_JSON_COLUMNS = frozenset({"recurrence", "organizer", "attendees"})
# Parameters in an INSERT … SELECT are not typed by their target columns, so each is cast by hand.
_TYPES = {
    "calendar_id": "int", "user_id": "int", "uid": "text", "sequence": "int", "starts_at": "timestamptz",
    "ends_at": "timestamptz", "time_zone": "text", "is_all_day": "boolean", "is_floating": "boolean", "title": "text",
    "location": "text", "description": "text", "status": "text", "kind": "text", "source": "text",
    "confidence": "smallint", "recurrence": "jsonb", "raw_rrule": "text", "dedup_key_version": "smallint",
    "my_participation": "text", "organizer": "jsonb", "attendees": "jsonb",
}
_SELECT = "SELECT id, is_user_edited, created_at, updated_at, " + ", ".join(_EVENT_COLUMNS) + " FROM calendar_event"


@dataclass(frozen=True, slots=True)
class OccurrenceRow:
    recurrence_id: datetime
    starts_at: datetime
    ends_at: datetime
    is_override: bool
    cancelled: bool
    title: str | None = None  # an override's own title; None: the event's
    location: str | None = None


@dataclass(frozen=True, slots=True)
class RangeEntry:
    """One occurrence in a calendar view, with what the view shows of its event."""

    event_id: int
    title: str | None
    location: str | None
    status: str
    kind: str | None
    all_day: bool
    starts_at: datetime
    ends_at: datetime
    cancelled: bool  # the occurrence, or the whole event
    recurrence_id: datetime | None = None  # set for an instance of a series
    source: str = "manual"
    calendar_id: int | None = None  # the calendar whose colour the views draw it in


def _json(value: object) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _event(row: asyncpg.Record) -> StoredEvent:
    fields = {column: _json(row[column]) if column in _JSON_COLUMNS else row[column] for column in _EVENT_COLUMNS}
    fields["recurrence"] = fields["recurrence"] if isinstance(fields["recurrence"], dict) else {}
    fields["attendees"] = fields["attendees"] if isinstance(fields["attendees"], list) else []
    fields["organizer"] = fields["organizer"] if isinstance(fields["organizer"], dict) else None
    return StoredEvent(row["id"], EventValues(**fields), row["is_user_edited"], row["created_at"], row["updated_at"])


def _event_row(values: EventValues) -> list[Any]:
    """Every column a write sets, in _EVENT_COLUMNS order, JSON columns serialised."""
    row = []
    for column in _EVENT_COLUMNS:
        value = getattr(values, column)
        row.append(json.dumps(value) if column in _JSON_COLUMNS else value)
    return row


class CalendarEventRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def by_uid(self, user_id: int, uid: str) -> list[StoredEvent]:
        """Every copy of one UID the user holds, whichever calendar it is in; inside a transaction this
        includes rows inserted earlier in it, which is what makes a batch's repeats find each other."""
        rows = await self.db.fetch(f"{_SELECT} WHERE user_id = $1 AND uid = $2 ORDER BY id", user_id, uid)
        return [_event(r) for r in rows]

    async def owned(self, user_id: int, event_id: int) -> StoredEvent | None:
        row = await self.db.fetchrow(f"{_SELECT} WHERE id = $1 AND user_id = $2", event_id, user_id)
        return _event(row) if row else None

    async def in_calendar(self, user_id: int, calendar_id: int, *, limit: int) -> list[StoredEvent]:
        """Every event of one of the user's calendars, oldest start first (a feed, an export)."""
        rows = await self.db.fetch(
            f"{_SELECT} WHERE user_id = $1 AND calendar_id = $2 ORDER BY starts_at, id LIMIT $3",
            user_id, calendar_id, limit,
        )
        return [_event(r) for r in rows]

    async def for_user(self, user_id: int, *, calendar_ids: Sequence[int] | None = None, limit: int
                       ) -> list[StoredEvent]:
        rows = await self.db.fetch(
            f"""{_SELECT} WHERE user_id = $1 AND ($2::int[] IS NULL OR calendar_id = ANY($2::int[]))
                ORDER BY starts_at, id LIMIT $3""",
            user_id, list(calendar_ids) if calendar_ids is not None else None, limit,
        )
        return [_event(r) for r in rows]

    async def overlapping(self, user_id: int, start: datetime | None, end: datetime | None,
                          calendar_ids: Sequence[int] | None, *, limit: int) -> list[int]:
        """Ids of the user's events with an occurrence overlapping [start, end) (either side open when None),
        by their first such occurrence's start."""
        rows = await self.db.fetch(
            """SELECT e.id, min(o.starts_at) AS first FROM calendar_event e
                 JOIN calendar_event_occurrence o ON o.event_id = e.id
                WHERE e.user_id = $1 AND ($4::int[] IS NULL OR e.calendar_id = ANY($4::int[]))
                  AND ($3::timestamptz IS NULL OR o.starts_at < $3) AND ($2::timestamptz IS NULL OR o.ends_at > $2)
                GROUP BY e.id ORDER BY first, e.id LIMIT $5""",
            user_id, start, end, list(calendar_ids) if calendar_ids is not None else None, limit,
        )
        return [int(r["id"]) for r in rows]

    async def by_ids(self, user_id: int, event_ids: Sequence[int]) -> dict[int, StoredEvent]:
        if not event_ids:
            return {}
        rows = await self.db.fetch(
            f"{_SELECT} WHERE user_id = $1 AND id = ANY($2::bigint[])", user_id, list(dict.fromkeys(event_ids))
        )
        return {r["id"]: _event(r) for r in rows}

    async def insert(self, values: EventValues) -> int | None:
        """The new id, or None when (calendar, uid) exists already: the unique index is the last line of
        defence against a concurrent batch, and the caller looks the winner up instead."""
        placeholders = ", ".join(f"${i}::{_TYPES[column]}" for i, column in enumerate(_EVENT_COLUMNS, 1))
        created = await self.db.fetchval(
            f"""INSERT INTO calendar_event ({", ".join(_EVENT_COLUMNS)}, is_user_edited, created_at, updated_at)
                SELECT {placeholders}, false, now(), now()
                 WHERE EXISTS (SELECT 1 FROM calendar c WHERE c.id = $1 AND c.user_id = $2)
                ON CONFLICT (calendar_id, uid) DO NOTHING RETURNING id""",
            *_event_row(values),
        )
        return int(created) if created is not None else None

    async def update(self, event_id: int, values: EventValues) -> None:
        """Rewrites what mail or a person said; the calendar and the owner never change."""
        writable = [c for c in _EVENT_COLUMNS if c not in ("calendar_id", "user_id")]
        sets = ", ".join(f"{column} = ${i}::{_TYPES[column]}" for i, column in enumerate(writable, 3))
        row = _event_row(values)
        await self.db.execute(
            f"UPDATE calendar_event SET {sets}, updated_at = now() WHERE id = $1 AND user_id = $2",
            event_id, values.user_id, *row[2:],
        )

    async def move(self, user_id: int, event_id: int, calendar_id: int) -> None:
        """Into another of the owner's calendars, occurrences along (they carry the calendar for the range index)."""
        await self.db.execute(
            """WITH moved AS (UPDATE calendar_event e SET calendar_id = c.id, updated_at = now()
                                FROM calendar c
                               WHERE e.id = $1 AND e.user_id = $2 AND c.id = $3 AND c.user_id = $2
                           RETURNING e.id, c.id AS calendar_id)
               UPDATE calendar_event_occurrence o SET calendar_id = moved.calendar_id
                 FROM moved WHERE o.event_id = moved.id""",
            event_id, user_id, calendar_id,
        )

    async def set_status(self, user_id: int, event_id: int, status: str, sequence: int) -> None:
        await self.db.execute(
            "UPDATE calendar_event SET status = $3, sequence = $4, updated_at = now() WHERE id = $1 AND user_id = $2",
            event_id, user_id, status, sequence,
        )

    async def set_people(
        self, user_id: int, event_id: int, attendees: list[dict[str, Any]], my_participation: str | None
    ) -> None:
        await self.db.execute(
            """UPDATE calendar_event SET attendees = $3::jsonb, my_participation = $4, updated_at = now()
                WHERE id = $1 AND user_id = $2""",
            event_id, user_id, json.dumps(attendees), my_participation,
        )

    async def mark_user_edited(self, user_id: int, event_id: int) -> bool:
        status = await self.db.execute(
            "UPDATE calendar_event SET is_user_edited = true, updated_at = now() WHERE id = $1 AND user_id = $2",
            event_id, user_id,
        )
        return status.endswith(" 1")

    async def delete(self, user_id: int, event_id: int) -> bool:
        status = await self.db.execute("DELETE FROM calendar_event WHERE id = $1 AND user_id = $2", event_id, user_id)
        return status.endswith(" 1")

    async def replace_occurrences(self, user_id: int, event_id: int, rows: Sequence[OccurrenceRow]) -> None:
        """Upsert the instances a write produced and drop the ones it no longer has (a moved series).
        Raw SQL because one statement per occurrence would make a long series a thousand round trips."""
        await self.db.execute(
            """WITH owned AS (SELECT id, calendar_id FROM calendar_event WHERE id = $1 AND user_id = $2),
                    fresh AS (SELECT * FROM unnest($3::timestamptz[], $4::timestamptz[], $5::timestamptz[],
                                                   $6::boolean[], $7::boolean[], $8::text[], $9::text[])
                                       AS x(rid, s, e, o, c, t, l)),
                    gone AS (DELETE FROM calendar_event_occurrence d USING owned
                              WHERE d.event_id = owned.id AND d.recurrence_id <> ALL($3::timestamptz[]))
               INSERT INTO calendar_event_occurrence
                      (event_id, calendar_id, recurrence_id, starts_at, ends_at, is_override, cancelled, title,
                       location)
               SELECT owned.id, owned.calendar_id, fresh.rid, fresh.s, fresh.e, fresh.o, fresh.c, fresh.t, fresh.l
                 FROM owned, fresh
               ON CONFLICT (event_id, recurrence_id) DO UPDATE
                  SET starts_at = EXCLUDED.starts_at, ends_at = EXCLUDED.ends_at,
                      is_override = EXCLUDED.is_override, cancelled = EXCLUDED.cancelled,
                      title = EXCLUDED.title, location = EXCLUDED.location""",
            event_id, user_id, [r.recurrence_id for r in rows], [r.starts_at for r in rows],
            [r.ends_at for r in rows], [r.is_override for r in rows], [r.cancelled for r in rows],
            [r.title for r in rows], [r.location for r in rows],
        )

    async def cancel_occurrences(self, user_id: int, event_id: int) -> int:
        status = await self.db.execute(
            """UPDATE calendar_event_occurrence o SET cancelled = true
                 FROM calendar_event e
                WHERE o.event_id = e.id AND e.id = $1 AND e.user_id = $2 AND NOT o.cancelled""",
            event_id, user_id,
        )
        return int(status.rsplit(" ", 1)[-1])

    async def occurrences(self, user_id: int, event_id: int) -> list[OccurrenceRow]:
        rows = await self.db.fetch(
            """SELECT o.recurrence_id, o.starts_at, o.ends_at, o.is_override, o.cancelled, o.title, o.location
                 FROM calendar_event_occurrence o JOIN calendar_event e ON e.id = o.event_id
                WHERE e.id = $1 AND e.user_id = $2 ORDER BY o.recurrence_id""",
            event_id, user_id,
        )
        return [OccurrenceRow(r["recurrence_id"], r["starts_at"], r["ends_at"], r["is_override"], r["cancelled"],
                              r["title"], r["location"]) for r in rows]

    async def between(self, user_id: int, start: datetime, end: datetime, *, limit: int) -> list[RangeEntry]:
        """Occurrences overlapping [start, end) in the user's calendars, through the per-calendar span index;
        invitations the user declined are not on the calendar."""
        rows = await self.db.fetch(
            """SELECT e.id, coalesce(o.title, e.title) AS title, coalesce(o.location, e.location) AS location,
                      e.status, e.kind, e.is_all_day, o.starts_at, o.ends_at,
                      o.cancelled OR e.status = 'cancelled' AS cancelled, e.source, o.calendar_id,
                      CASE WHEN e.recurrence ? 'recurrenceRules' OR e.recurrence ? 'recurrenceOverrides'
                           THEN o.recurrence_id END AS recurrence_id
                 FROM calendar c
                 JOIN calendar_event_occurrence o ON o.calendar_id = c.id
                 JOIN calendar_event e ON e.id = o.event_id
                WHERE c.user_id = $1 AND e.user_id = $1
                  AND tstzrange(o.starts_at, o.ends_at, '[)') && tstzrange($2, $3, '[)')
                  AND e.my_participation IS DISTINCT FROM 'declined' -- an invitation the user said No to
                ORDER BY o.starts_at, e.id LIMIT $4""",
            user_id, start, end, limit,
        )
        return [RangeEntry(r["id"], r["title"], r["location"], r["status"], r["kind"], r["is_all_day"],
                           r["starts_at"], r["ends_at"], r["cancelled"], r["recurrence_id"], r["source"],
                           r["calendar_id"]) for r in rows]
