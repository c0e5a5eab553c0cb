"""The occurrences an event's JSCalendar recurrence produces, expanded in the event's own zone.

Expansion runs on wall-clock times in the event's zone and converts each occurrence to UTC
afterwards, so a weekly 09:00 in Berlin stays 09:00 across the DST change instead of drifting
an hour, as it would if the rule were stepped in UTC. The window is always derived from an
instant the caller passes in, never from the clock: a backfill must materialise what the live
path did.
"""

from __future__ import annotations

import asyncio
import functools
import multiprocessing
import time as clock
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Any, ParamSpec, TypeVar

from dateutil import rrule as du  # type: ignore[import-untyped]

from plmail.calendar.jscalendar import parse_duration, parse_local_datetime
from plmail.calendar.timezones import zone

DEFAULT_LIMIT = 1_000
WINDOW_BEFORE = timedelta(days=365)
WINDOW_AFTER = timedelta(days=2 * 365)
# Rule instances looked at before the window ends; an hourly rule begun in 1900 stops here.
MAX_SCAN = 100_000
# What one event's expansion may spend, and one file's (or message's) together: 783 bytes of RRULE can name
# a million instances, so the rule's own COUNT is no bound. An event past its budget keeps what it had.
EVENT_SECONDS = 0.2
FILE_SECONDS = 3.0
FILE_OCCURRENCES = 50_000
_CHECK_EVERY = 64  # instances between looks at the clock: an event cut by time keeps at least these
# Expansion and parsing run in worker processes: a thread would still take the interpreter lock from the
# event loop every few milliseconds, and three hostile files at once made /healthz wait 300 ms for it.
EXPANSION_WORKERS = 2
_P = ParamSpec("_P")
_R = TypeVar("_R")
_pool: ProcessPoolExecutor | None = None
_MAX_RULES = 16
_MAX_OVERRIDES = 5_000
_MAX_EXCLUDED = 5_000
_SLACK = timedelta(days=1)
_FREQ = {"yearly": du.YEARLY, "monthly": du.MONTHLY, "weekly": du.WEEKLY, "daily": du.DAILY, "hourly": du.HOURLY}
_DAYS = {"mo": du.MO, "tu": du.TU, "we": du.WE, "th": du.TH, "fr": du.FR, "sa": du.SA, "su": du.SU}
_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
# (JSCalendar property, dateutil argument, lowest, highest, zero allowed, negative allowed)
_NUMBERS = (
    ("byMonthDay", "bymonthday", 1, 31, False, True),
    ("byYearDay", "byyearday", 1, 366, False, True),
    ("byWeekNo", "byweekno", 1, 53, False, True),
    ("byHour", "byhour", 0, 23, True, False),
    ("byMinute", "byminute", 0, 59, True, False),
    ("bySecond", "bysecond", 0, 60, True, False),
    ("bySetPosition", "bysetpos", 1, 366, False, True),
)


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One instance: aware UTC for timed events, a date for all-day ones, naive when floating."""

    recurrence_id: datetime | date
    start: datetime | date
    end: datetime | date
    cancelled: bool
    is_override: bool
    title: str | None = None  # this instance's own title, when an override gives one
    location: str | None = None


@dataclass(frozen=True, slots=True)
class Expansion:
    """The occurrences, and whether the expansion ran to the window's end (False: cut by its budget)."""

    occurrences: list[Occurrence]
    complete: bool


