"""What an extractor says about a message: a claim about an event, not a calendar row.

Whether a claim becomes a row, updates one, or is filed as a superseded duplicate is the
reconciler's decision; keeping the two apart is what lets several extractors read one message
and disagree without any of them writing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum

from plmail.calendar.jscalendar import JsonObject, JsonValue, format_duration, local_datetime
from plmail.calendar.timezones import zone

# Bump when an extractor changes how it derives dedup keys: stored links carry the version they were keyed with.
DEDUP_KEY_VERSION = 1
NOMINAL_LENGTH = timedelta(hours=1)


class EventStatus(StrEnum):
    CONFIRMED = "confirmed"
    TENTATIVE = "tentative"
    CANCELLED = "cancelled"


class EventKind(StrEnum):
    MEETING = "meeting"
    EVENT = "event"
    DELIVERY = "delivery"
    FLIGHT = "flight"
    TRAIN = "train"
    BUS = "bus"
    LODGING = "lodging"
    DINING = "dining"
    RENTAL = "rental"
    TICKET = "ticket"
    ORDER = "order"


class ItipMethod(StrEnum):
    """The iTIP method of the calendar object a claim came from (RFC 5546)."""

    PUBLISH = "PUBLISH"
    REQUEST = "REQUEST"
    CANCEL = "CANCEL"
    # An attendee's answer to the organiser: it carries participation only and never creates or moves an event.
    REPLY = "REPLY"


@dataclass(frozen=True, slots=True)
class Participant:
    email: str | None
    name: str | None
    partstat: str | None = None  # lower-case iCalendar PARTSTAT: needs-action, accepted, declined, tentative …
    role: str | None = None  # lower-case iCalendar ROLE: chair, req-participant, opt-participant …


@dataclass(frozen=True, slots=True)
class ExtractedEvent:
    """One extractor's claim about one event in one message.

    Times: ``start``/``end`` are aware UTC datetimes, or dates for all-day events (``end``
    exclusive), or naive datetimes for floating times that named neither zone nor offset — those
    are anchored in the user's zone by whoever writes them (see :func:`anchored`). ``start`` is
    None only for a cancellation or a reply that did not repeat the time. ``time_zone`` is the
    IANA zone the sender named, never one derived from an offset.

    ``recurrence_rules`` and ``recurrence_overrides`` are JSCalendar ``recurrenceRules`` and
    ``recurrenceOverrides`` (keys are LocalDateTimes in ``time_zone``, else UTC, else floating);
    ``raw_rrule`` keeps a rule the converter refused, and then the event appears once.
    ``instance_only`` marks a message that carried only changed instances of a series it did not
    include: the reconciler applies the overrides to the series it has, and never lets the
    instance's own status speak for the whole series.
    """

    uid: str
    dedup_key: str
    extractor: str
    confidence: int
    kind: EventKind
    status: EventStatus
    start: datetime | date | None
    end: datetime | date | None
    all_day: bool
    title: str | None = None
    description: str | None = None
    location: str | None = None
    time_zone: str | None = None
    sequence: int = 0
    method: ItipMethod | None = None
    recurrence_rules: tuple[JsonObject, ...] = ()
    recurrence_overrides: Mapping[str, JsonObject] = field(default_factory=dict)
    excluded_dates: tuple[datetime | date, ...] = ()
    raw_rrule: str | None = None
    instance_only: bool = False
    organizer: Participant | None = None
    attendees: tuple[Participant, ...] = ()
    source_payload: JsonObject = field(default_factory=dict)
    part_id: int | None = None

    @property
    def is_floating(self) -> bool:
        return isinstance(self.start, datetime) and self.start.tzinfo is None

    @property
    def is_recurring(self) -> bool:
        return bool(self.recurrence_rules)

    def jscalendar(self) -> JsonObject:
        """The event as a JSCalendar Event object (RFC 8984), the canonical stored form."""
        event: JsonObject = {"@type": "Event", "uid": self.uid, "sequence": self.sequence, "status": self.status.value}
        if self.title is not None:
            event["title"] = self.title
        if self.description is not None:
            event["description"] = self.description
        if self.location is not None:
            event["locations"] = {"1": {"@type": "Location", "name": self.location}}
        if self.start is not None:
            event.update(_timing(self))
        if self.recurrence_rules:
            event["recurrenceRules"] = list(self.recurrence_rules)
        overrides: dict[str, JsonValue] = dict(self.recurrence_overrides)
        for excluded in self.excluded_dates:
            overrides[override_key(excluded, self.time_zone)] = {"excluded": True}
        if overrides:
            event["recurrenceOverrides"] = overrides
        if self.raw_rrule is not None:
            event["plmail:rrule"] = self.raw_rrule  # only ever the fallback for a rule the converter refused
        if self.method is not None:
            event["method"] = self.method.value.lower()
        people = _participants(self)
        if people:
            event["participants"] = people
        return event


def nominal_end(start: datetime | date, end: datetime | date | None) -> datetime | date:
    """The end to show: the event's own if it is after the start, else a day, else a nominal hour.

    iCalendar reads a timed event without end or duration as zero-length, and a zero-length row is
    invisible in every calendar view, so it gets a nominal hour instead.
    """
    if end is not None and isinstance(end, datetime) == isinstance(start, datetime):
        try:
            if end > start:
                return end
        except TypeError:  # one aware, one naive: not comparable, so not trusted
            pass
    if isinstance(start, datetime):
        return start + NOMINAL_LENGTH
    return start + timedelta(days=1)


def override_key(recurrence_id: datetime | date, time_zone: str | None) -> str:
    """The recurrenceOverrides key for an instance: its LocalDateTime in the event's zone (else UTC)."""
    if isinstance(recurrence_id, datetime) and recurrence_id.tzinfo is not None:
        where = zone(time_zone) if time_zone else None
        return local_datetime(recurrence_id.astimezone(where or UTC))
    return local_datetime(recurrence_id)


