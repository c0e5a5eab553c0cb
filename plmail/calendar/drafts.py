"""From an extractor's claim to what the writer stores: source, people, participation, recurrence."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from plmail.calendar.extraction import (
    ICS_EXTRACTOR,
    KITINERARY_EXTRACTOR,
    STRUCTURED_DATA_EXTRACTOR,
    ExtractedEvent,
    Participant,
)
from plmail.calendar.extraction.claims import override_key
from plmail.calendar.sources import EventSource
from plmail.calendar.writer import EventDraft

# Which source an extractor's claims carry. A new extractor must be listed here before anything it
# claims is written: an unlisted one would otherwise inherit some other source's permissions.
SOURCE_BY_EXTRACTOR: Mapping[str, EventSource] = {
    ICS_EXTRACTOR: EventSource.ICS,
    STRUCTURED_DATA_EXTRACTOR: EventSource.STRUCTURED_DATA,
    # KItinerary's output is schema.org data too, read deterministically; the link names who read it.
    KITINERARY_EXTRACTOR: EventSource.STRUCTURED_DATA,
}
ANSWERED = frozenset({"accepted", "declined", "tentative", "delegated"})


def person(participant: Participant) -> dict[str, Any]:
    return {"email": participant.email, "name": participant.name, "partstat": participant.partstat,
            "role": participant.role}


def my_participation(attendees: Collection[Mapping[str, Any]], addresses: Collection[str]) -> str | None:
    """The user's own PARTSTAT among the attendees; None when the user is not invited."""
    for attendee in attendees:
        email = attendee.get("email")
        if isinstance(email, str) and email.lower() in addresses:
            status = attendee.get("partstat")
            return status if isinstance(status, str) and status else "needs-action"
    return None


def merged_participation(current: str | None, claimed: str | None, *, newer_revision: bool) -> str | None:
    """A stale NEEDS-ACTION never un-answers: only a new revision (which organisers send when the
    time changes) may ask the user again."""
    if claimed == "needs-action" and current in ANSWERED and not newer_revision:
        return current
    return claimed if claimed is not None else current


def draft_from_claim(
    claim: ExtractedEvent, source: EventSource, addresses: Collection[str], *, single: bool = False
) -> EventDraft:
    """The claim as a draft; ``single`` writes an instance-only claim as the one event it describes,
    because without its series its overrides would name instances that do not exist."""
    assert claim.start is not None, "only a claim with a start becomes a row"
    attendees = tuple(person(a) for a in claim.attendees)
    with_series = not (single or claim.instance_only)
    return EventDraft(
        uid=claim.uid,
        start=claim.start,
        end=claim.end,
        title=claim.title,
        location=claim.location,
        description=claim.description,
        time_zone=claim.time_zone,
        status=claim.status,
        kind=claim.kind,
        source=source,
        confidence=claim.confidence,
        sequence=claim.sequence,
        recurrence_rules=claim.recurrence_rules if with_series else (),
        recurrence_overrides=claim.recurrence_overrides if with_series else {},
        excluded=tuple(override_key(value, claim.time_zone) for value in claim.excluded_dates) if with_series else (),
        raw_rrule=claim.raw_rrule if with_series else None,
        organizer=person(claim.organizer) if claim.organizer is not None else None,
        attendees=attendees,
        my_participation=my_participation(attendees, addresses),
    )


def with_reply(attendees: list[dict[str, Any]], replies: Collection[Participant]) -> list[dict[str, Any]]:
    """Attendees with the answers of a REPLY merged in by address (someone new is added)."""
    merged = [dict(a) for a in attendees]
    for reply in replies:
        if reply.email is None:
            continue
        match = next((a for a in merged if str(a.get("email") or "").lower() == reply.email), None)
        if match is None:
            merged.append(person(reply))
        elif reply.partstat:
            match["partstat"] = reply.partstat
    return merged
