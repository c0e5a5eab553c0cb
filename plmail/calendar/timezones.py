"""IANA zone names from whatever a sender wrote into a TZID.

Outlook writes Windows names ("W. Europe Standard Time"), libical and Lightning write "globally
unique" ids ("/freeassociation.sourceforge.net/Tzfile/Europe/Berlin"), and a few producers mangle
the slash. The Windows table is icalendar's copy of CLDR's windowsZones.xml, not one of our own.
"""

from __future__ import annotations

import functools
import zoneinfo

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