def anchored(event: ExtractedEvent, time_zone: str) -> ExtractedEvent:
    """A floating claim with its wall-clock times read in ``time_zone`` (the user's), as UTC instants."""
    where = zone(time_zone)
    if where is None or not event.is_floating:
        return event

    def instant(value: datetime | date | None) -> datetime | date | None:
        if isinstance(value, datetime) and value.tzinfo is None:
            return value.replace(tzinfo=where).astimezone(UTC)
        return value

    return replace(event, start=instant(event.start), end=instant(event.end))


def _timing(event: ExtractedEvent) -> JsonObject:
    start = event.start
    assert start is not None
    timing: JsonObject = {}
    if event.all_day:
        timing["showWithoutTime"] = True
    where = zone(event.time_zone) if event.time_zone else None
    if isinstance(start, datetime) and start.tzinfo is not None:
        # JSCalendar has no "instant without zone": a null timeZone there means floating, so an
        # instant whose sender named no zone is written in Etc/UTC (the claim's time_zone stays None).
        local = start.astimezone(where) if where is not None else start.astimezone(UTC)
        timing["start"] = local_datetime(local)
        timing["timeZone"] = event.time_zone if where is not None else "Etc/UTC"
    else:
        timing["start"] = local_datetime(start)
        timing["timeZone"] = None  # floating, or an all-day date: both are read on the viewer's own clock
    end = nominal_end(start, event.end)
    timing["duration"] = format_duration(end - start)
    return timing


def _participants(event: ExtractedEvent) -> dict[str, JsonValue]:
    people: dict[str, JsonValue] = {}
    if event.organizer is not None:
        people["organizer"] = _participant(event.organizer, {"owner": True})
    for index, attendee in enumerate(event.attendees, start=1):
        people[f"attendee-{index}"] = _participant(attendee, _ROLES.get(attendee.role or "", {"attendee": True}))
    return people


_ROLES: dict[str, JsonObject] = {
    "chair": {"attendee": True, "chair": True},
    "req-participant": {"attendee": True},
    "opt-participant": {"attendee": True, "optional": True},
    "non-participant": {"informational": True},
}


def _participant(person: Participant, roles: JsonObject) -> JsonObject:
    shaped: JsonObject = {"@type": "Participant", "roles": dict(roles)}
    if person.name:
        shaped["name"] = person.name
    if person.email:
        shaped["email"] = person.email
        shaped["sendTo"] = {"imip": f"mailto:{person.email}"}
    if person.partstat:
        shaped["participationStatus"] = person.partstat
    return shaped
