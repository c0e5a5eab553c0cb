"""Times of events as a reader sees them: in the reader's zone, in English or German.

The words go through a translator the caller passes in (the web catalogue), so this module knows
formats, not languages' vocabularies.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta, tzinfo

from plmail.calendar.timezones import zone

Translator = Callable[[str], str]

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
WEEKDAYS_SHORT = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def reader_zone(name: str | None) -> tzinfo:
    return (zone(name) if name else None) or UTC


def day_label(day: date, locale: str, t: Translator) -> str:
    """"Wed 16 March 2022" / "Mi 16. März 2022"."""
    separator = ". " if locale == "de" else " "
    return f"{t(WEEKDAYS_SHORT[day.weekday()])} {day.day}{separator}{t(MONTHS[day.month - 1])} {day.year}"


def month_label(day: date, t: Translator) -> str:
    return f"{t(MONTHS[day.month - 1])} {day.year}"


def clock(moment: datetime) -> str:
    return moment.strftime("%H:%M")


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