class ExpansionBudget:
    """Wall time and occurrences that the events of one file, message or request may spend on recurrence.

    Each event gets at most ``EVENT_SECONDS`` of it; once the whole is spent, later events keep only their
    own start. Not thread-safe: one importer uses it from one worker thread at a time.
    """

    __slots__ = ("_deadline", "_now", "occurrences", "seconds", "shortened")

    def __init__(self, *, seconds: float = FILE_SECONDS, occurrences: int = FILE_OCCURRENCES,
                 now: Callable[[], float] = clock.monotonic) -> None:
        self.seconds = seconds
        self.occurrences = occurrences
        self._now = now
        self._deadline: float | None = None  # the clock starts at the first expansion, not at a worker's start-up
        self.shortened = 0  # events whose series the budget cut short

    def _file_deadline(self) -> float:
        if self._deadline is None:
            self._deadline = self._now() + self.seconds
        return self._deadline

    def event_deadline(self) -> float:
        """The moment one event's expansion must stop by."""
        return min(self._now() + EVENT_SECONDS, self._file_deadline())

    def take_counts(self, spent: ExpansionBudget) -> None:
        """What a copy of this budget spent in a worker process (the clock is the same machine-wide one)."""
        self.occurrences = spent.occurrences
        self.shortened = spent.shortened
        self._deadline = spent._deadline

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)

    def spend(self, occurrences: int) -> None:
        self.occurrences -= occurrences

    @property
    def exhausted(self) -> bool:
        return self.occurrences <= 0 or self._now() >= self._file_deadline()

    def past(self, deadline: float) -> bool:
        return self._now() >= deadline


async def off_the_loop(function: Callable[_P, _R], *args: _P.args, **kwargs: _P.kwargs) -> _R:
    """``function(*args, **kwargs)`` in an expansion worker process (arguments and result are pickled)."""
    global _pool  # one pool per process, started on first use
    if _pool is None:
        _pool = ProcessPoolExecutor(EXPANSION_WORKERS, mp_context=multiprocessing.get_context("forkserver"))
    return await asyncio.get_running_loop().run_in_executor(_pool, functools.partial(function, *args, **kwargs))


def occurrence_window(reference: datetime) -> tuple[datetime, datetime]:
    """One year before to two years after ``reference`` (an aware instant the caller chose)."""
    return reference - WINDOW_BEFORE, reference + WINDOW_AFTER


def materialise_occurrences(
    start: datetime | date,
    end: datetime | date | None = None,
    *,
    duration: timedelta | None = None,
    rules: Sequence[Mapping[str, object]] = (),
    excluded: Iterable[datetime | date] = (),
    overrides: Mapping[str, object] | None = None,
    time_zone: str | None = None,
    cancelled: bool = False,
    reference: datetime | None = None,
    window_start: datetime | None = None,
    window_end: datetime | None = None,
    limit: int = DEFAULT_LIMIT,
    budget: ExpansionBudget | None = None,
) -> list[Occurrence]:
    """Every occurrence of an event inside the window, at most ``limit``, in recurrence-id order.

    ``rules`` and ``overrides`` are the JSCalendar ``recurrenceRules`` and ``recurrenceOverrides``
    (keys are LocalDateTimes in the event's zone). An override whose key no rule produces adds an
    instance, as an RDATE does; ``{"excluded": true}`` removes one and ``{"status": "cancelled"}``
    keeps it struck through. A rule we cannot expand faithfully is skipped, so an event always
    keeps at least its own start. A non-recurring event yields its one occurrence whatever the
    window, because the window only bounds the expansion of rules.
    """
    return expand_occurrences(
        start, end, duration=duration, rules=rules, excluded=excluded, overrides=overrides, time_zone=time_zone,
        cancelled=cancelled, reference=reference, window_start=window_start, window_end=window_end, limit=limit,
        budget=budget,
    ).occurrences


