"""The calendar as iCalendar files: an event or a whole calendar out (no METHOD: it is a copy, not an
iTIP message), and a file in, with what it added, updated and skipped.

The export writes what the calendar pages show: a refused rule (kept only verbatim) is not written as
an RRULE, because plmail shows that event once; overrides become RECURRENCE-ID components, exclusions
EXDATEs, cancellations STATUS:CANCELLED. Times keep the zone the event has (with its VTIMEZONE), all-day
events are dates, floating times stay floating, and the rest are UTC.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

from icalendar import Calendar, Event
from icalendar.prop import vRecur

from plmail.calendar.drafts import draft_from_claim
from plmail.calendar.extraction import ExtractedEvent, ItipMethod, parse_ics
from plmail.calendar.jscalendar import parse_duration, parse_local_datetime
from plmail.calendar.occurrences import ExpansionBudget, off_the_loop
from plmail.calendar.recurrence import jscalendar_to_rrule
from plmail.calendar.repos.events import CalendarEventRepository
from plmail.calendar.repos.objects import CalendarRepository
from plmail.calendar.sources import EventSource
from plmail.calendar.timezones import zone
from plmail.calendar.writer import (
    EXCLUDED,
    OVERRIDES,
    RULES,
    SHORTENED,
    CalendarEventWriter,
    event_values,
    stored_instant,
)
from plmail.db.database import Database
from plmail.domain.calendar import EventValues, StoredEvent
from plmail.domain.errors import ValidationError

log = logging.getLogger(__name__)

PRODID = "-//plmail//calendar//EN"
MAX_IMPORT_BYTES = 4 * 1024 * 1024
STATUS = {"confirmed": "CONFIRMED", "tentative": "TENTATIVE", "cancelled": "CANCELLED"}


def calendar_ics(events: Sequence[StoredEvent], *, name: str, user_zone: str) -> bytes:
    """One VCALENDAR with every event given (a calendar, a feed)."""
    calendar = _calendar(name)
    for event in events:
        for component in event_components(event, user_zone=user_zone):
            calendar.add_component(component)
    calendar.add_missing_timezones()
    return bytes(calendar.to_ical())


def event_ics(event: StoredEvent, *, user_zone: str) -> bytes:
    return calendar_ics([event], name=event.values.title or "Event", user_zone=user_zone)


def _calendar(name: str) -> Calendar:
    calendar = Calendar()
    calendar.add("prodid", PRODID)
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    calendar.add("x-wr-calname", name)
    return calendar


def event_components(event: StoredEvent, *, user_zone: str) -> list[Event]:
    """The event's VEVENT, and one per changed occurrence (RECURRENCE-ID)."""
    values = event.values
    master = _component(event, values.title, values.location, values.status)
    start, end = _frame(values, values.starts_at, user_zone), _frame(values, values.ends_at, user_zone)
    master.add("dtstart", start)
    master.add("dtend", end)
    if values.description:
        master.add("description", values.description)
    recurrence = values.recurrence if isinstance(values.recurrence, dict) else {}
    rules = [rule for rule in recurrence.get(RULES, []) if isinstance(rule, dict)]
    components = [master]
    for rule in rules:
        text = jscalendar_to_rrule(rule, time_zone=values.time_zone, all_day=values.is_all_day,
                                   floating=values.is_floating)
        if text:
            master.add("rrule", vRecur.from_ical(text))
    stored_overrides = recurrence.get(OVERRIDES)
    overrides: dict[str, Any] = stored_overrides if isinstance(stored_overrides, dict) else {}
    excluded = [key for key in recurrence.get(EXCLUDED, []) or [] if isinstance(key, str)]
    excluded += [key for key, patch in overrides.items() if isinstance(patch, dict) and patch.get("excluded") is True]
    for key in dict.fromkeys(excluded):
        wall = parse_local_datetime(key)
        if wall is not None and rules:
            master.add("exdate", _wall_value(values, wall))
    length = values.ends_at - values.starts_at
    for key, patch in overrides.items():
        wall = parse_local_datetime(key)
        if wall is None or not isinstance(patch, dict) or patch.get("excluded") is True:
            continue
        components.append(_instance(event, wall, patch, length))
    return components


def _component(event: StoredEvent, title: str | None, location: str | None, status: str) -> Event:
    component = Event()
    component.add("uid", event.uid)
    component.add("dtstamp", event.updated_at.astimezone(UTC))
    component.add("created", event.created_at.astimezone(UTC))
    component.add("last-modified", event.updated_at.astimezone(UTC))
    component.add("sequence", event.sequence)
    component.add("summary", title or "")
    if location:
        component.add("location", location)
    component.add("status", STATUS.get(status, "CONFIRMED"))
    return component


def _instance(event: StoredEvent, wall: datetime, patch: Mapping[str, Any], length: timedelta) -> Event:
    values = event.values
    title = patch.get("title") if isinstance(patch.get("title"), str) else values.title
    places = patch.get("locations")
    location = values.location
    if isinstance(places, dict):
        location = next((p.get("name") for p in places.values() if isinstance(p, dict) and p.get("name")), location)
    status = "cancelled" if patch.get("status") == "cancelled" or values.status == "cancelled" else values.status
    component = _component(event, title, location, status)
    component.add("recurrence-id", _wall_value(values, wall))
    moved = parse_local_datetime(patch.get("start")) or wall
    own = parse_duration(patch.get("duration"))
    span = own if own is not None and own > timedelta(0) else length
    begin = _wall_value(values, moved)
    component.add("dtstart", begin)
    if values.is_all_day:
        component.add("dtend", begin + timedelta(days=max(span.days, 1)))
    else:
        component.add("dtend", begin + span)
    return component


