"""EventReconciler: turns claims into what the calendar shows, and files every claim with its evidence.

A booking's life happens here: a confirmation, then a change, then a cancellation, spread over a
conversation and not always in order. Getting it wrong shows as three copies of one dinner, or as a
meeting that quietly cancels itself because an older mail was synced last. Six rules:

1. Identity is the UID, unique per calendar (for an invitation, the sender's own UID verbatim).
2. The later revision wins: by SEQUENCE, then by when the mail arrived; an older revision arriving
   late is filed, not applied.
3. A superseded claim is still linked, with ``applied`` false and its payload: that is what answers
   "why is this on my calendar?", the difference between a chain of evidence and a guess.
4. A cancel sets a status and never deletes; every occurrence is marked cancelled.
5. An event a person edited is never overwritten.
6. Nor is an event whose source mail was never responsible for (``may_be_rewritten_by_mail``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from plmail.calendar.drafts import (
    SOURCE_BY_EXTRACTOR,
    draft_from_claim,
    merged_participation,
    my_participation,
    with_reply,
)
from plmail.calendar.extraction import EventStatus, ExtractedEvent, ItipMethod
from plmail.calendar.repos.events import CalendarEventRepository
from plmail.calendar.repos.links import EventSourceLinkRepository, LinkValues
from plmail.calendar.resolver import ExtractedEventCalendarResolver
from plmail.calendar.sources import EventSource
from plmail.calendar.suppression import EventSuppressor
from plmail.calendar.writer import OVERRIDES, CalendarEventWriter, stored_instant
from plmail.domain.calendar import StoredEvent

log = logging.getLogger(__name__)


class Outcome(StrEnum):
    CREATED = "created"
    APPLIED = "applied"
    STALE = "stale"  # an older revision than the event holds
    USER_EDITED = "user_edited"
    NOT_MAIL_OWNED = "not_mail_owned"
    SUPPRESSED = "suppressed"
    NO_EVENT = "no_event"  # a reply, or a cancel without a time, about an event the user does not have
    DUPLICATE = "duplicate"  # lost to a higher-priority extractor's claim on the same dedup key
    UNKNOWN_SOURCE = "unknown_source"


@dataclass(frozen=True, slots=True)
class MessageFacts:
    """The message a batch of claims came from, and the facts about its owner the rules need."""

    message_id: int
    user_id: int
    account_id: int | None
    arrived_at: datetime | None
    user_zone: str
    addresses: frozenset[str]


@dataclass(frozen=True, slots=True)
class ClaimOutcome:
    dedup_key: str
    uid: str
    extractor: str
    outcome: Outcome
    event_ids: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class ReconcileReport:
    outcomes: tuple[ClaimOutcome, ...]


def _not_mail_owned(event: StoredEvent) -> bool:
    source = EventSource._value2member_map_.get(event.values.source)
    return not (isinstance(source, EventSource) and source.may_be_rewritten_by_mail())


def _organised_by(event: StoredEvent, addresses: frozenset[str]) -> bool:
    organizer = event.values.organizer
    email = str(organizer.get("email") or "").lower() if isinstance(organizer, dict) else ""
    return bool(email) and email in {a.lower() for a in addresses}


# Rules 6 and 5, in order: the first that holds files the claim without applying it.
_GUARDS: tuple[tuple[Outcome, Callable[[StoredEvent], bool]], ...] = (
    (Outcome.NOT_MAIL_OWNED, _not_mail_owned),
    (Outcome.USER_EDITED, lambda event: event.is_user_edited),
)


class EventReconciler:
    """Joins the caller's transaction. Inside it an inserted event is visible to the next lookup, so
    same-UID claims in one batch find the row the first one made and become one event; the unique
    (calendar, uid) index is the last line of defence against a concurrent batch."""

    def __init__(
        self,
        events: CalendarEventRepository,
        links: EventSourceLinkRepository,
        writer: CalendarEventWriter,
        resolver: ExtractedEventCalendarResolver,
        suppressor: EventSuppressor,
    ) -> None:
        self.events = events
        self.links = links
        self.writer = writer
        self.resolver = resolver
        self.suppressor = suppressor

    async def reconcile(
        self, facts: MessageFacts, claims: Sequence[ExtractedEvent], superseded: Sequence[ExtractedEvent] = ()
    ) -> ReconcileReport:
        # Suppression is asked before anything is created, for winners and losers alike.
        suppressed = await self.suppressor.suppressed_keys(
            facts.user_id, [claim.dedup_key for claim in (*claims, *superseded)]
        )
        outcomes: list[ClaimOutcome] = []
        placed: dict[str, tuple[int, ...]] = {}
        for claim in claims:
            outcome = await self._claim(facts, claim, suppressed)
            placed.setdefault(claim.dedup_key, outcome.event_ids)
            outcomes.append(outcome)
        for loser in superseded:
            if loser.dedup_key in suppressed:
                outcomes.append(_outcome(loser, Outcome.SUPPRESSED))
                continue
            event_ids = placed.get(loser.dedup_key, ())
            for event_id in event_ids:
                await self._link(facts, event_id, loser, applied=False)
            outcomes.append(_outcome(loser, Outcome.DUPLICATE, event_ids))
        return ReconcileReport(tuple(outcomes))

    async def _claim(self, facts: MessageFacts, claim: ExtractedEvent, suppressed: set[str]) -> ClaimOutcome:
        if claim.dedup_key in suppressed:
            return _outcome(claim, Outcome.SUPPRESSED)
        source = SOURCE_BY_EXTRACTOR.get(claim.extractor)
        if source is None:
            log.warning("claims of extractor %r are not written: it has no EventSource", claim.extractor)
            return _outcome(claim, Outcome.UNKNOWN_SOURCE)
        copies = await self.events.by_uid(facts.user_id, claim.uid)
        if not copies:
            if claim.method is ItipMethod.REPLY or claim.start is None:
                return _outcome(claim, Outcome.NO_EVENT)  # a reply never creates; no time, nothing to show
            calendar_id = await self.resolver.resolve(facts.user_id, facts.account_id)
            draft = draft_from_claim(claim, source, facts.addresses, single=claim.instance_only)
            created = await self.writer.create(
                calendar_id, facts.user_id, draft, user_zone=facts.user_zone, reference=_reference(facts, claim)
            )
            if created is not None:
                await self._link(facts, created, claim, applied=True)
                return _outcome(claim, Outcome.CREATED, (created,))
            copies = await self.events.by_uid(facts.user_id, claim.uid)  # a concurrent batch won the insert
            if not copies:  # the target calendar vanished under us; the next message will try again
                log.warning("event %r for user %s was not written: its calendar is gone", claim.uid, facts.user_id)
                return _outcome(claim, Outcome.NO_EVENT)
        verdicts: list[Outcome] = []
        for event in copies:  # each copy is judged on its own
            verdict = await self._verdict(facts, claim, event)
            if verdict is Outcome.APPLIED:
                await self._apply(facts, claim, event, source)
            await self._link(facts, event.id, claim, applied=verdict is Outcome.APPLIED)
            verdicts.append(verdict)
        best = Outcome.APPLIED if Outcome.APPLIED in verdicts else verdicts[0]
        return _outcome(claim, best, tuple(event.id for event in copies))

    async def _verdict(self, facts: MessageFacts, claim: ExtractedEvent, event: StoredEvent) -> Outcome:
        if claim.method is ItipMethod.REPLY and _organised_by(event, facts.addresses):
            # A guest's answer to the user's own invitation is the organiser's to record (RFC 5546 §3.2.3) and
            # changes only that guest's participation, never the event the user made: rules 5 and 6 stay out.
            return Outcome.APPLIED if await self._supersedes(facts, claim, event) else Outcome.STALE
        for outcome, holds in _GUARDS:
            if holds(event):
                return outcome
        return Outcome.APPLIED if await self._supersedes(facts, claim, event) else Outcome.STALE

    async def _supersedes(self, facts: MessageFacts, claim: ExtractedEvent, event: StoredEvent) -> bool:
        """Rule 2. A reply answers the revision it names, so only an older SEQUENCE makes it stale."""
        if claim.method is ItipMethod.REPLY:
            return claim.sequence >= event.sequence
        if claim.sequence != event.sequence:
            return claim.sequence > event.sequence
        latest = await self.links.latest_applied_arrival(facts.user_id, event.id)
        if latest is None:
            return True
        return facts.arrived_at is not None and facts.arrived_at >= latest

    async def _apply(self, facts: MessageFacts, claim: ExtractedEvent, event: StoredEvent, source: EventSource) -> None:
        reference = _reference(facts, claim, event)
        if claim.method is ItipMethod.REPLY:
            # Participation only: a reply never moves an event.
            attendees = with_reply(event.values.attendees, claim.attendees)
            mine = my_participation(attendees, facts.addresses) or event.values.my_participation
            await self.writer.set_people(event, attendees, mine)
        elif claim.instance_only:
            # Changed instances patch the series the user has; their own status never speaks for it.
            recurrence = dict(event.values.recurrence)
            stored = recurrence.get(OVERRIDES)
            recurrence[OVERRIDES] = {**(stored if isinstance(stored, dict) else {}), **claim.recurrence_overrides}
            values = replace(event.values, recurrence=recurrence, sequence=max(event.sequence, claim.sequence))
            await self.writer.store(event.id, values, user_zone=facts.user_zone, reference=reference)
        elif claim.status is EventStatus.CANCELLED or claim.start is None:
            await self.writer.cancel(event, sequence=claim.sequence)
        else:
            draft = draft_from_claim(claim, source, facts.addresses)
            if claim.sequence == event.sequence:
                # The same revision restated: instance changes already applied to it still hold.
                stored = event.values.recurrence.get(OVERRIDES)
                draft = replace(draft, recurrence_overrides={
                    **(stored if isinstance(stored, dict) else {}), **draft.recurrence_overrides})
            draft = replace(draft, my_participation=merged_participation(
                event.values.my_participation, draft.my_participation, newer_revision=claim.sequence > event.sequence
            ))
            await self.writer.rewrite(event, draft, user_zone=facts.user_zone, reference=reference)

    async def _link(self, facts: MessageFacts, event_id: int, claim: ExtractedEvent, *, applied: bool) -> None:
        await self.links.upsert(facts.user_id, LinkValues(
            event_id=event_id, message_id=facts.message_id, part_id=claim.part_id, extractor=claim.extractor,
            confidence=claim.confidence, dedup_key=claim.dedup_key, applied=applied, payload=claim.source_payload,
        ))


def _reference(facts: MessageFacts, claim: ExtractedEvent, event: StoredEvent | None = None) -> datetime:
    """The instant occurrences are materialised around: when the mail arrived, never the clock."""
    if facts.arrived_at is not None:
        return facts.arrived_at
    if event is not None:
        return event.values.starts_at
    assert claim.start is not None
    return stored_instant(claim.start, facts.user_zone)


def _outcome(claim: ExtractedEvent, outcome: Outcome, event_ids: tuple[int, ...] = ()) -> ClaimOutcome:
    return ClaimOutcome(claim.dedup_key, claim.uid, claim.extractor, outcome, event_ids)