def expand_occurrences(
    start: datetime | date,
    end: datetime | date | None = None,
    *,
    duration: timedelta | None = None,
    rules: Sequence[Mapping[str, object]] = (),
    excluded: Iterable[datetime | date] = (),
    overrides: Mapping[str, object] | None = None,
    time_zone: str | None = None,
    cancelled: bool = False,
    reference: datetime | None = None,
    window_start: datetime | None = None,
    window_end: datetime | None = None,
    limit: int = DEFAULT_LIMIT,
    budget: ExpansionBudget | None = None,
) -> Expansion:
    """``materialise_occurrences``, saying whether the budget cut the series short.

    Without a budget the event gets a fresh one of its own. When the budget is already spent, a
    recurring event keeps only its own start; when it runs out during the expansion, the
    occurrences found up to then.
    """
    budget = budget if budget is not None else ExpansionBudget()
    if window_start is None or window_end is None:
        if reference is None:
            raise ValueError("pass window_start and window_end, or the reference instant they derive from")
        default_start, default_end = occurrence_window(reference)
        window_start = window_start or default_start
        window_end = window_end or default_end
    frame = _Frame.of(start, time_zone)
    length = _length(start, end, duration)
    first = frame.wall(start)
    low, high = frame.wall(window_start) - _SLACK, frame.wall(window_end) + _SLACK
    skipped = {frame.wall(value) for value, _ in zip(excluded, range(_MAX_EXCLUDED), strict=False)}
    patches = _patches(overrides)
    expansions = [kwargs for kwargs in map(_rule_kwargs, rules[:_MAX_RULES]) if kwargs is not None]
    complete = True
    if not expansions:
        slots = {first}
    elif budget.exhausted:
        slots, complete = {first}, False
    else:
        slots, complete = _expand(expansions, first, low, high, length, budget)
    additions = {wall for wall in patches if wall not in slots and low <= wall < high}
    occurrences: list[Occurrence] = []
    for wall in sorted(slots | additions):
        patch = patches.get(wall)
        if wall in skipped or (patch is not None and patch.get("excluded") is True):
            continue
        occurrence = frame.occurrence(wall, patch, length, cancelled=cancelled)
        if expansions and not frame.overlaps(occurrence, window_start, window_end):
            continue
        occurrences.append(occurrence)
        if len(occurrences) >= limit:
            break
    if expansions:
        budget.spend(len(occurrences))
        budget.shortened += not complete
    return Expansion(occurrences, complete)


@dataclass(frozen=True, slots=True)
class _Frame:
    """How an event's times map to the naive wall clock its rules are stepped on, and back."""

    all_day: bool
    zone: tzinfo | None  # None: floating, the wall clock is the value

    @classmethod
    def of(cls, start: datetime | date, time_zone: str | None) -> _Frame:
        if not isinstance(start, datetime):
            return cls(all_day=True, zone=None)
        if start.tzinfo is None:
            return cls(all_day=False, zone=None)
        named = zone(time_zone) if time_zone else None
        return cls(all_day=False, zone=named if named is not None else UTC)

    def wall(self, value: datetime | date) -> datetime:
        if not isinstance(value, datetime):
            return datetime.combine(value, time())
        if value.tzinfo is not None and self.zone is not None:
            value = value.astimezone(self.zone)
        return value.replace(tzinfo=None)

    def out(self, wall: datetime) -> datetime | date:
        if self.all_day:
            return wall.date()
        if self.zone is None:
            return wall
        # fold=0: a wall time inside a spring-forward gap takes the offset before it (RFC 5545 3.3.5).
        return wall.replace(tzinfo=self.zone).astimezone(UTC)

    def occurrence(
        self, wall: datetime, patch: Mapping[str, object] | None, length: timedelta, *, cancelled: bool
    ) -> Occurrence:
        moved = parse_local_datetime(patch.get("start")) if patch is not None else None
        own_length = parse_duration(patch.get("duration")) if patch is not None else None
        begin = self.out(moved or wall)
        span = own_length if own_length is not None and own_length > timedelta(0) else length
        if self.all_day:
            finish: datetime | date = begin + timedelta(days=max(span.days, 1))
        else:
            finish = begin + span
        is_cancelled = cancelled or (patch is not None and patch.get("status") == "cancelled")
        title = patch.get("title") if patch is not None else None
        return Occurrence(self.out(wall), begin, finish, is_cancelled, patch is not None,
                          title[:500] if isinstance(title, str) and title else None, _place(patch))

    def overlaps(self, occurrence: Occurrence, window_start: datetime, window_end: datetime) -> bool:
        begin, finish = self._instant(occurrence.start), self._instant(occurrence.end)
        return begin < window_end and finish > window_start

    def _instant(self, value: datetime | date) -> datetime:
        # Dates and floating times have no instant; UTC is within a day of any reading of them.
        if isinstance(value, datetime) and value.tzinfo is not None:
            return value
        return self.wall(value).replace(tzinfo=UTC)