def _frame(values: EventValues, instant: datetime, user_zone: str) -> datetime | date:
    """A stored instant as the event's own kind of time: a date, a floating wall time, zoned, or UTC."""
    if values.is_all_day:
        return instant.astimezone(UTC).date()
    if values.is_floating:
        return instant.astimezone(zone(user_zone) or UTC).replace(tzinfo=None)
    where = zone(values.time_zone) if values.time_zone else None
    return instant.astimezone(where or UTC)


def _wall_value(values: EventValues, wall: datetime) -> datetime | date:
    """A recurrence id or override start (a wall time in the event's frame) as iCalendar writes it."""
    if values.is_all_day:
        return wall.date()
    if values.is_floating:
        return wall
    where = zone(values.time_zone) if values.time_zone else None
    return wall.replace(tzinfo=where or UTC)


@dataclass(slots=True)
class ImportReport:
    added: int = 0
    updated: int = 0
    skipped: int = 0
    reasons: list[str] = field(default_factory=list)  # one line per skipped object
    shortened: list[str] = field(default_factory=list)  # series kept with only their first occurrences


class IcsImporter:
    """A file's events into one of the user's calendars. The UID is the identity (per calendar, as for
    mail): a UID already there is updated unless a person edited it since or the file's copy is older;
    an identical copy, a reply or a changed instance without its series is skipped with a reason."""

    def __init__(self, db: Database, calendars: CalendarRepository, events: CalendarEventRepository,
                 writer: CalendarEventWriter) -> None:
        self.db = db
        self.calendars = calendars
        self.events = events
        self.writer = writer

    async def run(self, user_id: int, calendar_id: int, data: bytes, *, user_zone: str) -> ImportReport:
        if len(data) > MAX_IMPORT_BYTES:
            raise ValidationError("The file is larger than 4 MB.", field="file")
        if await self.calendars.owned(user_id, calendar_id) is None:
            raise ValidationError("Choose one of your calendars.", field="calendar_id")
        # Parsing (VTIMEZONE rules included) and expanding run in worker processes, on one budget for the file.
        parsed = await off_the_loop(parse_ics, data)
        if not parsed.events and b"BEGIN:V" not in data.upper():
            raise ValidationError("This is not an iCalendar (.ics) file.", field="file")
        report = ImportReport(skipped=len(parsed.skipped), reasons=list(parsed.skipped))
        budget = ExpansionBudget()
        async with self.db.transaction():
            for claim in parsed.events:
                reason = await self._one(user_id, calendar_id, claim, user_zone, report, budget)
                if reason is not None:
                    report.skipped += 1
                    report.reasons.append(f"{claim.uid}: {reason}")
        return report

    async def _one(self, user_id: int, calendar_id: int, claim: ExtractedEvent, user_zone: str,
                   report: ImportReport, budget: ExpansionBudget) -> str | None:
        shortened = budget.shortened
        reason = await self._write(user_id, calendar_id, claim, user_zone, report, budget)
        if budget.shortened > shortened:
            report.shortened.append(claim.uid)
        return reason

    async def _write(self, user_id: int, calendar_id: int, claim: ExtractedEvent, user_zone: str,
                     report: ImportReport, budget: ExpansionBudget) -> str | None:
        if claim.method is ItipMethod.REPLY:
            return "a reply carries answers, not an event"
        if claim.start is None:
            return "no start"
        existing = next((e for e in await self.events.by_uid(user_id, claim.uid) if e.calendar_id == calendar_id),
                        None)
        if claim.instance_only:
            if existing is None:
                return "changed occurrences of a series this calendar does not have"
            recurrence = dict(existing.values.recurrence)
            stored = recurrence.get(OVERRIDES)
            merged = {**(stored if isinstance(stored, dict) else {}), **claim.recurrence_overrides}
            if merged == stored:
                return "unchanged"
            recurrence[OVERRIDES] = merged
            await self.writer.store(existing.id, replace(existing.values, recurrence=recurrence),
                                    user_zone=user_zone, reference=existing.values.starts_at, budget=budget)
            report.updated += 1
            return None
        draft = replace(draft_from_claim(claim, EventSource.MANUAL, ()), confidence=100, my_participation=None)
        reference = stored_instant(claim.start, user_zone)
        if existing is None:
            created = await self.writer.create(calendar_id, user_id, draft, user_zone=user_zone, reference=reference,
                                               budget=budget)
            if created is None:
                return "could not be written"
            report.added += 1
            return None
        if existing.is_user_edited:
            return "you edited this event in plmail"
        if claim.sequence < existing.sequence:
            return "the calendar holds a newer revision"
        # The event keeps its source, and with it what the source allows: a file over a model's guess is still
        # the guess's event, capped and unconfirmed until a person confirms it (sources.py).
        kept = EventSource._value2member_map_.get(existing.values.source)
        as_source = kept if isinstance(kept, EventSource) else EventSource.LLM  # an unknown source is untrusted
        fresh = replace(event_values(calendar_id, user_id, replace(draft, source=as_source), user_zone),
                        source=existing.values.source)
        if _same(fresh, existing.values):
            return "unchanged"
        await self.writer.store(existing.id, fresh, user_zone=user_zone, reference=reference, budget=budget)
        report.updated += 1
        return None


def _same(fresh: EventValues, stored: EventValues) -> bool:
    keep = ("source", "confidence", "my_participation", "dedup_key_version", "kind")
    recurrence = {key: value for key, value in stored.recurrence.items() if key != SHORTENED}
    return replace(fresh, **{name: getattr(stored, name) for name in keep}) == replace(stored, recurrence=recurrence)
