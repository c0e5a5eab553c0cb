"""Invitations the user sends (RFC 5546, organiser side): an event with guests goes to them as an iTIP REQUEST,
a change as a REQUEST with a higher SEQUENCE, a removed guest or a deleted event as a CANCEL; each carried as
RFC 6047 says (a text/calendar part with its method beside a text a person reads), from the identity the user
organises with and through that identity's own transport, like any mail they send.

The event is the user's first: it is saved before anything is sent, and a send that is refused says so without
undoing the event (the outbox shows the message with its reason, as for any send).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

import icalendar
from babel.dates import format_datetime

from plmail.calendar.ics_files import event_components
from plmail.calendar.timezones import zone
from plmail.db.repos.users import UserRepository
from plmail.domain.calendar import StoredEvent
from plmail.domain.enums import Locale
from plmail.domain.errors import PlmailError, ValidationError
from plmail.domain.messages import Address
from plmail.domain.outgoing import CalendarReply, DraftContent, Identity
from plmail.mail.public import DraftService, IdentityService, OutboxService

log = logging.getLogger(__name__)

MAX_GUESTS = 100  # a meeting, not a mailing list: more goes through a list the guests are on
NEEDS_ACTION = "needs-action"


class Method(StrEnum):
    REQUEST = "REQUEST"
    CANCEL = "CANCEL"


_SUBJECTS = {
    Locale.EN: {"new": "Invitation: {title}", "changed": "Updated invitation: {title}",
                "cancelled": "Cancelled: {title}"},
    Locale.DE: {"new": "Einladung: {title}", "changed": "Geänderte Einladung: {title}",
                "cancelled": "Abgesagt: {title}"},
}
_INTROS = {
    Locale.EN: {"new": "{name} invites you to {title}.", "changed": "{name} has changed {title}.",
                "cancelled": "{name} has cancelled {title}."},
    Locale.DE: {"new": "{name} lädt Sie zu {title} ein.", "changed": "{name} hat {title} geändert.",
                "cancelled": "{name} hat {title} abgesagt."},
}
_LABELS = {Locale.EN: ("When", "Where"), Locale.DE: ("Wann", "Wo")}


def address_of(value: Any) -> str:
    return str(value.get("email") or "").strip().lower() if isinstance(value, dict) else ""


def guest(address: Address, partstat: str = NEEDS_ACTION) -> dict[str, Any]:
    """A guest as the event stores its attendees (the shape the reconciler reads and updates from replies)."""
    return {"name": address.name, "email": address.address, "partstat": partstat, "rsvp": True}


def organised_by(values_organizer: Any, own_addresses: Collection[str]) -> bool:
    """Whether the user is the event's organiser: its ORGANIZER is one of their addresses."""
    organizer = address_of(values_organizer)
    return bool(organizer) and organizer in {a.lower() for a in own_addresses}


def check_guests(guests: Sequence[Address], organiser: str) -> tuple[Address, ...]:
    """Each guest once (by address), never the organiser, at most MAX_GUESTS."""
    seen: dict[str, Address] = {}
    for person in guests:
        key = person.address.strip().lower()
        if key and key != organiser.lower() and key not in seen:
            seen[key] = person
    if len(seen) > MAX_GUESTS:
        raise ValidationError("An event can have at most 100 guests.", field="guests")
    return tuple(seen.values())


def itip_ics(event: StoredEvent, method: Method, *, organiser: Address, attendees: Sequence[dict[str, Any]],
             user_zone: str, now: datetime) -> str:
    """The iTIP message: the event's VEVENTs (the series and each changed occurrence) with ORGANIZER, every
    ATTENDEE asked to answer (RFC 5546 §3.2.2), and the event's SEQUENCE; a CANCEL marks them cancelled
    (§3.2.5) and names the guests it goes to."""
    calendar = icalendar.Calendar()
    calendar.add("prodid", "-//plmail//calendar//EN")
    calendar.add("version", "2.0")
    calendar.add("method", method.value)
    for component in event_components(event, user_zone=user_zone):
        component.pop("dtstamp", None)
        component.add("dtstamp", now.astimezone(UTC))
        who = icalendar.vCalAddress(f"mailto:{organiser.address}")
        if organiser.name:
            who.params["CN"] = icalendar.vText(organiser.name)
        component.add("organizer", who)
        for attendee in attendees:
            address = icalendar.vCalAddress(f"mailto:{attendee['email']}")
            if attendee.get("name"):
                address.params["CN"] = icalendar.vText(str(attendee["name"]))
            address.params["ROLE"] = icalendar.vText("REQ-PARTICIPANT")
            address.params["PARTSTAT"] = icalendar.vText(str(attendee.get("partstat") or NEEDS_ACTION).upper())
            if method is Method.REQUEST:
                address.params["RSVP"] = icalendar.vText("TRUE")
            component.add("attendee", address)
        if method is Method.CANCEL:
            component.pop("status", None)
            component.add("status", "CANCELLED")
        calendar.add_component(component)
    calendar.add_missing_timezones()
    return str(calendar.to_ical().decode("utf-8"))


