"""IANA zone names from whatever a sender wrote into a TZID.

Outlook writes Windows names ("W. Europe Standard Time"), libical and Lightning write "globally
unique" ids ("/freeassociation.sourceforge.net/Tzfile/Europe/Berlin"), and a few producers mangle
the slash. The Windows table is icalendar's copy of CLDR's windowsZones.xml, not one of our own.
"""

from __future__ import annotations

import functools
import zoneinfo
from datetime import datetime

from dateutil import rrule  # type: ignore[import-untyped]
from icalendar import Component
from icalendar.prop import vRecur
from icalendar.timezone.windows_to_olson import WINDOWS_TO_OLSON

MAX_TZID = 128


@functools.cache
def _known_zones() -> frozenset[str]:
    # The installed tzdata's own list: a name outside it ("localtime", "posixrules", a path) is not a zone.
    return frozenset(zoneinfo.available_timezones())


def is_zone_name(name: str) -> bool:
    return name in _known_zones()


@functools.lru_cache(maxsize=512)
def zone(name: str) -> zoneinfo.ZoneInfo | None:
    """The zone for an IANA name, or None for anything that is not one (never raises)."""
    if not is_zone_name(name):
        return None
    try:
        return zoneinfo.ZoneInfo(name)
    except (ValueError, KeyError, OSError):
        return None


@functools.lru_cache(maxsize=1024)
def resolve_zone_name(tzid: str) -> str | None:
    """The IANA name a TZID means, or None when it names no zone we can be sure of."""
    name = tzid.strip().strip('"').strip()
    if not name or len(name) > MAX_TZID:
        return None
    if is_zone_name(name):
        return name
    stripped = name.strip("/")
    if is_zone_name(stripped):
        return stripped
    windows = WINDOWS_TO_OLSON.get(stripped)
    if windows is not None and is_zone_name(windows):
        return windows
    if name.startswith("/"):
        # A globally unique id: vendor path in front, the Olson name at the end (longest suffix first).
        segments = stripped.split("/")
        for first in range(1, len(segments)):
            candidate = "/".join(segments[first:])
            if is_zone_name(candidate):
                return candidate
    if "/" not in stripped:
        for separator in ("_", "-"):
            candidate = stripped.replace(separator, "/", 1)
            if separator in stripped and is_zone_name(candidate):
                return candidate
    return None


# A VTIMEZONE's STANDARD and DAYLIGHT rules are expanded by icalendar into every transition up to 2038;
# a zone changes its offset a few times a year, so anything beyond these bounds is not a real zone.
MAX_ZONE_PARTS = 100
MAX_ZONE_TRANSITIONS = 2_000
_ZONE_LAST_YEAR = 2038
_ZONE_RULE_PARTS = frozenset({"FREQ", "INTERVAL", "COUNT", "UNTIL", "WKST", "BYMONTH", "BYDAY", "BYMONTHDAY",
                              "BYYEARDAY", "BYWEEKNO"})
_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def zone_transitions(definition: Component, *, limit: int = MAX_ZONE_TRANSITIONS) -> int | None:
    """How many transitions icalendar would expand this VTIMEZONE into, or None when that is unbounded
    or over ``limit``: only yearly rules without times of their own, at most ``MAX_ZONE_PARTS`` parts."""
    parts = [part for part in definition.subcomponents if part.name in {"STANDARD", "DAYLIGHT"}]
    if not parts or len(parts) > MAX_ZONE_PARTS:
        return None
    total = 0
    for part in parts:
        found = _part_transitions(part, limit - total)
        if found is None:
            return None
        total += found
    return total


def _part_transitions(part: Component, limit: int) -> int | None:
    start = part.get("DTSTART")
    first = getattr(start, "dt", None)
    if not isinstance(first, datetime):
        return None
    rules = part.get("RRULE")
    dates = part.get("RDATE")
    count = 1 + sum(len(getattr(item, "dts", ())) for item in (dates if isinstance(dates, list) else [dates]) if item)
    if rules is None:
        return count if count <= limit else None
    if isinstance(rules, list) or not isinstance(rules, vRecur):
        return None  # icalendar reads only one RRULE per part; several are not a zone we understand
    if set(rules) - _ZONE_RULE_PARTS or [str(value).upper() for value in rules.get("FREQ", [])] != ["YEARLY"]:
        return None
    months = [value for value in rules.get("BYMONTH", []) if isinstance(value, int)]
    month_days = [value for value in rules.get("BYMONTHDAY", []) if isinstance(value, int)]
    if months and month_days and not any(abs(day) <= _MONTH_DAYS[m - 1] for m in months if 1 <= m <= 12
                                         for day in month_days):
        return None  # 30 February: dateutil would search to year 9999
    try:
        expansion = rrule.rrulestr(rules.to_ical().decode(), dtstart=first.replace(tzinfo=None))  # type: ignore[no-untyped-call]
        for instance in expansion:
            if instance.year > _ZONE_LAST_YEAR:
                break
            count += 1
            if count > limit:
                return None
    except (ValueError, TypeError, OverflowError):
        return None
    return count