def _place(patch: Mapping[str, object] | None) -> str | None:
    """The first location name of an override (JSCalendar ``locations``: id → Location)."""
    places = patch.get("locations") if patch is not None else None
    if not isinstance(places, Mapping):
        return None
    for place in list(places.values())[:5]:
        name = place.get("name") if isinstance(place, Mapping) else None
        if isinstance(name, str) and name:
            return name[:500]
    return None


def _length(start: datetime | date, end: datetime | date | None, duration: timedelta | None) -> timedelta:
    if duration is not None and duration > timedelta(0):
        return duration
    if end is not None and isinstance(end, datetime) == isinstance(start, datetime):
        try:
            span = end - start
        except TypeError:  # one aware, one naive
            span = timedelta(0)
        if isinstance(span, timedelta) and span > timedelta(0):
            return span
    return timedelta(hours=1) if isinstance(start, datetime) else timedelta(days=1)


def _patches(overrides: Mapping[str, object] | None) -> dict[datetime, Mapping[str, object]]:
    patches: dict[datetime, Mapping[str, object]] = {}
    if not isinstance(overrides, Mapping):
        return patches
    for key, patch in list(overrides.items())[:_MAX_OVERRIDES]:
        wall = parse_local_datetime(key)
        if wall is not None and isinstance(patch, Mapping):
            patches[wall] = patch
    return patches


def _expand(
    expansions: Sequence[dict[str, Any]],
    first: datetime,
    low: datetime,
    high: datetime,
    length: timedelta,
    budget: ExpansionBudget,
) -> tuple[set[datetime], bool]:
    slots: set[datetime] = set()
    if low <= first + length and first < high:
        slots.add(first)  # DTSTART is always the first instance, matched by the rule or not
    deadline = budget.event_deadline()
    complete = True
    for kwargs in expansions:
        found, finished = _walk(kwargs, first, high, lambda: budget.past(deadline))
        complete = complete and finished
        slots.update(wall for wall in found if wall + length > low)
    return slots, complete


def _walk(
    kwargs: dict[str, Any], first: datetime, high: datetime, out_of_time: Callable[[], bool]
) -> tuple[list[datetime], bool]:
    """The rule's instances before ``high``, and False when the scan or time budget stopped it first."""
    found: list[datetime] = []
    try:
        if _never_matches(kwargs, first):
            return found, True
        # RFC 5545 counts DTSTART as the first instance even when the rule does not produce it.
        remaining: int | None = kwargs.get("count")
        unbounded = {key: value for key, value in kwargs.items() if key != "count"}
        for scanned, wall in enumerate(_instances(unbounded, first)):
            if remaining is not None:
                if scanned == 0 and wall != first:
                    remaining -= 1
                if remaining <= 0:
                    return found, True
                remaining -= 1
            if wall >= high:
                return found, True
            if scanned >= MAX_SCAN or (scanned % _CHECK_EVERY == _CHECK_EVERY - 1 and out_of_time()):
                return found, False
            found.append(wall)
        return found, True
    except (ValueError, OverflowError):  # dateutil refuses some filter combinations as empty
        return found, True


def _instances(kwargs: dict[str, Any], first: datetime) -> Iterator[datetime]:
    """The rule's instances in order, without COUNT. dateutil steps through every time of day of a whole
    period before the first it may yield (a yearly rule with every hour, minute and second starting on
    31 December: 31 million tries), so many times of day are combined with the rule's days here instead,
    which yields each instance as soon as it is found and lets the caller's budget stop it."""
    times = _times_of_day(kwargs, first)
    if len(times) <= 1 or kwargs["freq"] == du.HOURLY or "bysetpos" in kwargs:
        yield from du.rrule(dtstart=first, **kwargs)
        return
    until = kwargs.get("until")
    day_parts = {key: value for key, value in kwargs.items() if key not in {"until", "byhour", "byminute", "bysecond"}}
    for day in du.rrule(dtstart=datetime.combine(first.date(), time()), **day_parts):
        for moment in times:
            wall = datetime.combine(day.date(), moment)
            if wall < first:
                continue
            if until is not None and wall > until:
                return
            yield wall


