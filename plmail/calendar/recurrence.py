"""RRULE ⇄ JSCalendar RecurrenceRule, and the occurrences an event's recurrence produces.

The converter refuses a rule outright rather than converting most of it. A half-converted rule
still materialises, on days the sender never meant, and nothing downstream can tell those
occurrences from real ones; a refused rule leaves the event on the calendar once with the
original text beside it, which is visibly incomplete instead of silently wrong. The
materialiser reads only the JSCalendar form, so a refused rule is never expanded by accident.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime, tzinfo

from icalendar.prop import vRecur

from plmail.calendar.jscalendar import JsonObject, JsonValue, local_datetime, parse_local_datetime
from plmail.calendar.occurrences import (
    DEFAULT_LIMIT,
    Occurrence,
    materialise_occurrences,
    occurrence_window,
)
from plmail.calendar.timezones import zone

__all__ = [
    "DEFAULT_LIMIT",
    "Occurrence",
    "jscalendar_to_rrule",
    "materialise_occurrences",
    "occurrence_window",
    "rrule_to_jscalendar",
]

# MINUTELY and SECONDLY are left out on purpose: no invitation uses them, and expanding one that
# never matches its filters walks every second to year 9999 before it gives up.
_FREQUENCIES = {"YEARLY": "yearly", "MONTHLY": "monthly", "WEEKLY": "weekly", "DAILY": "daily", "HOURLY": "hourly"}
_KNOWN_PARTS = frozenset(
    {
        "FREQ", "INTERVAL", "COUNT", "UNTIL", "WKST", "RSCALE", "SKIP", "BYDAY", "BYMONTHDAY",
        "BYYEARDAY", "BYWEEKNO", "BYMONTH", "BYHOUR", "BYMINUTE", "BYSECOND", "BYSETPOS",
    }
)  # fmt: skip
_WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
_NDAY = re.compile(r"([+-]?\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)")
_MAX_INTERVAL = 10_000
_MAX_COUNT = 1_000_000
_MAX_LIST = 400
# The most days each month can have, February in a leap year included.
_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
# (JSCalendar property, RRULE part, lowest, highest, zero allowed, negative allowed)
_NUMBER_LISTS = (
    ("byMonthDay", "BYMONTHDAY", 1, 31, False, True),
    ("byYearDay", "BYYEARDAY", 1, 366, False, True),
    ("byWeekNo", "BYWEEKNO", 1, 53, False, True),
    ("byHour", "BYHOUR", 0, 23, True, False),
    ("byMinute", "BYMINUTE", 0, 59, True, False),
    ("bySecond", "BYSECOND", 0, 60, True, False),
    ("bySetPosition", "BYSETPOS", 1, 366, False, True),
)


class _Refused(Exception):
    """The rule says something JSCalendar, or our expansion of it, cannot say faithfully."""


def rrule_to_jscalendar(
    rule: str | Mapping[str, object], *, start: datetime | date, time_zone: str | None = None
) -> JsonObject | None:
    """One RRULE (text or icalendar's parsed vRecur) as a JSCalendar RecurrenceRule, or None if refused.

    ``start`` is the event's start (aware, naive for floating, or a date) and ``time_zone`` its
    IANA zone: JSCalendar's ``until`` is a wall-clock time in that zone, RRULE's is UTC.
    """
    parts = _rule_parts(rule)
    if parts is None:
        return None
    try:
        return _convert(parts, start, time_zone)
    except _Refused:
        return None


def jscalendar_to_rrule(
    rule: Mapping[str, object], *, time_zone: str | None = None, all_day: bool = False, floating: bool = False
) -> str | None:
    """The RRULE text for a JSCalendar RecurrenceRule (None if the rule is not one we would write)."""
    frequency = rule.get("frequency")
    names = {value: name for name, value in _FREQUENCIES.items()}
    if not isinstance(frequency, str) or frequency not in names:
        return None
    text = [f"FREQ={names[frequency]}"]
    interval = rule.get("interval", 1)
    if isinstance(interval, int) and interval != 1:
        text.append(f"INTERVAL={interval}")
    count = rule.get("count")
    if isinstance(count, int):
        text.append(f"COUNT={count}")
    until = parse_local_datetime(rule.get("until"))
    if until is not None:
        text.append(f"UNTIL={_until_text(until, time_zone=time_zone, all_day=all_day, floating=floating)}")
    days = rule.get("byDay")
    if isinstance(days, list) and days:
        text.append("BYDAY=" + ",".join(_nday_text(day) for day in days if isinstance(day, dict)))
    months = rule.get("byMonth")
    if isinstance(months, list) and months:
        text.append("BYMONTH=" + ",".join(str(month) for month in months))
    for prop, part, *_ in _NUMBER_LISTS:
        values = rule.get(prop)
        if isinstance(values, list) and values:
            text.append(f"{part}=" + ",".join(str(value) for value in values))
    first_day = rule.get("firstDayOfWeek")
    if isinstance(first_day, str) and first_day != "mo":
        text.append(f"WKST={first_day.upper()}")
    return ";".join(text)


def _rule_parts(rule: str | Mapping[str, object]) -> dict[str, list[object]] | None:
    if isinstance(rule, str):
        if len(rule) > 2_000:
            return None
        try:
            parsed: Mapping[str, object] = vRecur.from_ical(rule.strip().removeprefix("RRULE:"))
        except (ValueError, TypeError, KeyError, IndexError, AttributeError):
            return None
    else:
        parsed = rule
    parts: dict[str, list[object]] = {}
    for key, value in parsed.items():
        values = list(value) if isinstance(value, list | tuple) else [value]
        if len(values) > _MAX_LIST:
            return None
        parts[str(key).upper()] = values
    return parts


def _convert(parts: dict[str, list[object]], start: datetime | date, time_zone: str | None) -> JsonObject:
    if set(parts) - _KNOWN_PARTS:
        raise _Refused  # an X- part may change the meaning, and we would drop it
    freq = _one_word(parts, "FREQ")
    if freq not in _FREQUENCIES:
        raise _Refused
    if _one_word(parts, "RSCALE", "GREGORIAN") != "GREGORIAN" or _one_word(parts, "SKIP", "OMIT") != "OMIT":
        raise _Refused  # RFC 7529 calendars other than the Gregorian one
    if "COUNT" in parts and "UNTIL" in parts:
        raise _Refused
    all_day = not isinstance(start, datetime)
    result: JsonObject = {"@type": "RecurrenceRule", "frequency": _FREQUENCIES[freq]}
    interval = _one_int(parts, "INTERVAL", 1, _MAX_INTERVAL, default=1)
    if interval != 1:
        result["interval"] = interval
    first_day = _one_word(parts, "WKST", "MO")
    if first_day not in _WEEKDAYS:
        raise _Refused
    if first_day != "MO":
        result["firstDayOfWeek"] = first_day.lower()
    days = [_nday(value) for value in parts.get("BYDAY", [])]
    if any("nthOfPeriod" in day for day in days) and (freq not in {"MONTHLY", "YEARLY"} or "BYWEEKNO" in parts):
        raise _Refused  # RFC 5545 forbids an ordinal weekday here
    if days:
        result["byDay"] = _unique(days)
    months = [_month(value) for value in parts.get("BYMONTH", [])]
    if months:
        result["byMonth"] = _unique([str(month) for month in months])
    for prop, part, low, high, zero, negative in _NUMBER_LISTS:
        numbers = [_number(value, low, high, zero=zero, negative=negative) for value in parts.get(part, [])]
        if numbers:
            result[prop] = _unique(numbers)
    _check_combinations(freq, parts, result, all_day=all_day)
    _check_possible(months, result.get("byMonthDay"))
    if "COUNT" in parts:
        result["count"] = _one_int(parts, "COUNT", 1, _MAX_COUNT, default=1)
    if "UNTIL" in parts:
        result["until"] = _until_local(_one(parts, "UNTIL"), start, time_zone)
    return result


def _check_combinations(freq: str, parts: Mapping[str, object], rule: JsonObject, *, all_day: bool) -> None:
    if "BYWEEKNO" in parts and freq != "YEARLY":
        raise _Refused
    if "BYYEARDAY" in parts and freq in {"DAILY", "WEEKLY", "MONTHLY"}:
        raise _Refused
    if "BYMONTHDAY" in parts and freq == "WEEKLY":
        raise _Refused
    if "BYSETPOS" in parts:
        others = {"byDay", "byMonthDay", "byYearDay", "byWeekNo", "byMonth", "byHour", "byMinute", "bySecond"}
        if not others & set(rule) or freq in {"DAILY", "HOURLY"}:
            raise _Refused  # nothing to select from, or a set that can never hold the position
    if all_day and ({"BYHOUR", "BYMINUTE", "BYSECOND"} & set(parts) or freq == "HOURLY"):
        raise _Refused  # a date has no time of day to recur at


def _check_possible(months: Sequence[int], month_days: JsonValue) -> None:
    if not months or not isinstance(month_days, list):
        return
    for month in months:
        longest = _MONTH_DAYS[month - 1]
        if any(isinstance(day, int) and abs(day) <= longest for day in month_days):
            return
    raise _Refused  # e.g. the 31st of February: expanding it would search to year 9999


def _until_local(value: object, start: datetime | date, time_zone: str | None) -> str:
    if isinstance(value, datetime):
        if value.tzinfo is None or not isinstance(start, datetime) or start.tzinfo is None:
            return local_datetime(value)
        return local_datetime(value.astimezone(_expansion_zone(time_zone)))
    if isinstance(value, date):
        # A date UNTIL on a timed event is lenient input: it still includes that whole day.
        return local_datetime(value) if not isinstance(start, datetime) else f"{value.isoformat()}T23:59:59"
    raise _Refused


def _until_text(until: datetime, *, time_zone: str | None, all_day: bool, floating: bool) -> str:
    if all_day:
        return until.strftime("%Y%m%d")
    if floating:
        return until.strftime("%Y%m%dT%H%M%S")
    moment = until.replace(tzinfo=_expansion_zone(time_zone)).astimezone(UTC)
    return moment.strftime("%Y%m%dT%H%M%SZ")


def _expansion_zone(time_zone: str | None) -> tzinfo:
    resolved = zone(time_zone) if time_zone else None
    return resolved if resolved is not None else UTC


def _nday(value: object) -> JsonObject:
    match = _NDAY.fullmatch(str(value).strip().upper())
    if match is None:
        raise _Refused
    nth_text, day = match.groups()
    result: JsonObject = {"@type": "NDay", "day": day.lower()}
    if nth_text:
        nth = int(nth_text)
        if nth == 0 or abs(nth) > 53:
            raise _Refused
        result["nthOfPeriod"] = nth
    return result


def _nday_text(day: Mapping[str, object]) -> str:
    nth = day.get("nthOfPeriod")
    weekday = str(day.get("day", "")).upper()
    return f"{nth}{weekday}" if isinstance(nth, int) else weekday


def _month(value: object) -> int:
    text = str(value).strip()
    if not text.isdigit():
        raise _Refused  # a leap month ("5L") belongs to another calendar scale
    month = int(text)
    if not 1 <= month <= 12:
        raise _Refused
    return month


def _number(value: object, low: int, high: int, *, zero: bool, negative: bool) -> int:
    number = _as_int(value)
    if number is None:
        raise _Refused
    if number == 0 and zero:
        return 0
    if low <= number <= high or (negative and low <= -number <= high):
        return number
    raise _Refused


def _one(parts: Mapping[str, list[object]], key: str) -> object:
    values = parts.get(key, [])
    if len(values) != 1:
        raise _Refused
    return values[0]


def _one_word(parts: Mapping[str, list[object]], key: str, default: str | None = None) -> str:
    if key not in parts:
        if default is None:
            raise _Refused
        return default
    return str(_one(parts, key)).strip().upper()


def _one_int(parts: Mapping[str, list[object]], key: str, low: int, high: int, *, default: int) -> int:
    if key not in parts:
        return default
    number = _as_int(_one(parts, key))
    if number is None or not low <= number <= high:
        raise _Refused
    return number


def _as_int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if text.lstrip("+-").isdigit() and len(text) <= 8:
        return int(text)
    return None


def _unique(values: Iterable[JsonValue]) -> list[JsonValue]:
    seen: list[JsonValue] = []
    for value in values:
        if value not in seen:
            seen.append(value)
    return seen
