"""Typed reads of schema.org values that an attacker may have written.

Nothing here trusts that a property exists, has the type it should, or has a sane size: every
accessor answers None (or nothing) for the wrong shape, and long strings are sliced before any
regular expression sees them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from datetime import UTC, date, datetime, timedelta
from typing import TypeAlias

from plmail.calendar.extraction.text import clean_line
from plmail.calendar.timezones import zone
from plmail.domain.calendar import EventStatus

Node: TypeAlias = Mapping[str, object]

MAX_TYPES = 8
MAX_SCALAR = 20_000
_SCHEMA_PREFIX = re.compile(r"^(?:https?://)?(?:www\.)?schema\.org/", re.IGNORECASE)
_MOMENT = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d{1,9})?)?\s*(Z|[+-]\d{1,2}(?::?\d{2})?)?)?",
    re.IGNORECASE,
)
_CANCELLED = frozenset({"cancelled", "canceled", "reservationcancelled", "ordercancelled", "eventcancelled"})
_TENTATIVE = frozenset({"reservationpending", "reservationhold", "pending", "hold"})


def types_of(node: Node) -> tuple[str, ...]:
    """The short schema.org type names of a node (``http://schema.org/Flight`` → ``Flight``)."""
    value = node.get("@type")
    raw = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    names: list[str] = []
    for item in raw[:MAX_TYPES]:
        if isinstance(item, str) and len(item) <= 200:
            names.append(_SCHEMA_PREFIX.sub("", item.strip()))
    return tuple(names)


def scalar(value: object) -> str | None:
    """A property's text: a string, a number, a JSON-LD value object, or the first of a list of those."""
    if isinstance(value, list):
        return next((text for text in map(_plain, value[:20]) if text is not None), None)
    return _plain(value)


def _plain(value: object) -> str | None:
    if isinstance(value, Mapping):
        value = value.get("@value")
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        text = value[:MAX_SCALAR].strip()
        return text or None
    return None


def text(node: Node | None, *keys: str, limit: int = 200) -> str | None:
    """The first of ``keys`` that holds usable text, cleaned to one line and capped."""
    if node is None:
        return None
    for key in keys:
        value = clean_line(scalar(node.get(key)), limit)
        if value:
            return value
    return None


def child(node: Node | None, key: str) -> Node | None:
    """A nested object, or the first object of a list of them."""
    return next(children(node, key, 1), None)


def children(node: Node | None, key: str, limit: int) -> Iterator[Node]:
    if node is None:
        return
    value = node.get(key)
    items = value if isinstance(value, list) else [value]
    yielded = 0
    for item in items[: limit * 4]:
        if isinstance(item, Mapping):
            yield item
            yielded += 1
            if yielded >= limit:
                return


def moment(value: object) -> datetime | date | None:
    """An ISO 8601 date or date-time: aware UTC when it has an offset or names its zone, naive when it has
    neither, a date alone.

    A time with neither offset nor zone stays a naive wall-clock time: no instant was ever named,
    and the reading printed on the ticket is the one the writer anchors in the user's zone.
    """
    raw = scalar(value)
    if raw is None or len(raw) > 64:
        return None
    match = _MOMENT.fullmatch(raw)
    if match is None:
        return None
    year, month, day, hour, minute, second, offset = match.groups()
    try:
        if hour is None:
            return date(int(year), int(month), int(day))
        wall = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second or 0))
        if offset is None:
            where = zone(_zone_named(value) or "")
            return wall.replace(tzinfo=where).astimezone(UTC) if where is not None else wall
        shift = _offset(offset)
        if shift is None:
            return None
        return (wall - shift).replace(tzinfo=UTC)
    except (ValueError, OverflowError):
        return None


def named_zone(value: object) -> str | None:
    """The IANA zone written beside a time, as KItinerary does (``{"@type": "QDateTime", "@value": …,
    "timezone": "Europe/Zurich"}``), when it is a real zone that agrees with the written offset.

    An offset alone cannot name a zone, but here the zone is named: the event keeps it. A zone that
    contradicts its own offset is not believed, because the instant is the one fact both agree on."""
    name = _zone_named(value)
    where = zone(name) if name else None
    if where is None:
        return None
    instant = moment(value)
    raw = scalar(value) or ""
    match = _MOMENT.fullmatch(raw[:64])
    if not isinstance(instant, datetime) or instant.tzinfo is None or match is None:
        return None
    written = _offset(match.group(7)) if match.group(7) else None
    if written is not None and instant.astimezone(where).utcoffset() != written:
        return None
    return name


def _zone_named(value: object) -> str | None:
    if isinstance(value, list):
        value = value[0] if value else None
    if not isinstance(value, Mapping):
        return None
    name = value.get("timezone")
    return name.strip() if isinstance(name, str) and 0 < len(name.strip()) <= 64 else None


def _offset(text_value: str) -> timedelta | None:
    if text_value.upper() == "Z":
        return timedelta(0)
    sign = -1 if text_value[0] == "-" else 1
    digits = text_value[1:].replace(":", "")
    hours, minutes = (digits, "0") if len(digits) <= 2 else (digits[:-2], digits[-2:])
    if not hours.isdigit() or not minutes.isdigit() or int(hours) > 18 or int(minutes) > 59:
        return None
    return sign * timedelta(hours=int(hours), minutes=int(minutes))


def written_date(value: object) -> str:
    """The calendar date as the sender wrote it (``2027-03-04``), or "": stable whatever the offset."""
    raw = scalar(value)
    match = _MOMENT.match(raw[:64]) if raw else None
    return f"{match.group(1)}-{match.group(2)}-{match.group(3)}" if match else ""


def status_of(*values: object) -> EventStatus:
    """reservationStatus / orderStatus: any spelling of Cancelled cancels, Pending or Hold is tentative."""
    for value in values:
        raw = scalar(value)
        if raw is None:
            continue
        word = raw.rstrip("/").rsplit("/", 1)[-1].strip().lower()[:60]
        if word in _CANCELLED:
            return EventStatus.CANCELLED
        if word in _TENTATIVE:
            return EventStatus.TENTATIVE
    return EventStatus.CONFIRMED


def identity(*parts: str | None) -> str:
    """Identity parts joined by a unit separator (kept apart from the NUL between key parts)."""
    return "\x1f".join(part.replace("\x1f", " ") for part in parts if part)


def place(node: Node | None, limit: int) -> str | None:
    """A place for the location line: its name (with IATA code) and its address."""
    if node is None:
        return None
    name = text(node, "name", limit=limit)
    code = text(node, "iataCode", limit=10)
    if code and name and code.upper() not in name.upper():
        name = f"{name} ({code})"
    address = _address(node.get("address"), limit)
    pieces = [piece for piece in (name or code, address) if piece]
    if len(pieces) == 2 and pieces[1] in pieces[0]:
        pieces.pop()
    return clean_line(", ".join(pieces), limit) if pieces else None


def _address(value: object, limit: int) -> str | None:
    if isinstance(value, list):
        value = next((item for item in value[:5] if isinstance(item, Mapping | str)), None)
    if isinstance(value, Mapping):
        country = value.get("addressCountry")
        lines = [
            text(value, "streetAddress", limit=limit),
            " ".join(filter(None, (text(value, "postalCode", limit=20), text(value, "addressLocality", limit=limit)))),
            text(country, "name", limit=80)
            if isinstance(country, Mapping)
            else text(value, "addressCountry", limit=80),
        ]
        joined = ", ".join(line for line in lines if line)
        return joined or text(value, "name", limit=limit)
    return clean_line(scalar(value), limit)
