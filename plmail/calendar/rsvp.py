"""Answering an invitation: the user's PARTSTAT recorded on the event, and an iTIP REPLY (RFC 5546 §3.2.3)
sent to the organiser, carried as RFC 6047 says (a text/calendar part with method=REPLY beside the text).

The answer is the user's even when it cannot be sent: it is recorded first, and a send that is refused or
fails later says so (the outbox shows the REPLY with its reason, back in Drafts) without undoing it.
"Answer without sending" records it and sends nothing, as every calendar client offers.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

import icalendar

from plmail.calendar.extraction.claims import participant_address
from plmail.calendar.jscalendar import parse_local_datetime
from plmail.calendar.occurrences import materialise_occurrences
from plmail.calendar.repos.events import CalendarEventRepository
from plmail.calendar.repos.links import EventSourceLinkRepository
from plmail.calendar.writer import EXCLUDED, OVERRIDES, RULES, frame_times
from plmail.db.database import Database
from plmail.db.repos.users import UserRepository
from plmail.domain.calendar import EventStatus, EventValues, StoredEvent
from plmail.domain.enums import Locale
from plmail.domain.errors import ForbiddenError, NotFoundError, PlmailError, ValidationError
from plmail.domain.messages import Address
from plmail.domain.outgoing import CalendarReply, DraftContent, Identity
from plmail.mail.public import DraftService, IdentityService, OutboxService

log = logging.getLogger(__name__)


class RsvpAnswer(StrEnum):
    """The three answers an invitation card offers, as the lower-case PARTSTAT the event stores."""

    ACCEPTED = "accepted"
    TENTATIVE = "tentative"
    DECLINED = "declined"

    @property
    def partstat(self) -> str:
        return self.value.upper()


_SUBJECTS = {
    Locale.EN: {RsvpAnswer.ACCEPTED: "Accepted", RsvpAnswer.TENTATIVE: "Tentative", RsvpAnswer.DECLINED: "Declined"},
    Locale.DE: {RsvpAnswer.ACCEPTED: "Zugesagt", RsvpAnswer.TENTATIVE: "Vorläufig",
                RsvpAnswer.DECLINED: "Abgesagt"},
}
_BODIES = {
    Locale.EN: {RsvpAnswer.ACCEPTED: "{name} has accepted this invitation.",
                RsvpAnswer.TENTATIVE: "{name} has tentatively accepted this invitation.",
                RsvpAnswer.DECLINED: "{name} has declined this invitation."},
    Locale.DE: {RsvpAnswer.ACCEPTED: "{name} hat diese Einladung angenommen.",
                RsvpAnswer.TENTATIVE: "{name} hat diese Einladung vorläufig angenommen.",
                RsvpAnswer.DECLINED: "{name} hat diese Einladung abgelehnt."},
}


@dataclass(frozen=True, slots=True)
class RsvpOutcome:
    event_id: int
    answer: RsvpAnswer
    submission_id: int | None  # the REPLY on its way; None when nothing was sent
    problem: str | None = None  # why the REPLY could not be sent; the answer is recorded all the same


def _address(value: Any) -> str:
    return str(value.get("email") or "").strip().lower() if isinstance(value, dict) else ""


_SERIES_HORIZON = timedelta(days=2 * 365)  # a series with nothing left to come within two years has ended


def offers_answer(values: EventValues, own_addresses: Collection[str], now: datetime) -> bool:
    """Yes/Maybe/No belong on an invitation that names one of the user's addresses as an attendee, has an
    organiser other than the user to answer, is not cancelled, and has not ended (issue 29): a mail that merely
    reached the user (a list, a Bcc, a forward) or an event in the past asks nothing of them."""
    own = {address.lower() for address in own_addresses}
    organizer = _address(values.organizer)
    if not organizer or organizer in own or values.status == EventStatus.CANCELLED.value:
        return False
    if not any(_address(attendee) in own for attendee in values.attendees):
        return False
    return not event_ended(values, now)


def event_ended(values: EventValues, now: datetime) -> bool:
    """Whether the event is over at `now`: its end passed; a series, when no occurrence is still to come."""
    recurrence = values.recurrence if isinstance(values.recurrence, dict) else {}
    rules = [rule for rule in recurrence.get(RULES, []) or [] if isinstance(rule, dict)]
    if not rules:
        return values.ends_at <= now
    start, end = frame_times(values, "UTC")
    overrides = recurrence.get(OVERRIDES) if isinstance(recurrence.get(OVERRIDES), dict) else None
    excluded = [w for w in map(parse_local_datetime, recurrence.get(EXCLUDED, []) or []) if w is not None]
    coming = materialise_occurrences(
        start, end, rules=rules, excluded=excluded, overrides=overrides,
        time_zone=values.time_zone if not values.is_floating else None,
        window_start=now, window_end=now + _SERIES_HORIZON, limit=1)
    return not coming


def reply_ics(event: StoredEvent, attendee: Address, answer: RsvpAnswer, *, now: datetime) -> str:
    """The iTIP REPLY: one VEVENT naming the replying attendee alone, with the request's UID and SEQUENCE."""
    values = event.values
    organizer = values.organizer or {}
    calendar = icalendar.Calendar()
    calendar.add("prodid", "-//plmail//plmail//EN")
    calendar.add("version", "2.0")
    calendar.add("method", "REPLY")
    vevent = icalendar.Event()
    vevent.add("uid", values.uid)
    vevent.add("sequence", values.sequence)
    vevent.add("dtstamp", now.astimezone(UTC))
    if values.is_all_day:
        vevent.add("dtstart", values.starts_at.date())
        vevent.add("dtend", values.ends_at.date())
    else:
        vevent.add("dtstart", values.starts_at.astimezone(UTC))
        vevent.add("dtend", values.ends_at.astimezone(UTC))
    if values.title:
        vevent.add("summary", values.title)
    organizer_address = icalendar.vCalAddress(f"mailto:{_address(organizer)}")
    if organizer.get("name"):
        organizer_address.params["CN"] = icalendar.vText(str(organizer["name"]))
    vevent.add("organizer", organizer_address)
    me = icalendar.vCalAddress(f"mailto:{attendee.address}")
    me.params["PARTSTAT"] = icalendar.vText(answer.partstat)
    if attendee.name:
        me.params["CN"] = icalendar.vText(attendee.name)
    vevent.add("attendee", me)
    calendar.add_component(vevent)
    return str(calendar.to_ical().decode("utf-8"))


