"""Writing calendar events: the row, and the occurrences every calendar view reads.

Each write materialises the event's occurrences from one year before to two years after a reference
instant the caller passes (the mail's arrival for extraction), never from the clock, so a backfill
writes what the live path wrote. At most 1,000 occurrences per event.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from plmail.calendar.extraction.claims import DEDUP_KEY_VERSION, nominal_end
from plmail.calendar.jscalendar import JsonObject, local_datetime, parse_local_datetime
from plmail.calendar.occurrences import DEFAULT_LIMIT, ExpansionBudget, expand_occurrences, off_the_loop
from plmail.calendar.repos.events import CalendarEventRepository, OccurrenceRow
from plmail.calendar.sources import EventSource, written_confidence, written_status
from plmail.calendar.timezones import zone
from plmail.domain.calendar import EventKind, EventStatus, EventValues, StoredEvent
from plmail.domain.errors import NotFoundError, ValidationError

RULES = "recurrenceRules"
OVERRIDES = "recurrenceOverrides"
EXCLUDED = "excluded"
# Set by the writer when the expansion budget cut the series short: the event page says so.
SHORTENED = "plmail:shortened"
MAX_TITLE = 500
MAX_LOCATION = 500
# A provider's broken clock can date mail anywhere; the window around it must still be computable.
_EARLIEST_REFERENCE = datetime(1900, 1, 1, tzinfo=UTC)
_LATEST_REFERENCE = datetime(2200, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class EventDraft:
    """What to write. ``start`` is an aware instant, a date (all-day, ``end`` exclusive), or a naive
    wall-clock time (floating), which is read in the owner's zone when it is stored."""

    uid: str
    start: datetime | date
    end: datetime | date | None = None
    title: str | None = None
    location: str | None = None
    description: str | None = None
    time_zone: str | None = None
    status: EventStatus = EventStatus.CONFIRMED
    kind: EventKind | None = None
    source: EventSource = EventSource.MANUAL
    confidence: int = 100
    sequence: int = 0
    recurrence_rules: tuple[JsonObject, ...] = ()
    recurrence_overrides: Mapping[str, JsonObject] = field(default_factory=dict)
    excluded: tuple[str, ...] = ()  # LocalDateTime recurrence ids, in the event's own frame
    raw_rrule: str | None = None
    organizer: dict[str, Any] | None = None
    attendees: tuple[dict[str, Any], ...] = ()
    my_participation: str | None = None
    dedup_key_version: int = DEDUP_KEY_VERSION


@dataclass(frozen=True, slots=True)
class EventEdit:
    """A person's change to an event: the new title, place and times (aware, or dates when all-day)."""

    title: str | None
    location: str | None
    start: datetime | date
    end: datetime | date


def stored_instant(value: datetime | date, user_zone: str) -> datetime:
    """A claim time as the UTC instant stored: floating times read in the owner's zone (as ``anchored``
    reads them), dates at UTC midnight. A floating series is expanded on its wall clock first and each
    occurrence anchored after, so a weekly 09:00 stays 09:00 across a DST change."""
    if not isinstance(value, datetime):
        return datetime.combine(value, time(), UTC)
    if value.tzinfo is None:
        return value.replace(tzinfo=zone(user_zone) or UTC).astimezone(UTC)
    return value.astimezone(UTC)


def frame_times(values: EventValues, user_zone: str) -> tuple[datetime | date, datetime | date]:
    """The stored start and end back in the frame the event's recurrence is stepped in."""
    if values.is_all_day:
        return values.starts_at.astimezone(UTC).date(), values.ends_at.astimezone(UTC).date()
    if values.is_floating:
        where = zone(user_zone) or UTC
        return (values.starts_at.astimezone(where).replace(tzinfo=None),
                values.ends_at.astimezone(where).replace(tzinfo=None))
    return values.starts_at, values.ends_at


def occurrence_rows(
    values: EventValues, *, user_zone: str, reference: datetime, limit: int = DEFAULT_LIMIT,
    budget: ExpansionBudget | None = None,
) -> list[OccurrenceRow]:
    return expanded_rows(values, user_zone=user_zone, reference=reference, limit=limit, budget=budget)[0]


