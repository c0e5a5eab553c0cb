"""iCalendar bytes to claims: one per UID per VCALENDAR, with its changed instances folded in.

The sender's UID is the identity and ``ics:<UID>`` the dedup key; SEQUENCE is the revision.
Everything is read through icalendar, which keeps a broken property as ``vBroken`` instead of
failing the whole object, so one bad line costs that property, not the invitation.
"""

from __future__ import annotations

import hashlib
import logging
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from icalendar import Calendar, Component
from icalendar.error import GloballyUniqueTZIDGuessed
from icalendar.prop import vBroken, vCalAddress, vRecur

from plmail.calendar.extraction.ics_overrides import component_end, component_status, instance_patches, override_key
from plmail.calendar.extraction.ics_time import IcsClock, Moment
from plmail.calendar.extraction.text import clean_block, clean_line, decode_bytes
from plmail.calendar.jscalendar import JsonObject, format_duration
from plmail.calendar.occurrences import ExpansionBudget
from plmail.calendar.recurrence import rrule_to_jscalendar
from plmail.domain.calendar import EventKind, EventStatus, ExtractedEvent, ItipMethod, Participant

log = logging.getLogger(__name__)

ICS_EXTRACTOR = "ics"
ICS_CONFIDENCE = 100
MAX_CALENDARS = 200
MAX_COMPONENTS = 2_000
MAX_ATTENDEES = 200
MAX_UID = 1_000
MAX_KEY = 128
MAX_TITLE = 500
MAX_LOCATION = 500
MAX_DESCRIPTION = 10_000
MAX_PAYLOAD_CHARS = 512_000
# COUNTER, DECLINECOUNTER, REFRESH and ADD are conversations about an event, not statements of it by its organiser.
_METHODS = {method.value: method for method in ItipMethod}


@dataclass(frozen=True, slots=True)
class IcsParseResult:
    events: tuple[ExtractedEvent, ...]
    skipped: tuple[str, ...]  # one reason per object that produced no claim


def ics_dedup_key(uid: str) -> str:
    """``ics:<UID>``; a UID too long for the key column is keyed by its SHA-256 instead."""
    key = f"ics:{uid}"
    return key if len(key) <= MAX_KEY else f"ics:#{hashlib.sha256(uid.encode()).hexdigest()}"


def parse_ics(
    data: bytes | str, *, charset: str | None = None, part_id: int | None = None, budget: ExpansionBudget | None = None
) -> IcsParseResult:
    """Every claim in one calendar part, in document order; never raises on malformed input.

    ``budget`` bounds the VTIMEZONE rules expanded for the whole part (a fresh one when not given)."""
    budget = budget if budget is not None else ExpansionBudget()
    text = decode_bytes(data, charset) if isinstance(data, bytes) else data.replace("\x00", "")
    try:
        components = _components(text)
    except Exception as error:  # icalendar raises several unrelated types on hostile input
        return IcsParseResult((), (f"unparsable calendar: {type(error).__name__}",))
    events: list[ExtractedEvent] = []
    skipped: list[str] = []
    for component in components[:MAX_CALENDARS]:
        if component.name == "VCALENDAR":
            calendar: Component | None = component
            members = [sub for sub in component.subcomponents if sub.name == "VEVENT"][:MAX_COMPONENTS]
        elif component.name == "VEVENT":  # a bare VEVENT, as some producers send
            calendar, members = None, [component]
        else:
            continue
        _read_calendar(calendar, members, part_id, events, skipped, budget)
    return IcsParseResult(tuple(events), tuple(skipped))


def _components(text: str) -> Sequence[Component]:
    try:
        return _from_ical(text)
    except ValueError:
        # A mailing-list footer or signature glued onto the part after END:VCALENDAR makes the
        # whole text invalid; the calendar between the markers is still what the sender sent.
        upper = text.upper()
        first, last = upper.find("BEGIN:VCALENDAR"), upper.rfind("END:VCALENDAR")
        envelope = text[first : last + len("END:VCALENDAR")] if 0 <= first < last else ""
        if not envelope or envelope.strip() == text.strip():
            raise
        return _from_ical(envelope)


