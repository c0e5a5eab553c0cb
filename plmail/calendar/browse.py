"""What the calendar pages read: a day, a week, a month or an agenda in the reader's zone, and one event.

Views read materialised occurrences only, never rules, so what a range shows is exactly what was
written. An all-day date is the same date in every zone; a timed occurrence shows on each local day
it touches.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from enum import StrEnum

from plmail.calendar.display import covered_days, reader_zone
from plmail.calendar.repos.events import CalendarEventRepository, OccurrenceRow, RangeEntry
from plmail.calendar.repos.links import EventSourceLinkRepository, ProvenanceRow
from plmail.calendar.repos.objects import CalendarRepository, CalendarRow
from plmail.calendar.resolver import DEFAULT_NAME
from plmail.db.repos.accounts import AccountRepository
from plmail.domain.calendar import StoredEvent
from plmail.domain.errors import NotFoundError

MAX_ENTRIES = 2_000
AGENDA_DAYS = 30
SHOWN_OCCURRENCES = 100
MAX_EXPORT = 20_000


class CalendarView(StrEnum):
    DAY = "day"
    WEEK = "week"
    MONTH = "month"
    AGENDA = "agenda"


@dataclass(frozen=True, slots=True)
class DayEntries:
    day: date
    entries: tuple[RangeEntry, ...]
    in_range: bool  # False for the days of neighbouring months a month grid shows


@dataclass(frozen=True, slots=True)
class CalendarWindow:
    view: CalendarView
    anchor: date
    first: date
    last: date  # inclusive
    previous: date
    following: date
    days: tuple[DayEntries, ...]

    @property
    def weeks(self) -> tuple[tuple[DayEntries, ...], ...]:
        return tuple(self.days[i : i + 7] for i in range(0, len(self.days), 7))


@dataclass(frozen=True, slots=True)
class EventDetail:
    event: StoredEvent
    calendar: CalendarRow | None
    occurrences: tuple[OccurrenceRow, ...]
    occurrence_count: int
    provenance: tuple[ProvenanceRow, ...]


def _month_start(day: date) -> date:
    return day.replace(day=1)


def _next_month(day: date) -> date:
    return (_month_start(day) + timedelta(days=32)).replace(day=1)


def window_bounds(view: CalendarView, anchor: date) -> tuple[date, date, date, date]:
    """(first day, last day, previous anchor, next anchor) of a view around ``anchor``; weeks start on Monday."""
    if view is CalendarView.DAY:
        return anchor, anchor, anchor - timedelta(days=1), anchor + timedelta(days=1)
    if view is CalendarView.WEEK:
        first = anchor - timedelta(days=anchor.weekday())
        return first, first + timedelta(days=6), anchor - timedelta(days=7), anchor + timedelta(days=7)
    if view is CalendarView.MONTH:
        start, following = _month_start(anchor), _next_month(anchor)
        first = start - timedelta(days=start.weekday())
        end = following - timedelta(days=1)
        last = end + timedelta(days=6 - end.weekday())
        return first, last, _month_start(start - timedelta(days=1)), following
    return anchor, anchor + timedelta(days=AGENDA_DAYS - 1), anchor - timedelta(days=AGENDA_DAYS), \
        anchor + timedelta(days=AGENDA_DAYS)


class CalendarBrowser:
    def __init__(
        self,
        calendars: CalendarRepository,
        events: CalendarEventRepository,
        links: EventSourceLinkRepository,
        accounts: AccountRepository,
    ) -> None:
        self.calendars = calendars
        self.events = events
        self.links = links
        self.accounts = accounts

    async def provision(self, user_id: int) -> list[CalendarRow]:
        """The default calendar and one per account (the targets ``calendar.target_id`` may name)."""
        await self.calendars.ensure_default(user_id, DEFAULT_NAME)
        for account in await self.accounts.for_user(user_id):
            await self.calendars.ensure_for_account(user_id, account.id, account.name or account.email)
        return await self.calendars.for_user(user_id)

    async def window(self, user_id: int, user_zone: str, view: CalendarView, anchor: date) -> CalendarWindow:
        where = reader_zone(user_zone)
        first, last, previous, following = window_bounds(view, anchor)
        # A day early and late: an all-day date sits at UTC midnight, which is another local day elsewhere.
        start = datetime.combine(first - timedelta(days=1), time(), where).astimezone(UTC)
        end = datetime.combine(last + timedelta(days=2), time(), where).astimezone(UTC)
        entries = await self.events.between(user_id, start, end, limit=MAX_ENTRIES)
        by_day: dict[date, list[RangeEntry]] = {}
        for entry in entries:
            begin, finish = covered_days(entry.starts_at, entry.ends_at, all_day=entry.all_day, where=where)
            day = max(begin, first)
            while day <= min(finish, last):
                by_day.setdefault(day, []).append(entry)
                day += timedelta(days=1)
        days: list[DayEntries] = []
        day = first
        while day <= last:
            listed = sorted(by_day.get(day, []), key=lambda e: (not e.all_day, e.starts_at, e.event_id))
            in_range = day.month == anchor.month if view is CalendarView.MONTH else True
            if view is not CalendarView.AGENDA or listed:
                days.append(DayEntries(day, tuple(listed), in_range))
            day += timedelta(days=1)
        return CalendarWindow(view, anchor, first, last, previous, following, tuple(days))

    async def calendar_with_events(self, user_id: int, calendar_id: int) -> tuple[CalendarRow, list[StoredEvent]]:
        """One of the user's calendars and every event in it (an export)."""
        calendar = await self.calendars.owned(user_id, calendar_id)
        if calendar is None:
            raise NotFoundError("No such calendar.")
        return calendar, await self.events.in_calendar(user_id, calendar_id, limit=MAX_EXPORT)

    async def occurrences(self, user_id: int, event_id: int) -> list[OccurrenceRow]:
        """Every materialised occurrence of one of the user's events (a drag moves one of them)."""
        return await self.events.occurrences(user_id, event_id)

    async def detail(self, user_id: int, event_id: int) -> EventDetail:
        event = await self.events.owned(user_id, event_id)
        if event is None:
            raise NotFoundError("No such event.")
        occurrences = await self.events.occurrences(user_id, event_id)
        return EventDetail(
            event=event,
            calendar=await self.calendars.owned(user_id, event.calendar_id),
            occurrences=tuple(occurrences[:SHOWN_OCCURRENCES]),
            occurrence_count=len(occurrences),
            provenance=tuple(await self.links.provenance(user_id, event_id)),
        )
