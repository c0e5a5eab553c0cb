"""calendar-query and addressbook-query filters (RFC 4791 §9.7, RFC 6352 §10.5): the time range goes to the
calendar's occurrence index, property tests are run over the objects it returned. What is not understood is
refused (CALDAV:supported-filter) rather than ignored, so a client never mistakes a superset for an answer."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from icalendar import Calendar
from lxml import etree  # type: ignore[import-untyped]

from plmail.dav.xml import CALDAV, CARDDAV, name

_COLLATIONS = frozenset({"i;ascii-casemap", "i;octet", "i;unicode-casemap"})
_MATCH_TYPES = frozenset({"equals", "contains", "starts-with", "ends-with"})
_CALENDAR_COMPONENTS = frozenset({"VEVENT", "VTODO", "VJOURNAL", "VFREEBUSY", "VAVAILABILITY"})


class FilterError(ValueError):
    """A filter this server does not evaluate: 403 with supported-filter."""


@dataclass(frozen=True, slots=True)
class TextMatch:
    text: str
    collation: str
    match_type: str
    negate: bool

    def test(self, value: str) -> bool:
        needle, hay = (self.text, value) if self.collation == "i;octet" else (self.text.casefold(), value.casefold())
        found = {
            "equals": hay == needle, "contains": needle in hay, "starts-with": hay.startswith(needle),
            "ends-with": hay.endswith(needle),
        }[self.match_type]
        return found != self.negate


@dataclass(frozen=True, slots=True)
class PropTest:
    name: str
    absent: bool  # is-not-defined
    matches: tuple[TextMatch, ...]
    all_of: bool

    def test(self, values: Sequence[str]) -> bool:
        if self.absent:
            return not values
        if not values:
            return False
        if not self.matches:
            return True
        results = [any(m.test(v) for v in values) for m in self.matches]
        return all(results) if self.all_of else any(results)


@dataclass(slots=True)
class Plan:
    start: datetime | None = None
    end: datetime | None = None
    nothing: bool = False  # the filter asks for components this collection never has
    props: list[PropTest] = field(default_factory=list)
    all_of: bool = True
    values: Callable[[bytes, str], list[str]] | None = None

    @property
    def needs_data(self) -> bool:
        return bool(self.props)

    def matches(self, data: bytes) -> bool:
        if self.values is None or not self.props:
            return True
        results = [test.test(self.values(data, test.name)) for test in self.props]
        return all(results) if self.all_of else any(results)


def _text_match(node: etree._Element, *, carddav: bool) -> TextMatch:
    collation = node.get("collation", "i;unicode-casemap" if carddav else "i;ascii-casemap")
    match_type = node.get("match-type", "contains") if carddav else "contains"
    if collation not in _COLLATIONS or match_type not in _MATCH_TYPES:
        raise FilterError(f"The collation {collation} or match type {match_type} is not supported.")
    return TextMatch(node.text or "", collation, match_type, node.get("negate-condition", "no") == "yes")


def _prop_test(node: etree._Element, namespace: str) -> PropTest:
    carddav = namespace == CARDDAV
    absent = node.find(name(namespace, "is-not-defined")) is not None
    for child in node:
        if child.tag not in (name(namespace, "is-not-defined"), name(namespace, "text-match")):
            raise FilterError(f"{etree.QName(child).localname} inside a prop-filter is not supported.")
    matches = tuple(_text_match(m, carddav=carddav) for m in node.findall(name(namespace, "text-match")))
    return PropTest(str(node.get("name", "")).upper(), absent, matches, node.get("test", "anyof") == "allof")


def _utc(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.strptime(text.strip(), "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError:
        raise FilterError(f"{text} is not a UTC date-time (RFC 4791 §9.9).") from None


def plan(calendar: bool, root: etree._Element) -> Plan:
    return _calendar_plan(root) if calendar else _card_plan(root)


def _calendar_plan(root: etree._Element) -> Plan:
    result = Plan(values=_event_values)
    top = root.find(f"{name(CALDAV, 'filter')}/{name(CALDAV, 'comp-filter')}")
    if top is None:
        return result
    if top.get("name", "").upper() != "VCALENDAR" or top.find(name(CALDAV, "is-not-defined")) is not None:
        result.nothing = True
        return result
    inner = top.findall(name(CALDAV, "comp-filter"))
    if len(inner) > 1:
        raise FilterError("One component filter below VCALENDAR is supported.")
    if not inner:
        return result
    component = inner[0]
    kind = component.get("name", "").upper()
    if kind != "VEVENT":
        if kind in _CALENDAR_COMPONENTS:
            result.nothing = component.find(name(CALDAV, "is-not-defined")) is None
            return result
        raise FilterError(f"{kind} is not a calendar component this server keeps.")
    for child in component:
        if child.tag == name(CALDAV, "time-range"):
            result.start, result.end = _utc(child.get("start")), _utc(child.get("end"))
            if result.start is None and result.end is None:
                raise FilterError("A time-range needs a start or an end.")
        elif child.tag == name(CALDAV, "prop-filter"):
            result.props.append(_prop_test(child, CALDAV))
        elif child.tag == name(CALDAV, "is-not-defined"):
            result.nothing = True
        else:
            raise FilterError(f"{etree.QName(child).localname} inside VEVENT is not supported.")
    return result


def _card_plan(root: etree._Element) -> Plan:
    result = Plan(values=_card_values)
    node = root.find(name(CARDDAV, "filter"))
    if node is None:
        return result
    result.all_of = node.get("test", "anyof") == "allof"
    for child in node:
        if child.tag != name(CARDDAV, "prop-filter"):
            raise FilterError(f"{etree.QName(child).localname} is not supported in a CardDAV filter.")
        result.props.append(_prop_test(child, CARDDAV))
    return result


def expansion(root: etree._Element) -> tuple[datetime, datetime] | None:
    """The ``CALDAV:expand`` range of a report's calendar-data, when it asks for one."""
    node = root.find(f".//{name(CALDAV, 'calendar-data')}/{name(CALDAV, 'expand')}")
    if node is None:
        return None
    start, end = _utc(node.get("start")), _utc(node.get("end"))
    if start is None or end is None or end <= start:
        raise FilterError("expand needs a start before its end.")
    return start, end


def _event_values(data: bytes, prop: str) -> list[str]:
    try:
        calendar = Calendar.from_ical(data)
    except ValueError:
        return []
    found: list[str] = []
    for component in calendar.walk("VEVENT"):
        value = component.get(prop)
        for item in value if isinstance(value, list) else ([value] if value is not None else []):
            found.append(item.to_ical().decode("utf-8") if hasattr(item, "to_ical") else str(item))
    return found


def unfolded_lines(data: bytes) -> list[str]:
    """A vCard's content lines with folding undone (RFC 6350 §3.2)."""
    lines: list[str] = []
    for raw in data.decode("utf-8", "replace").splitlines():
        if raw[:1] in (" ", "\t") and lines:
            lines[-1] += raw[1:]
        elif raw:
            lines.append(raw)
    return lines


def _card_values(data: bytes, prop: str) -> list[str]:
    found: list[str] = []
    for line in unfolded_lines(data):
        head, _, value = line.partition(":")
        key = head.split(";", 1)[0].rsplit(".", 1)[-1].upper()
        if key == prop:
            found.append(value.replace("\\,", ",").replace("\\;", ";").replace("\\n", "\n"))
    return found