def _from_ical(text: str) -> Sequence[Component]:
    with warnings.catch_warnings():
        # icalendar warns when it strips a vendor prefix off a TZID; zones are resolved in ics_time.
        warnings.simplefilter("ignore", GloballyUniqueTZIDGuessed)
        return Calendar.from_ical(text, multiple=True)


def _read_calendar(
    calendar: Component | None,
    members: Sequence[Component],
    part_id: int | None,
    events: list[ExtractedEvent],
    skipped: list[str],
    budget: ExpansionBudget,
) -> None:
    method_text = str(calendar.get("METHOD", "")).strip().upper() if calendar is not None else ""
    if method_text and method_text not in _METHODS:
        skipped.append(f"method {method_text[:20]} does not state an event")
        return
    method = _METHODS.get(method_text)
    clock = IcsClock(calendar, budget)
    groups: dict[str, tuple[list[Component], list[Component]]] = {}
    for member in members:
        uid = _text(member.get("UID"))
        if not uid or len(uid) > MAX_UID:
            skipped.append("VEVENT without a usable UID")
            continue
        masters, instances = groups.setdefault(uid, ([], []))
        (instances if "RECURRENCE-ID" in member else masters).append(member)
    for uid, (masters, instances) in groups.items():
        try:
            claim = _claim(uid, masters[0] if masters else None, instances, method, clock, calendar, part_id)
        except Exception as error:  # icalendar's typed values can surprise on hostile input: one event, not the part
            log.debug("iCalendar event %r skipped: %s", uid[:80], error)
            claim = f"unreadable VEVENT: {type(error).__name__}"
        if isinstance(claim, str):
            skipped.append(claim)
        else:
            events.append(claim)


def _claim(
    uid: str,
    master: Component | None,
    instances: list[Component],
    method: ItipMethod | None,
    clock: IcsClock,
    calendar: Component | None,
    part_id: int | None,
) -> ExtractedEvent | str:
    anchor = master if master is not None else instances[0]
    start = clock.moment(anchor.get("DTSTART"))
    if master is None:
        start = start or clock.moment(anchor.get("RECURRENCE-ID"))
    if start is None and method not in {ItipMethod.CANCEL, ItipMethod.REPLY}:
        return "VEVENT without a DTSTART"
    zone_name = start.zone_name if start is not None else None
    end = component_end(anchor, start, clock)
    status = EventStatus.CANCELLED if method is ItipMethod.CANCEL else component_status(anchor)
    rules, raw_rrule = _rules(master, start, zone_name)
    overrides = instance_patches(master, instances, clock, zone_name, cancel=method is ItipMethod.CANCEL)
    if master is not None:
        overrides.update(_added_dates(master, clock, zone_name))
    organizer = _participant(anchor.get("ORGANIZER"))
    attendees = tuple(_attendees(anchor.get("ATTENDEE")))
    return ExtractedEvent(
        uid=uid,
        dedup_key=ics_dedup_key(uid),
        extractor=ICS_EXTRACTOR,
        confidence=ICS_CONFIDENCE,
        kind=EventKind.MEETING if organizer is not None or attendees else EventKind.EVENT,
        status=status,
        start=start.value if start is not None else None,
        end=end,
        all_day=start is not None and not isinstance(start.value, datetime),
        title=clean_line(_text(anchor.get("SUMMARY")), MAX_TITLE),
        description=clean_block(_text(anchor.get("DESCRIPTION")), MAX_DESCRIPTION),
        location=clean_line(_text(anchor.get("LOCATION")), MAX_LOCATION),
        time_zone=zone_name,
        sequence=max(_sequence(component) for component in [anchor, *instances]),
        method=method,
        recurrence_rules=rules,
        recurrence_overrides=overrides,
        excluded_dates=tuple(moment.value for moment, _ in clock.moments(master.get("EXDATE")))
        if master is not None
        else (),
        raw_rrule=raw_rrule,
        instance_only=master is None,
        organizer=organizer,
        attendees=attendees,
        source_payload=_payload(calendar, [*([master] if master is not None else []), *instances]),
        part_id=part_id,
    )


def _sequence(component: Component) -> int:
    value = component.get("SEQUENCE")
    if isinstance(value, int) and not isinstance(value, bool):
        return min(max(value, 0), 2**31 - 1)
    return 0


