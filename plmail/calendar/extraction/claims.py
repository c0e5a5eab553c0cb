"""What an extractor says about a message: a claim about an event, not a calendar row.

Whether a claim becomes a row, updates one, or is filed as a superseded duplicate is the
reconciler's decision; keeping the two apart is what lets several extractors read one message
and disagree without any of them writing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

from plmail.calendar.jscalendar import JsonObject, JsonValue, format_duration, local_datetime
from plmail.calendar.timezones import zone
from plmail.domain.calendar import ExtractedEvent, Participant

# Bump when an extractor changes how it derives dedup keys: stored links carry the version they were keyed with.
DEDUP_KEY_VERSION = 1
NOMINAL_LENGTH = timedelta(hours=1)


def jscalendar(claim: ExtractedEvent) -> JsonObject:
    """The claim as a JSCalendar Event object (RFC 8984), the canonical stored form."""
    event: JsonObject = {"@type": "Event", "uid": claim.uid, "sequence": claim.sequence, "status": claim.status.value}
    if claim.title is not None:
        event["title"] = claim.title
    if claim.description is not None:
        event["description"] = claim.description
    if claim.location is not None:
        event["locations"] = {"1": {"@type": "Location", "name": claim.location}}
    if claim.start is not None:
        event.update(_timing(claim))
    if claim.recurrence_rules:
        event["recurrenceRules"] = list(claim.recurrence_rules)
    overrides: dict[str, JsonValue] = dict(claim.recurrence_overrides)
    for excluded in claim.excluded_dates:
        overrides[override_key(excluded, claim.time_zone)] = {"excluded": True}
    if overrides:
        event["recurrenceOverrides"] = overrides
    if claim.raw_rrule is not None:
        event["plmail:rrule"] = claim.raw_rrule  # only ever the fallback for a rule the converter refused
    if claim.method is not None:
        event["method"] = claim.method.value.lower()
    people = _participants(claim)
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
    return participants_object(event.organizer, event.attendees)


def participants_object(organizer: Participant | None, attendees: Sequence[Participant]) -> dict[str, JsonValue]:
    """JSCalendar ``participants``: the organiser as owner, each attendee with the roles iCalendar gave."""
    people: dict[str, JsonValue] = {}
    if organizer is not None:
        people["organizer"] = _participant(organizer, {"owner": True})
    for index, attendee in enumerate(attendees, start=1):
        people[f"attendee-{index}"] = _participant(attendee, _ROLES.get(attendee.role or "", {"attendee": True}))
    return people


def participant_address(organizer: object, attendees: Sequence[object], participant_id: str) -> str | None:
    """The address of the participant `participants_object` named `participant_id` (stored people: dicts with
    an "email"), or None when no such participant has one."""
    person: object = None
    if participant_id == "organizer":
        person = organizer
    elif participant_id.startswith("attendee-") and participant_id[9:].isdigit():
        index = int(participant_id[9:]) - 1
        person = attendees[index] if 0 <= index < len(attendees) else None
    email = person.get("email") if isinstance(person, dict) else None
    return email.strip().lower() if isinstance(email, str) and email.strip() else None


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
