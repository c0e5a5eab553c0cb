"""Times of events as a reader sees them: in the reader's zone, in English or German.

Names of days and months and the date patterns come from Babel (CLDR); the few words of our own ("all day")
go through a translator the caller passes in (the web catalogue).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta, tzinfo

from babel.dates import format_date, format_time, get_day_names

from plmail.calendar.timezones import zone

Translator = Callable[[str], str]

# CLDR patterns through Babel: English "Wed 16 March 2022", German "Mi 16. März 2022" (ccc: the
# stand-alone abbreviation, without the dot CLDR puts after "Mi." in running text).
_DAY_PATTERNS = {"en": "EEE d MMMM y", "de": "ccc d. MMMM y"}


def reader_zone(name: str | None) -> tzinfo:
    return (zone(name) if name else None) or UTC


def day_label(day: date, locale: str, t: Translator | None = None) -> str:
    """"Wed 16 March 2022" / "Mi 16. März 2022", from Babel's CLDR names of days and months."""
    return format_date(day, _DAY_PATTERNS.get(locale, _DAY_PATTERNS["en"]), locale=locale)


def weekday_names(locale: str) -> list[str]:
    """Monday to Sunday, abbreviated as the month grid's column heads ("Mon" / "Mo")."""
    names = get_day_names("abbreviated", context="stand-alone", locale=locale)
    return [str(names[i]) for i in range(7)]


def month_label(day: date, locale: str = "en") -> str:
    return format_date(day, "LLLL y", locale=locale)


def clock(moment: datetime) -> str:
    """The time of day on the 24-hour clock the calendar's grid uses."""
    return format_time(moment, "HH:mm", tzinfo=moment.tzinfo, locale="en")


def moment_label(moment: datetime, *, where: tzinfo, locale: str, t: Translator) -> str:
    local = moment.astimezone(where)
    return f"{day_label(local.date(), locale, t)}, {clock(local)}"


def all_day_dates(starts_at: datetime, ends_at: datetime) -> tuple[date, date]:
    """First and last day of an all-day span (stored at UTC midnight, end exclusive)."""
    first = starts_at.astimezone(UTC).date()
    last = ends_at.astimezone(UTC).date() - timedelta(days=1)
    return first, max(first, last)


def span_label(
    starts_at: datetime, ends_at: datetime, *, all_day: bool, where: tzinfo, locale: str, t: Translator
) -> str:
    """An event's time in the reader's zone: "Wed 16 March 2022, 12:00–12:30", or days when all-day."""
    if all_day:
        first, last = all_day_dates(starts_at, ends_at)
        days = day_label(first, locale, t) if first == last else f"{day_label(first, locale, t)} – " \
            f"{day_label(last, locale, t)}"
        return f"{days} ({t('all day')})"
    begin, end = starts_at.astimezone(where), ends_at.astimezone(where)
    if begin.date() == end.date() or end - begin <= timedelta(0):
        return f"{day_label(begin.date(), locale, t)}, {clock(begin)}–{clock(end)}"
    return f"{day_label(begin.date(), locale, t)}, {clock(begin)} – {day_label(end.date(), locale, t)}, {clock(end)}"


def covered_days(
    starts_at: datetime, ends_at: datetime, *, all_day: bool, where: tzinfo
) -> tuple[date, date]:
    """The first and last local day an occurrence shows on; an all-day date is the same everywhere."""
    if all_day:
        return all_day_dates(starts_at, ends_at)
    begin, end = starts_at.astimezone(where), ends_at.astimezone(where)
    last = (end - timedelta(microseconds=1)).date() if end > begin else begin.date()
    return begin.date(), max(begin.date(), last)


def side_by_side(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(column, columns) for each (start, end) minute span of one day, as calendars draw overlapping events:
    a group of events that overlap one another shares the day's width, each in the first column free at its
    start. ``spans`` come sorted by start."""
    placed: list[tuple[int, int]] = [(0, 1)] * len(spans)
    group: list[int] = []  # indexes of the overlapping group being laid out
    column_ends: list[int] = []  # per column of the group, the minute its last event ends
    group_end = -1

    def close() -> None:
        for index in group:
            placed[index] = (placed[index][0], len(column_ends))

    for index, (start, end) in enumerate(spans):
        end = max(end, start + 1)
        if start >= group_end and group:
            close()
            group, column_ends = [], []
        column = next((c for c, ends in enumerate(column_ends) if ends <= start), len(column_ends))
        if column == len(column_ends):
            column_ends.append(end)
        else:
            column_ends[column] = end
        placed[index] = (column, 0)
        group.append(index)
        group_end = max(group_end, end) if len(group) > 1 else end
    if group:
        close()
    return placed