def _rules(
    master: Component | None, start: Moment | None, zone_name: str | None
) -> tuple[tuple[JsonObject, ...], str | None]:
    if master is None or start is None or "RRULE" not in master:
        return (), None  # a cancellation without DTSTART ends the whole series; its rule adds nothing
    props = master["RRULE"] if isinstance(master["RRULE"], list) else [master["RRULE"]]
    converted: list[JsonObject] = []
    texts: list[str] = []
    for prop in props:
        if isinstance(prop, vRecur):
            texts.append(prop.to_ical().decode("utf-8", "replace"))  # type: ignore[no-untyped-call]
            rule = rrule_to_jscalendar(prop, start=start.value, time_zone=zone_name)
            if rule is not None:
                converted.append(rule)
        elif isinstance(prop, vBroken):
            # icalendar gave up on the text (a stray space is enough); the converter reads it once more.
            texts.append(str(prop))
            rule = rrule_to_jscalendar(str(prop).strip(), start=start.value, time_zone=zone_name)
            if rule is not None:
                converted.append(rule)
    if converted and len(converted) == len(texts):
        return tuple(converted), None
    # One refused rule refuses them all: the rest alone would be a different, wrong set of dates.
    return (), "\n".join(texts)[:2_000] or None


def _added_dates(master: Component, clock: IcsClock, zone_name: str | None) -> dict[str, JsonObject]:
    added: dict[str, JsonObject] = {}
    for moment, length in clock.moments(master.get("RDATE")):
        patch: JsonObject = {}
        if length is not None and length > timedelta(0):
            patch["duration"] = format_duration(length)
        added[override_key(moment.value, zone_name)] = patch
    return added


def _participant(prop: object, *, with_status: bool = False) -> Participant | None:
    if not isinstance(prop, vCalAddress):
        return None
    address = str(prop.email or "").strip().lower()
    email = address if "@" in address and len(address) <= 320 and " " not in address else None
    name = clean_line(str(prop.name), 200) if prop.name else None
    if email is None and name is None:
        return None
    partstat = str(prop.params.get("PARTSTAT", "")).strip().lower() or None if with_status else None
    role = str(prop.params.get("ROLE", "")).strip().lower() or None if with_status else None
    return Participant(email=email, name=name, partstat=partstat, role=role)


def _attendees(prop: object) -> Iterable[Participant]:
    props = prop if isinstance(prop, list) else [prop]
    for item in props[:MAX_ATTENDEES]:
        attendee = _participant(item, with_status=True)
        if attendee is not None:
            yield attendee


def _text(value: object) -> str | None:
    if value is None or isinstance(value, vBroken | list):
        return None
    return str(value).strip() or None


def _zones_used(components: Sequence[Component]) -> set[str]:
    used: set[str] = set()
    for component in components:
        for value in component.values():
            for item in value if isinstance(value, list) else [value]:
                params = getattr(item, "params", None)
                tzid = params.get("TZID") if params is not None else None
                if tzid:
                    used.add(str(tzid).strip())
    return used


def _payload(calendar: Component | None, components: Sequence[Component]) -> JsonObject:
    """What was read, verbatim in content: METHOD, the zones, and this UID's VEVENTs, as iCalendar text."""
    holder = Calendar()
    if calendar is not None:
        for name in ("METHOD", "PRODID", "VERSION"):
            if name in calendar:
                holder[name] = calendar[name]
        used = _zones_used(components)  # only these: a calendar of 2,000 zones would repeat them all per event
        for sub in calendar.subcomponents:
            if sub.name == "VTIMEZONE" and str(sub.get("TZID", "")).strip() in used:
                holder.add_component(sub)
    for component in components:
        holder.add_component(component)
    try:
        text = holder.to_ical().decode("utf-8", "replace")
    except Exception as error:  # serialising a vBroken-laden component is icalendar's business
        return {"format": "text/calendar", "error": type(error).__name__}
    if len(text) > MAX_PAYLOAD_CHARS:
        return {"format": "text/calendar", "ical": text[:MAX_PAYLOAD_CHARS], "truncated": True}
    return {"format": "text/calendar", "ical": text}
