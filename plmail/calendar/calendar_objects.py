"""The calendar as JMAP for Calendars sees it: calendars and JSCalendar events (RFC 8984), their states and
changes, a range query, and the participation reply a client sends through CalendarEvent/set.

The objects are rendered here, in the calendar's own vocabulary, so JMAP only translates the protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from plmail.calendar.extraction import Participant
from plmail.calendar.extraction.claims import participants_object
from plmail.calendar.jscalendar import format_duration, local_datetime
from plmail.calendar.repos.changes import CalendarChangeRepository
from plmail.calendar.repos.events import CalendarEventRepository
from plmail.calendar.repos.objects import CalendarRepository, CalendarRow
from plmail.calendar.resolver import DEFAULT_NAME
from plmail.calendar.timezones import zone
from plmail.calendar.writer import EXCLUDED, OVERRIDES, RULES, frame_times
from plmail.db.repos.accounts import AccountRepository
from plmail.domain.calendar import StoredEvent
from plmail.domain.errors import UnanswerableError
from plmail.mail.public import ChangeSet, collect_changes, parse_state

CALENDAR = "Calendar"
CALENDAR_EVENT = "CalendarEvent"
MAX_QUERY = 5_000
_COLORS = {"blue": "#3465a4", "teal": "#2aa198", "green": "#4e9a06", "red": "#cc0000", "orange": "#f57900"}


def calendar_color(name: str) -> str:
    """A calendar's colour as #rrggbb: the named ones the pages use, or the value stored."""
    return _COLORS.get(name, name)


def utc_text(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def calendar_object(row: CalendarRow) -> dict[str, Any]:
    """A Calendar: the user's own, read-only over JMAP for now (events come from mail and the web)."""
    return {
        "id": str(row.id), "name": row.name or DEFAULT_NAME, "description": None,
        "color": calendar_color(row.color), "sortOrder": 0 if row.is_default else 1,
        "isSubscribed": True, "isVisible": True, "isDefault": row.is_default, "includeInAvailability": "all",
        "timeZone": row.time_zone, "shareWith": None,
        "myRights": {"mayReadFreeBusy": True, "mayReadItems": True, "mayWriteAll": False, "mayWriteOwn": False,
                     "mayUpdatePrivate": False, "mayRSVP": True, "mayAdmin": False, "mayDelete": False},
    }


def _person(value: object) -> Participant | None:
    if not isinstance(value, dict):
        return None
    text = {key: value.get(key) if isinstance(value.get(key), str) else None
            for key in ("email", "name", "partstat", "role")}
    return Participant(text["email"], text["name"], text["partstat"], text["role"])


def event_object(event: StoredEvent, *, user_zone: str) -> dict[str, Any]:
    """A CalendarEvent: the stored event as a JSCalendar Event, with its JMAP id and calendar."""
    values = event.values
    start, _ = frame_times(values, user_zone)
    obj: dict[str, Any] = {
        "@type": "Event", "id": str(event.id), "calendarIds": {str(values.calendar_id): True}, "isDraft": False,
        "uid": values.uid, "sequence": values.sequence, "title": values.title or "",
        "description": values.description or "", "status": values.status, "freeBusyStatus": "busy",
        "privacy": "public", "created": utc_text(event.created_at), "updated": utc_text(event.updated_at),
        "utcStart": utc_text(values.starts_at), "utcEnd": utc_text(values.ends_at),
        "showWithoutTime": values.is_all_day,
    }
    if values.is_all_day or values.is_floating:
        obj["start"], obj["timeZone"] = local_datetime(start), None
    else:
        where = zone(values.time_zone) if values.time_zone else None
        obj["start"] = local_datetime(values.starts_at.astimezone(where or UTC))
        obj["timeZone"] = values.time_zone if where is not None else "Etc/UTC"
    obj["duration"] = format_duration(values.ends_at - values.starts_at)
    if values.location:
        obj["locations"] = {"1": {"@type": "Location", "name": values.location}}
    recurrence = values.recurrence if isinstance(values.recurrence, dict) else {}
    rules = recurrence.get(RULES)
    if isinstance(rules, list) and rules:
        obj["recurrenceRules"] = rules
    overrides = dict(recurrence.get(OVERRIDES) or {}) if isinstance(recurrence.get(OVERRIDES), dict) else {}
    for key in recurrence.get(EXCLUDED, []) or []:
        if isinstance(key, str):
            overrides[key] = {"excluded": True}
    if overrides:
        obj["recurrenceOverrides"] = overrides
    attendees = [p for p in map(_person, values.attendees) if p is not None]
    people = participants_object(_person(values.organizer), attendees)
    if people:
        obj["participants"] = people
    return obj


@dataclass(frozen=True, slots=True)
class ParticipationReply:
    """A change a client asks for under ``participants``: whose status, and the new one."""

    event_id: int
    participant_id: str
    participation_status: str | None


class CalendarObjects:
    def __init__(self, calendars: CalendarRepository, events: CalendarEventRepository,
                 changes: CalendarChangeRepository, accounts: AccountRepository) -> None:
        self.calendars = calendars
        self.events = events
        self.changes = changes
        self.accounts = accounts

    async def calendars_of(self, user_id: int) -> list[CalendarRow]:
        await self.calendars.ensure_default(user_id, DEFAULT_NAME)
        for account in await self.accounts.for_user(user_id):
            await self.calendars.ensure_for_account(user_id, account.id, account.name or account.email)
        return await self.calendars.for_user(user_id)

    async def state(self, user_id: int, kind: str) -> str:
        return str(await self.changes.state(user_id, kind))

    async def events_of(self, user_id: int, ids: Sequence[int] | None, *, limit: int) -> list[StoredEvent]:
        if ids is None:
            return await self.events.for_user(user_id, limit=limit)
        found = await self.events.by_ids(user_id, ids)
        return [found[i] for i in ids if i in found]

    async def query(self, user_id: int, *, after: datetime | None, before: datetime | None,
                    calendar_ids: Sequence[int] | None) -> list[int]:
        """Events with an occurrence ending after ``after`` and starting before ``before``, first start first."""
        return await self.events.overlapping(user_id, after, before, calendar_ids, limit=MAX_QUERY)

    async def changes_since(self, user_id: int, kind: str, since_state: object, max_changes: int) -> ChangeSet:
        since = parse_state(since_state)
        current = await self.changes.state(user_id, kind)
        if since > current:
            raise UnanswerableError("This state is newer than the server's.", reason="cannotCalculateChanges")

        async def rows(after: int, upto: int, limit: int) -> list[tuple[int, str, str]]:
            return await self.changes.rows(user_id, kind, after, upto, limit)

        return await collect_changes(rows, since, current, max_changes)
