"""JSCalendar (RFC 8984) value shapes shared by extraction, recurrence and whoever stores events.

Only the scalar formats live here: LocalDateTime and Duration strings, and the JSON type aliases.
They are written and read in one place so that a recurrence override written by an extractor is
found again, byte for byte, by the materialiser that reads it back out of a jsonb column.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from plmail.domain.calendar import JsonObject, JsonValue

__all__ = ["JsonObject", "JsonValue", "format_duration", "local_datetime", "parse_duration", "parse_local_datetime"]

_LOCAL_DATETIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})")
_DURATION = re.compile(r"P(?:(\d{1,6})W)?(?:(\d{1,6})D)?(?:T(?:(\d{1,6})H)?(?:(\d{1,6})M)?(?:(\d{1,6})S)?)?")


def local_datetime(value: datetime | date) -> str:
    """A JSCalendar LocalDateTime: the wall-clock digits, no offset; a date becomes its midnight."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=None, microsecond=0).isoformat(timespec="seconds")
    return f"{value.isoformat()}T00:00:00"


def parse_local_datetime(value: object) -> datetime | None:
    """The naive wall-clock time of a LocalDateTime string, or None for anything else."""
    if not isinstance(value, str) or len(value) > 19:
        return None
    match = _LOCAL_DATETIME.fullmatch(value)
    if match is None:
        return None
    try:
        year, month, day, hour, minute, second = (int(group) for group in match.groups())
        return datetime(year, month, day, hour, minute, second)
    except ValueError:
        return None


def format_duration(value: timedelta) -> str:
    """A JSCalendar Duration (``P1D``, ``PT1H30M``); negative lengths are clamped to zero."""
    total = max(int(value.total_seconds()), 0)
    days, rest = divmod(total, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, seconds = divmod(rest, 60)
    clock = "".join(f"{amount}{unit}" for amount, unit in ((hours, "H"), (minutes, "M"), (seconds, "S")) if amount)
    if days and not clock:
        return f"P{days}D"
    return f"P{days}DT{clock}" if days else f"PT{clock or '0S'}"


def parse_duration(value: object) -> timedelta | None:
    """A Duration string as a timedelta, or None when it is not one."""
    if not isinstance(value, str) or len(value) > 40 or value in {"P", "PT"} or value.endswith("T"):
        return None
    match = _DURATION.fullmatch(value)
    if match is None:
        return None
    weeks, days, hours, minutes, seconds = (int(group) if group else 0 for group in match.groups())
    return timedelta(weeks=weeks, days=days, hours=hours, minutes=minutes, seconds=seconds)