def expanded_rows(
    values: EventValues, *, user_zone: str, reference: datetime, limit: int = DEFAULT_LIMIT,
    budget: ExpansionBudget | None = None,
) -> tuple[list[OccurrenceRow], bool]:
    """The occurrence rows, and False when the expansion budget stopped the series before the window's end."""
    start, end = frame_times(values, user_zone)
    recurrence = values.recurrence
    rules = [r for r in recurrence.get(RULES, []) if isinstance(r, dict)] if isinstance(recurrence, dict) else []
    overrides = recurrence.get(OVERRIDES) if isinstance(recurrence.get(OVERRIDES), dict) else None
    excluded = [w for w in map(parse_local_datetime, recurrence.get(EXCLUDED, []) or []) if w is not None]
    expansion = expand_occurrences(
        start, end, rules=rules, excluded=excluded, overrides=overrides,
        time_zone=values.time_zone if not values.is_floating else None,
        cancelled=values.status == EventStatus.CANCELLED.value,
        reference=min(max(reference, _EARLIEST_REFERENCE), _LATEST_REFERENCE), limit=limit, budget=budget,
    )
    rows: list[OccurrenceRow] = []
    for occurrence in expansion.occurrences:
        begin = stored_instant(occurrence.start, user_zone)
        finish = stored_instant(occurrence.end, user_zone)
        if finish <= begin:  # a patch cannot make an instance vanish from every view
            finish = begin + (timedelta(days=1) if values.is_all_day else timedelta(hours=1))
        rows.append(OccurrenceRow(stored_instant(occurrence.recurrence_id, user_zone), begin, finish,
                                  occurrence.is_override, occurrence.cancelled, occurrence.title, occurrence.location))
    return rows, expansion.complete


def _expanded_in_worker(
    values: EventValues, user_zone: str, reference: datetime, budget: ExpansionBudget
) -> tuple[list[OccurrenceRow], bool, ExpansionBudget]:
    rows, complete = expanded_rows(values, user_zone=user_zone, reference=reference, budget=budget)
    return rows, complete, budget  # the worker's copy, spent: the caller takes its counts back


async def _expanded(
    values: EventValues, *, user_zone: str, reference: datetime, budget: ExpansionBudget | None
) -> tuple[EventValues, list[OccurrenceRow]]:
    """The rows, expanded in a worker process when the event recurs, so no rule holds the event loop, and
    the values marked when the budget cut the series short (and unmarked when it no longer does)."""
    if not (isinstance(values.recurrence, dict) and values.recurrence.get(RULES)):
        rows, complete = expanded_rows(values, user_zone=user_zone, reference=reference, budget=budget)
    else:
        budget = budget if budget is not None else ExpansionBudget()
        rows, complete, spent = await off_the_loop(_expanded_in_worker, values, user_zone, reference, budget)
        budget.take_counts(spent)
    recurrence = dict(values.recurrence) if isinstance(values.recurrence, dict) else {}
    if complete:
        recurrence.pop(SHORTENED, None)
    else:
        recurrence[SHORTENED] = True
    if recurrence != values.recurrence:
        values = replace(values, recurrence=recurrence)
    return values, rows


def is_shortened(values: EventValues) -> bool:
    return isinstance(values.recurrence, dict) and values.recurrence.get(SHORTENED) is True


def event_values(calendar_id: int, user_id: int, draft: EventDraft, user_zone: str) -> EventValues:
    all_day = not isinstance(draft.start, datetime)
    floating = isinstance(draft.start, datetime) and draft.start.tzinfo is None
    end = nominal_end(draft.start, draft.end)
    recurrence: dict[str, Any] = {}
    if draft.recurrence_rules:
        recurrence[RULES] = [dict(rule) for rule in draft.recurrence_rules]
    if draft.recurrence_overrides:
        recurrence[OVERRIDES] = {key: dict(patch) for key, patch in draft.recurrence_overrides.items()}
    if draft.excluded:
        recurrence[EXCLUDED] = list(dict.fromkeys(draft.excluded))
    starts_at, ends_at = stored_instant(draft.start, user_zone), stored_instant(end, user_zone)
    if ends_at <= starts_at:  # a floating time in a spring-forward gap can land after its own end
        ends_at = starts_at + (timedelta(days=1) if all_day else timedelta(hours=1))
    return EventValues(
        calendar_id=calendar_id, user_id=user_id, uid=draft.uid, sequence=max(draft.sequence, 0),
        starts_at=starts_at, ends_at=ends_at,
        time_zone=None if all_day or floating else draft.time_zone, is_all_day=all_day, is_floating=floating,
        title=draft.title, location=draft.location, description=draft.description,
        status=written_status(draft.source, draft.status).value,
        kind=draft.kind.value if draft.kind else None, source=draft.source.value,
        confidence=written_confidence(draft.source, draft.confidence), recurrence=recurrence, raw_rrule=draft.raw_rrule,
        dedup_key_version=draft.dedup_key_version, my_participation=draft.my_participation,
        organizer=draft.organizer, attendees=[dict(person) for person in draft.attendees],
    )