def _times_of_day(kwargs: Mapping[str, Any], first: datetime) -> list[time]:
    """The times each day of a daily-or-longer rule has, as dateutil derives them (DTSTART's when not given)."""
    hours = kwargs.get("byhour") or [first.hour]
    minutes = kwargs.get("byminute") or [first.minute]
    seconds = [second for second in kwargs.get("bysecond") or [first.second] if second < 60]  # no leap second
    return sorted({time(hour, minute, second) for hour in hours for minute in minutes for second in seconds})


def _never_matches(kwargs: Mapping[str, Any], first: datetime) -> bool:
    """Whether the day filters can never match: dateutil would otherwise step to year 9999 looking."""
    filters = {key: kwargs[key] for key in ("bymonth", "bymonthday", "byyearday", "byweekno") if key in kwargs}
    if not filters or kwargs["freq"] == du.YEARLY:
        return False
    weekdays = kwargs.get("byweekday")
    if weekdays:
        filters["byweekday"] = [day.weekday for day in weekdays]
    probe = du.rrule(du.YEARLY, dtstart=datetime.combine(first.date(), time()), count=1, **filters)
    return next(iter(probe), None) is None


def _rule_kwargs(rule: Mapping[str, object]) -> dict[str, Any] | None:
    """dateutil arguments for a JSCalendar RecurrenceRule, or None if we cannot expand it faithfully."""
    if not isinstance(rule, Mapping):
        return None
    frequency = rule.get("frequency")
    if not isinstance(frequency, str) or frequency not in _FREQ:
        return None
    if rule.get("rscale", "gregorian") != "gregorian" or rule.get("skip", "omit") != "omit":
        return None
    kwargs: dict[str, Any] = {"freq": _FREQ[frequency], "cache": False}
    interval = rule.get("interval", 1)
    count = rule.get("count")
    if not _whole(interval, 1, 10_000) or (count is not None and not _whole(count, 1, 1_000_000)):
        return None
    kwargs["interval"] = interval
    if count is not None:
        kwargs["count"] = count
    if "until" in rule:
        until = parse_local_datetime(rule["until"])
        if until is None or count is not None:
            return None
        kwargs["until"] = until
    first_day = rule.get("firstDayOfWeek", "mo")
    if first_day not in _DAYS:
        return None
    kwargs["wkst"] = _DAYS[str(first_day)]
    days = _weekdays(rule.get("byDay"))
    months = _numbers(rule.get("byMonth"), 1, 12, zero=False, negative=False, digits=True)
    if days is None or months is None:
        return None
    if days:
        kwargs["byweekday"] = days
    if months:
        kwargs["bymonth"] = months
    for prop, argument, low, high, zero, negative in _NUMBERS:
        numbers = _numbers(rule.get(prop), low, high, zero=zero, negative=negative)
        if numbers is None:
            return None
        if numbers:
            kwargs[argument] = numbers
    if "bysetpos" in kwargs and frequency in {"daily", "hourly"}:
        return None
    if months and "bymonthday" in kwargs and not _possible(months, kwargs["bymonthday"]):
        return None
    return kwargs


def _weekdays(value: object) -> list[Any] | None:
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > 60:
        return None
    days: list[Any] = []
    for item in value:
        if not isinstance(item, Mapping) or item.get("day") not in _DAYS:
            return None
        nth = item.get("nthOfPeriod")
        if nth is None:
            days.append(_DAYS[str(item["day"])])
        elif _whole(nth, -53, 53) and nth != 0:
            days.append(_DAYS[str(item["day"])](nth))
        else:
            return None
    return days


def _numbers(
    value: object, low: int, high: int, *, zero: bool, negative: bool, digits: bool = False
) -> list[int] | None:
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > 400:
        return None
    numbers: list[int] = []
    for item in value:
        number = int(item) if digits and isinstance(item, str) and item.isdigit() and len(item) <= 2 else item
        if not isinstance(number, int) or isinstance(number, bool):
            return None
        if not ((zero and number == 0) or low <= number <= high or (negative and low <= -number <= high)):
            return None
        numbers.append(number)
    return numbers


def _whole(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _possible(months: Sequence[int], month_days: Sequence[int]) -> bool:
    return any(abs(day) <= _MONTH_DAYS[month - 1] for month in months for day in month_days)