def answer_of(participation_status: str | None) -> RsvpAnswer:
    """A JSCalendar participationStatus a person can give (RFC 8984 §4.4.6)."""
    try:
        return RsvpAnswer(participation_status or "")
    except ValueError:
        raise ValidationError("An invitation is answered accepted, tentative or declined.",
                              field="participationStatus") from None


class RsvpService:
    def __init__(self, db: Database, identities: IdentityService, drafts: DraftService, outbox: OutboxService
                 ) -> None:
        self.events = CalendarEventRepository(db)
        self.links = EventSourceLinkRepository(db)
        self.users = UserRepository(db)
        self.identities = identities
        self.drafts = drafts
        self.outbox = outbox

    async def answer(self, user_id: int, event_id: int, answer: RsvpAnswer, *, send: bool = True,
                     as_address: str | None = None, now: datetime | None = None) -> RsvpOutcome:
        """Record the answer (Yes and Maybe keep the event on the calendar, No hides it) and, unless told not
        to, send the organiser the REPLY from the identity the invitation was addressed to (or `as_address`,
        which must be one of the user's)."""
        event = await self.events.owned(user_id, event_id)
        if event is None:
            raise NotFoundError("No such event.")
        organizer = _address(event.values.organizer)
        if not organizer:
            raise ValidationError("This event has no organiser to answer.", field="event")
        if as_address is not None:
            identity = await self.identities.for_address(user_id, as_address)
            if identity is None:
                raise ForbiddenError("Only your own answer can be given: that participant is not you.")
        else:
            identity = await self._invited_identity(user_id, event)
        if identity is None:
            raise ValidationError("None of your addresses can answer this invitation.", field="event")
        attendees = [dict(a) for a in event.values.attendees if isinstance(a, dict)]
        mine = [a for a in attendees if _address(a) == identity.email.lower()]
        if mine:
            mine[0]["partstat"] = answer.value
        else:  # invited through a list: the answer names the address it came to (RFC 5546 §2.1.5)
            attendees.append({"name": identity.name, "email": identity.email, "partstat": answer.value})
        await self.events.set_people(user_id, event_id, attendees, answer.value)
        if not send:
            return RsvpOutcome(event_id, answer, None)
        try:
            submission_id = await self._send(user_id, event, identity, organizer, answer, now or datetime.now(UTC))
        except PlmailError as exc:
            if exc.retryable:
                raise
            log.info("the answer to event %s is recorded; its REPLY was refused: %s", event_id, exc)
            return RsvpOutcome(event_id, answer, None, problem=str(exc))
        return RsvpOutcome(event_id, answer, submission_id)

    async def answer_participant(self, user_id: int, event_id: int, participant_id: str, status: str | None, *,
                                 send: bool) -> RsvpOutcome:
        """A JMAP client's `participants/<id>/participationStatus`: the participant must be the user."""
        event = await self.events.owned(user_id, event_id)
        if event is None:
            raise NotFoundError("No such event.")
        address = participant_address(event.values.organizer, event.values.attendees, participant_id)
        if address is None:
            raise ForbiddenError("Only your own answer can be given: that participant is not you.")
        return await self.answer(user_id, event_id, answer_of(status), send=send, as_address=address)

    async def _send(self, user_id: int, event: StoredEvent, identity: Identity, organizer: str,
                    answer: RsvpAnswer, now: datetime) -> int:
        user = await self.users.by_id(user_id)
        locale = user.locale if user is not None else Locale.EN
        name = identity.name or identity.email
        title = event.values.title or ""
        organizer_name = str((event.values.organizer or {}).get("name") or "")
        attendee = Address(identity.name, identity.email)
        content = DraftContent(
            identity_id=identity.id, to=(Address(organizer_name, organizer),),
            subject=f"{_SUBJECTS[locale][answer]}: {title}".strip(),
            text_body=_BODIES[locale][answer].format(name=name) + "\n",
            calendar=CalendarReply("REPLY", reply_ics(event, attendee, answer, now=now)))
        saved = await self.drafts.save(user_id, content, push=False)
        submission = await self.outbox.submit(user_id, saved.message_id, identity.id, origin="rsvp", now=now)
        return submission.id

    async def _invited_identity(self, user_id: int, event: StoredEvent) -> Identity | None:
        """The user's identity among the attendees, preferring the account the invitation arrived on; else that
        account's primary address."""
        identities = await self.identities.for_user(user_id)
        arrived_on = await self.links.source_account(user_id, event.id)
        by_address = {i.email.lower(): i for i in identities if i.account_id == arrived_on}
        by_address.update({i.email.lower(): i for i in identities if i.email.lower() not in by_address})
        for attendee in event.values.attendees:
            found = by_address.get(_address(attendee))
            if found is not None:
                return found
        primary = [i for i in identities if i.account_id == arrived_on and i.is_primary]
        return primary[0] if primary else None