class CalendarEventWriter:
    """The one place events are written, by extraction and by people alike."""

    def __init__(self, events: CalendarEventRepository) -> None:
        self.events = events

    async def owned(self, user_id: int, event_id: int) -> StoredEvent | None:
        return await self.events.owned(user_id, event_id)

    async def create(
        self, calendar_id: int, user_id: int, draft: EventDraft, *, user_zone: str, reference: datetime,
        budget: ExpansionBudget | None = None,
    ) -> int | None:
        """The new event's id, or None when the calendar already holds the UID (a concurrent writer won).

        ``budget`` is shared by the events of one file or message; without one the event gets its own."""
        values, rows = await _expanded(event_values(calendar_id, user_id, draft, user_zone), user_zone=user_zone,
                                       reference=reference, budget=budget)
        event_id = await self.events.insert(values)
        if event_id is not None:
            await self.events.replace_occurrences(user_id, event_id, rows)
        return event_id

    async def rewrite(self, event: StoredEvent, draft: EventDraft, *, user_zone: str, reference: datetime) -> None:
        await self.store(event.id, event_values(event.calendar_id, event.user_id, draft, user_zone),
                         user_zone=user_zone, reference=reference)

    async def store(self, event_id: int, values: EventValues, *, user_zone: str, reference: datetime,
                    budget: ExpansionBudget | None = None) -> None:
        """Writes the columns and re-materialises. Only a write that restates the event drops instances it
        no longer has (a moved series); a cancellation never comes through here."""
        values, rows = await _expanded(values, user_zone=user_zone, reference=reference, budget=budget)
        await self.events.update(event_id, values)
        await self.events.replace_occurrences(values.user_id, event_id, rows)

    async def cancel(self, event: StoredEvent, *, sequence: int) -> None:
        """A cancel sets a status and never deletes: people want to see that it was called off, and a
        deleted row fights whoever wants it back. Every occurrence is marked, none removed."""
        await self.events.set_status(event.user_id, event.id, EventStatus.CANCELLED.value,
                                     max(sequence, event.sequence))
        await self.events.cancel_occurrences(event.user_id, event.id)

    async def set_people(
        self, event: StoredEvent, attendees: list[dict[str, Any]], my_participation: str | None
    ) -> None:
        await self.events.set_people(event.user_id, event.id, attendees, my_participation)

    async def mark_user_edited(self, user_id: int, event_id: int) -> bool:
        """Set the moment a person edits an extracted event: later mail may know more about the booking,
        but it does not know more than the person."""
        return await self.events.mark_user_edited(user_id, event_id)

    async def edit(
        self, user_id: int, event_id: int, edit: EventEdit, *, user_zone: str, reference: datetime
    ) -> StoredEvent:
        event = await self.events.owned(user_id, event_id)
        if event is None:
            raise NotFoundError("No such event.")
        values = event.values
        if isinstance(edit.start, datetime) == values.is_all_day:
            raise ValidationError("An all-day event takes dates, a timed event takes times.")
        end = nominal_end(edit.start, edit.end)
        old_start, _ = frame_times(values, user_zone)
        new_start: datetime | date = edit.start
        if values.is_floating and isinstance(edit.start, datetime):
            # A floating event stays floating: the wall-clock time the person typed, in their zone.
            new_start = edit.start.astimezone(zone(user_zone) or UTC).replace(tzinfo=None)
            end = end.astimezone(zone(user_zone) or UTC).replace(tzinfo=None) if isinstance(end, datetime) else end
        starts_at, ends_at = stored_instant(new_start, user_zone), stored_instant(end, user_zone)
        if ends_at <= starts_at:
            ends_at = starts_at + (timedelta(days=1) if values.is_all_day else timedelta(hours=1))
        changed = replace(
            values,
            title=(edit.title or "").strip()[:MAX_TITLE] or None,
            location=(edit.location or "").strip()[:MAX_LOCATION] or None,
            starts_at=starts_at,
            ends_at=ends_at,
            recurrence=shift_recurrence(values, old_start, new_start),
        )
        async with self.events.db.transaction():  # an edit that is not marked as one could be overwritten
            await self.store(event_id, changed, user_zone=user_zone, reference=reference)
            await self.mark_user_edited(user_id, event_id)
        edited = await self.events.owned(user_id, event_id)
        assert edited is not None
        return edited


def shift_recurrence(values: EventValues, old_start: datetime | date, new_start: datetime | date) -> dict[str, Any]:
    """Moving a series moves the recurrence ids its overrides and exclusions are keyed by, by the same
    wall-clock distance; otherwise they would name instances the series no longer has."""
    recurrence = dict(values.recurrence)
    if not recurrence or not values.recurrence.get(RULES):
        return recurrence
    delta = _wall(new_start, values) - _wall(old_start, values)
    if not delta:
        return recurrence

    def moved(key: str) -> str:
        wall = parse_local_datetime(key)
        return local_datetime(wall + delta) if wall is not None else key

    overrides = recurrence.get(OVERRIDES)
    if isinstance(overrides, dict):
        recurrence[OVERRIDES] = {moved(key): patch for key, patch in overrides.items()}
    excluded = recurrence.get(EXCLUDED)
    if isinstance(excluded, list):
        recurrence[EXCLUDED] = [moved(str(key)) for key in excluded]
    return recurrence


def _wall(value: datetime | date, values: EventValues) -> datetime:
    if not isinstance(value, datetime):
        return datetime.combine(value, time())
    if value.tzinfo is not None:
        where = zone(values.time_zone) if values.time_zone else None
        value = value.astimezone(where or UTC)
    return value.replace(tzinfo=None)
