"""InviteReader: the cards drawn above messages, for one conversation at a time.

It loads per conversation, not per message: the card is a partial included once per message, so a
lookup by message would be an indexed query for every row of every conversation anyone opens, only
to answer "no invitation" for nearly all of them. It holds nothing between calls (each call returns
fresh DTOs), so no cache can outlive the request that filled it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum

from plmail.calendar.extraction import KITINERARY_EXTRACTOR, STRUCTURED_DATA_EXTRACTOR, IcsEventExtractor
from plmail.calendar.repos.events import CalendarEventRepository
from plmail.calendar.repos.links import EventSourceLinkRepository
from plmail.calendar.rsvp import offers_answer
from plmail.db.repos.identities import IdentityRepository
from plmail.domain.calendar import ACCEPTED_PROPOSAL_EVIDENCE


class CardKind(StrEnum):
    INVITATION = "invitation"
    BOOKING = "booking"
    ACCEPTED = "accepted"  # a proposal of this message the reader added to the calendar


# Which card a link is drawn as, by the extractor that left it (its name constant, never a retyped string).
CARD_BY_EXTRACTOR: Mapping[str, CardKind] = {
    IcsEventExtractor.NAME: CardKind.INVITATION,
    STRUCTURED_DATA_EXTRACTOR: CardKind.BOOKING,
    KITINERARY_EXTRACTOR: CardKind.BOOKING,
    ACCEPTED_PROPOSAL_EVIDENCE: CardKind.ACCEPTED,
}


@dataclass(frozen=True, slots=True)
class CardPerson:
    name: str | None
    email: str | None
    partstat: str | None


@dataclass(frozen=True, slots=True)
class EventCard:
    kind: CardKind
    event_id: int
    title: str | None
    starts_at: datetime
    ends_at: datetime
    all_day: bool
    location: str | None
    status: str
    event_kind: str | None
    organizer: CardPerson | None
    attendees: tuple[CardPerson, ...]
    my_participation: str | None
    applied: bool  # False: this message was read and lost to a newer one
    answerable: bool = False  # Yes/Maybe/No offered: the user is an attendee and the event has not ended

    @property
    def cancelled(self) -> bool:
        return self.status == "cancelled"


def _person(value: object) -> CardPerson | None:
    if not isinstance(value, Mapping):
        return None
    name, email, partstat = value.get("name"), value.get("email"), value.get("partstat")
    return CardPerson(name if isinstance(name, str) else None, email if isinstance(email, str) else None,
                      partstat if isinstance(partstat, str) else None)


class InviteReader:
    def __init__(self, events: CalendarEventRepository, links: EventSourceLinkRepository,
                 identities: IdentityRepository) -> None:
        self.events = events
        self.links = links
        self.identities = identities

    async def cards_for_thread(self, user_id: int, thread_id: int, *, now: datetime | None = None
                               ) -> dict[int, list[EventCard]]:
        """Cards by message id; three queries for the whole conversation, whatever its length."""
        links = await self.links.for_thread(user_id, thread_id)
        if not links:
            return {}
        events = await self.events.by_ids(user_id, [link.event_id for link in links])
        own = {identity.email.lower() for identity in await self.identities.for_user(user_id)}
        moment = now or datetime.now(UTC)
        cards: dict[int, list[EventCard]] = {}
        shown: set[tuple[int, int]] = set()
        for link in sorted(links, key=lambda item: item.extractor != IcsEventExtractor.NAME):
            kind = CARD_BY_EXTRACTOR.get(link.extractor)
            event = events.get(link.event_id)
            if kind is None or event is None or (link.message_id, link.event_id) in shown:
                continue
            shown.add((link.message_id, link.event_id))
            values = event.values
            people = [_person(a) for a in values.attendees]
            cards.setdefault(link.message_id, []).append(EventCard(
                kind=kind, event_id=event.id, title=values.title, starts_at=values.starts_at,
                ends_at=values.ends_at, all_day=values.is_all_day, location=values.location, status=values.status,
                event_kind=values.kind, organizer=_person(values.organizer),
                attendees=tuple(p for p in people if p is not None), my_participation=values.my_participation,
                applied=link.applied,
                answerable=kind is CardKind.INVITATION and offers_answer(values, own, moment),
            ))
        return cards