@dataclass(frozen=True, slots=True)
class SentInvitation:
    method: Method
    recipients: tuple[str, ...]
    submission_id: int | None  # None when the send was refused (`problem` says why)
    problem: str | None = None


class GuestInvitations:
    """Sends what the organiser's change means to each guest; used by the event editor (web, JMAP, DAV)."""

    def __init__(self, users: UserRepository, identities: IdentityService, drafts: DraftService,
                 outbox: OutboxService) -> None:
        self.users = users
        self.identities = identities
        self.drafts = drafts
        self.outbox = outbox

    async def organiser_identity(self, user_id: int, identity_id: int | None) -> Identity:
        """The identity the user organises with: the one chosen, else their first primary address."""
        if identity_id is not None:
            return await self.identities.owned(user_id, identity_id)
        identities = await self.identities.for_user(user_id)
        usable = [i for i in identities if i.verified]
        primary = [i for i in usable if i.is_primary] or usable
        if not primary:
            raise ValidationError("Connect a mail account to invite guests: invitations go out as mail.",
                                  field="guests")
        return primary[0]

    async def own_addresses(self, user_id: int) -> set[str]:
        return {i.email.lower() for i in await self.identities.for_user(user_id)}

    async def send(self, user_id: int, event: StoredEvent, method: Method, recipients: Sequence[dict[str, Any]],
                   *, kind: str, user_zone: str, now: datetime | None = None) -> SentInvitation | None:
        """One message to `recipients` (attendee dicts); `kind` is new, changed or cancelled."""
        people = [r for r in recipients if address_of(r)]
        if not people:
            return None
        moment = now or datetime.now(UTC)
        organizer = event.values.organizer or {}
        identity = await self.identities.for_address(user_id, address_of(organizer))
        if identity is None:
            raise ValidationError("The event's organiser is not one of your addresses.", field="guests")
        user = await self.users.by_id(user_id)
        locale = user.locale if user is not None else Locale.EN
        title = event.values.title or ""
        organiser = Address(identity.name, identity.email)
        attendees = [a for a in event.values.attendees if isinstance(a, dict) and address_of(a)]
        if method is Method.CANCEL:
            attendees = list(people)
        ics = itip_ics(event, method, organiser=organiser, attendees=attendees, user_zone=user_zone, now=moment)
        content = DraftContent(
            identity_id=identity.id,
            to=tuple(Address(str(p.get("name") or ""), str(p["email"])) for p in people),
            subject=_SUBJECTS[locale][kind].format(title=title).strip(),
            text_body=self._text(event, locale, kind, identity, user_zone),
            calendar=CalendarReply(method.value, ics))
        to = tuple(address_of(p) for p in people)
        try:
            saved = await self.drafts.save(user_id, content, push=False)
            submission = await self.outbox.submit(user_id, saved.message_id, identity.id, origin="invite", now=moment)
        except PlmailError as exc:
            if exc.retryable:
                raise
            log.info("event %s is saved; its %s to %d guests was refused: %s", event.id, method, len(to), exc)
            return SentInvitation(method, to, None, problem=str(exc))
        return SentInvitation(method, to, submission.id)

    @staticmethod
    def _text(event: StoredEvent, locale: Locale, kind: str, identity: Identity, user_zone: str) -> str:
        values = event.values
        title = values.title or ""
        lines = [_INTROS[locale][kind].format(name=identity.name or identity.email, title=title), ""]
        when_label, where_label = _LABELS[locale]
        where = zone(values.time_zone or user_zone) or UTC
        if values.is_all_day:
            when = format_datetime(values.starts_at.astimezone(UTC), "EEEE, d MMMM y", locale=locale.value)
        else:
            when = format_datetime(values.starts_at.astimezone(where), "EEEE, d MMMM y, HH:mm zzzz",
                                   tzinfo=where, locale=locale.value)
        lines.append(f"{when_label}: {when}")
        if values.location:
            lines.append(f"{where_label}: {values.location}")
        if values.description:
            lines += ["", values.description]
        return "\n".join(lines) + "\n"
