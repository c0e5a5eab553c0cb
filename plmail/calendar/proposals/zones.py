"""Time zones written after a time: "3pm BST", "14 Uhr MEZ", "9am ET", "(UTC+8)", "3pm London time", and those we
do not resolve."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo

from plmail.calendar.proposals.vocabulary import alternation

# An abbreviation names a fixed offset and, where it has one, the region whose clock it is meant to be.
_ABBREVIATED_ZONES: dict[str, tuple[int, str | None]] = {
    "utc": (0, None), "gmt": (0, None),
    "cet": (60, "Europe/Berlin"), "mez": (60, "Europe/Berlin"),
    "cest": (120, "Europe/Berlin"), "mesz": (120, "Europe/Berlin"),
    "est": (-300, "America/New_York"), "edt": (-240, "America/New_York"),
    "cst": (-360, "America/Chicago"), "cdt": (-300, "America/Chicago"),
    "mst": (-420, "America/Denver"), "mdt": (-360, "America/Denver"),
    "pst": (-480, "America/Los_Angeles"), "pdt": (-420, "America/Los_Angeles"),
    "akst": (-540, "America/Anchorage"), "akdt": (-480, "America/Anchorage"), "hst": (-600, "Pacific/Honolulu"),
    "bst": (60, "Europe/London"), "wet": (0, "Europe/Lisbon"), "west": (60, "Europe/Lisbon"),
    "eet": (120, "Europe/Helsinki"), "eest": (180, "Europe/Helsinki"), "msk": (180, "Europe/Moscow"),
    "hkt": (480, "Asia/Hong_Kong"), "sgt": (480, "Asia/Singapore"), "awst": (480, "Australia/Perth"),
    "jst": (540, "Asia/Tokyo"), "kst": (540, "Asia/Seoul"), "acst": (570, "Australia/Adelaide"),
    "aest": (600, "Australia/Sydney"), "aedt": (660, "Australia/Sydney"),
    "nzst": (720, "Pacific/Auckland"), "nzdt": (780, "Pacific/Auckland"),
}  # fmt: skip
_REGION_ZONES = {"et": "America/New_York", "ct": "America/Chicago", "mt": "America/Denver", "pt": "America/Los_Angeles"}
# Names that are also words ("ist", "est", "et", "art", "west") count only in capitals or after am/pm.
_WORDLIKE_ZONES = frozenset({"est", "cst", "mst", "et", "ct", "mt", "pt", "west", "wet"})
# "3pm London time", "14 Uhr New Yorker Zeit", "7 PM Eastern": a zone named by its place is that place's clock,
# summer time included, so its time is read there and shown in the user's zone.
_PLACE_ZONES = {
    "amsterdam": "Europe/Amsterdam", "athens": "Europe/Athens", "athen": "Europe/Athens",
    "auckland": "Pacific/Auckland", "bangalore": "Asia/Kolkata", "bangkok": "Asia/Bangkok",
    "beijing": "Asia/Shanghai", "peking": "Asia/Shanghai", "berlin": "Europe/Berlin", "boston": "America/New_York",
    "brussels": "Europe/Brussels", "brüssel": "Europe/Brussels", "chicago": "America/Chicago",
    "delhi": "Asia/Kolkata", "new delhi": "Asia/Kolkata", "denver": "America/Denver", "dubai": "Asia/Dubai",
    "dublin": "Europe/Dublin", "frankfurt": "Europe/Berlin", "hamburg": "Europe/Berlin",
    "helsinki": "Europe/Helsinki", "hong kong": "Asia/Hong_Kong", "hongkong": "Asia/Hong_Kong",
    "india": "Asia/Kolkata", "indian": "Asia/Kolkata", "lisbon": "Europe/Lisbon", "lissabon": "Europe/Lisbon",
    "london": "Europe/London", "uk": "Europe/London", "los angeles": "America/Los_Angeles",
    "madrid": "Europe/Madrid", "melbourne": "Australia/Melbourne", "mumbai": "Asia/Kolkata",
    "munich": "Europe/Berlin", "new york": "America/New_York", "oslo": "Europe/Oslo", "paris": "Europe/Paris",
    "prague": "Europe/Prague", "prag": "Europe/Prague", "rome": "Europe/Rome", "san francisco": "America/Los_Angeles",
    "seattle": "America/Los_Angeles", "seoul": "Asia/Seoul", "shanghai": "Asia/Shanghai",
    "singapore": "Asia/Singapore", "singapur": "Asia/Singapore", "stockholm": "Europe/Stockholm",
    "sydney": "Australia/Sydney",
    "tokyo": "Asia/Tokyo", "tokio": "Asia/Tokyo", "toronto": "America/Toronto", "vienna": "Europe/Vienna",
    "wien": "Europe/Vienna", "warsaw": "Europe/Warsaw", "warschau": "Europe/Warsaw", "zurich": "Europe/Zurich",
    "zürich": "Europe/Zurich", "zürcher": "Europe/Zurich", "deutsche": "Europe/Berlin", "deutscher": "Europe/Berlin",
}  # fmt: skip
# The regions spelled out: the zones of "ET", "CT", "MT" and "PT".
_REGION_WORDS = {"eastern": _REGION_ZONES["et"], "central": _REGION_ZONES["ct"], "mountain": _REGION_ZONES["mt"],
                 "pacific": _REGION_ZONES["pt"]}  # fmt: skip
# German writes the place as an adjective: "Londoner Zeit", "New Yorker Zeit".
_PLACE_ZONE = re.compile(rf"\s*\(?(?P<place>{alternation(_PLACE_ZONES)})(?:er)?[\s-]+(?:time|zeit)\b\)?", re.IGNORECASE)
# "Eastern", "Pacific time": capitalised, or after am/pm, and not the first word of a place ("Central Station").
_REGION_ZONE = re.compile(
    rf"\s*\(?(?P<region>{alternation(w.capitalize() for w in _REGION_WORDS)})(?:\s+(?:standard\s+|daylight\s+)?"
    r"(?:time|Time))?\b\)?(?!\s+(?-i:[A-Z]))"
)
_REGION_ZONE_ANY_CASE = re.compile(_REGION_ZONE.pattern, re.IGNORECASE)
_ZONE_AFTER = re.compile(
    r"\s*\(?(?P<name>[A-Za-z]{2,4})(?:\s*(?P<sign>[+-])\s*(?P<off>\d{1,2})(?::?(?P<offm>\d{2}))?)?\)?(?![\w])"
)
# Zones we do not resolve: reading such a time in the user's zone would give a confidently wrong hour. IST is
# India's, Ireland's or Israel's, AST Atlantic or Arabia; the others are also words ("art", "eat", "cat").
_UNKNOWN_ZONE = re.compile(
    r"\s*\(?(?:IST|AST|ADT|BRT|ART|ICT|PHT|WIB|SAST|CAT|EAT|WAT)\b"
    r"|\s*\(?(?i:local\s+time|ortszeit|(?:my|our|your)\s+time|(?:ihrer|eurer|deiner|meiner|unserer)\s+zeit)\b"
    # "12PM Mars time", "14 Uhr Kabuler Zeit": a zone named by a place we do not know.
    r"|\s*\(?(?:[A-Z][a-zäöü]+[\s-]+){1,3}(?:[Tt]ime|Zeit)\b",
)
_UNKNOWN_ZONE_ANY_CASE = re.compile(_UNKNOWN_ZONE.pattern, re.IGNORECASE)
# Outlook writes a zone as "(UTC+01:00) Amsterdam, Berlin, Bern, Rom, …" or "(UTC-05:00) Eastern Time (US &
# Canada)": the offset is that zone's standard time all year round, an hour off in summer; the place is the clock.
_WINDOWS_LABEL = re.compile(r"\s+(?P<first>[A-Z][a-zäöü]+(?:\s[A-Z][a-zäöü]+)?)(?=\s*,|\s+(?:Standard\s+)?Time\b)")


@dataclass(frozen=True, slots=True)
class Zone:
    zone: tzinfo | None = None
    region: str | None = None
    unknown: bool = False


def zone_after(sentence: str, end: int, meridiem: bool) -> tuple[Zone, int]:
    """The zone written right after a time, and where the time's text ends with it.

    After "am"/"pm" the sentence is English, so a lower-case "ist" is a zone there and a verb elsewhere."""
    place = _PLACE_ZONE.match(sentence, end)
    if place:
        return Zone(ZoneInfo(_PLACE_ZONES[place["place"].lower()])), place.end()
    region = (_REGION_ZONE_ANY_CASE if meridiem else _REGION_ZONE).match(sentence, end)
    if region:
        return Zone(ZoneInfo(_REGION_WORDS[region["region"].lower()])), region.end()
    unknown = _UNKNOWN_ZONE_ANY_CASE if meridiem else _UNKNOWN_ZONE
    if unknown.match(sentence, end):
        return Zone(unknown=True), end
    m = _ZONE_AFTER.match(sentence, end)
    if not m:
        return Zone(), end
    name = m["name"].lower()
    if name in _WORDLIKE_ZONES and not (meridiem or m["name"].isupper()):
        return Zone(), end
    if m["sign"] and name not in ("utc", "gmt"):
        end_of_name = m.end("name")  # "2:00 PM EST - 3:00 PM EST": the dash opens the range, it is no offset
        return (_named(name), end_of_name) if name in _ABBREVIATED_ZONES or name in _REGION_ZONES else (Zone(), end)
    if m["sign"]:
        label = _WINDOWS_LABEL.match(sentence, m.end()) if m[0].strip().startswith("(") else None
        if label is not None:
            first = label["first"].lower()
            known = _PLACE_ZONES.get(first) or _REGION_WORDS.get(first)
            return (Zone(ZoneInfo(known)), label.end()) if known else (Zone(unknown=True), end)
        offset = timedelta(hours=int(m["off"]), minutes=int(m["offm"] or 0))
        if offset > timedelta(hours=14):
            return Zone(unknown=True), end
        return Zone(timezone(offset if m["sign"] == "+" else -offset)), m.end()
    if name in _ABBREVIATED_ZONES or name in _REGION_ZONES:
        return _named(name), m.end()
    return Zone(), end


def _named(name: str) -> Zone:
    if name in _ABBREVIATED_ZONES:
        minutes, region = _ABBREVIATED_ZONES[name]
        return Zone(timezone(timedelta(minutes=minutes)), region)
    return Zone(ZoneInfo(_REGION_ZONES[name]))

