"""Invitations the user sends (issue 34; RFC 5546 organiser side, carried per RFC 6047): an event with a guest goes
to them as a REQUEST, a guest's acceptance through their own plmail shows on the organiser's event, a change goes
out again with a higher SEQUENCE, a removed guest and a deleted event are sent a CANCEL; each through the
organiser's own account and the suite's SMTP server, and delivered to the guest's own IMAP mailbox."""

from __future__ import annotations

import email
import email.policy
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import icalendar
import pytest

from plmail.calendar.editor import EventForm
from plmail.calendar.rsvp import RsvpAnswer
from plmail.domain.errors import ValidationError
from plmail.domain.messages import Address
from plmail.domain.models import User
from plmail.services import Services
from tests.integration.calendar.test_grid_moves import move, undo_fields
from tests.integration.sending.conftest import Outgoing, add_sending_account
from tests.support.dovecot import DovecotServer, DovecotUser
from tests.support.jobs import run_queued
from tests.support.smtp import Received
from tests.support.web import csrf_token, sign_in

ZONE = "Europe/Berlin"
START = datetime(datetime.now(UTC).year + 1, 3, 10, 9, 0, tzinfo=UTC)


@dataclass
class Guest:
    services: Services
    user: User
    mail: DovecotUser
    account_id: int

    @property
    def address(self) -> str:
        return f"{self.mail.name}@example.org"

    async def receive(self, received: Received) -> None:
        """The message the SMTP server took for this guest lands in their mailbox; their plmail reads it."""
        self.mail.append([received.data])
        await self.services.sync.run_until_done(self.account_id)
        await run_queued(self.services, ("extract_events",))

    async def event(self, uid: str) -> dict[str, Any] | None:
        row = await self.services.db.fetchrow(
            "SELECT e.id, e.starts_at, e.status, e.sequence, e.attendees FROM calendar_event e "
            "JOIN calendar c ON c.id = e.calendar_id WHERE c.user_id = $1 AND e.uid = $2", self.user.id, uid)
        return dict(row) if row else None


@pytest.fixture
async def guest(outgoing: Outgoing, dovecot: DovecotServer) -> Guest:
    mail = dovecot.add_user()
    user = await outgoing.services.users.create_user("gus@example.org", "correct horse", time_zone=ZONE)
    account_id = await add_sending_account(outgoing.services, user, mail, outgoing.smtp)
    return Guest(outgoing.services, user, mail, account_id)


def itip(received: Received) -> tuple[str, icalendar.Event]:
    """The iTIP method (on the text/calendar part's Content-Type, RFC 6047 §2.4) and the one VEVENT."""
    message = email.message_from_bytes(received.data, policy=email.policy.default)
    parts = [p for p in message.walk() if p.get_content_type() == "text/calendar"]
    assert len(parts) == 1, [p.get_content_type() for p in message.walk()]
    calendar = icalendar.Calendar.from_ical(parts[0].get_content())
    assert str(calendar["method"]) == parts[0].get_param("method")
    [vevent] = calendar.walk("VEVENT")
    return str(calendar["method"]), vevent


def attendees_of(vevent: icalendar.Event) -> dict[str, Any]:
    found = vevent.get("attendee")
    listed = found if isinstance(found, list) else [found]
    return {str(a).lower().removeprefix("mailto:"): a for a in listed if a is not None}


def form(title: str, start: datetime, guests: tuple[Address, ...] | None) -> EventForm:
    return EventForm(title=title, start=start, end=start + timedelta(hours=1), all_day=False, guests=guests)


async def _sent(outgoing: Outgoing, submission_id: int | None, count: int) -> Received:
    assert submission_id is not None
    await outgoing.deliver(submission_id)
    return outgoing.smtp.wait_for(count)[count - 1]


async def test_an_invitation_accepted_by_the_guest_in_their_own_plmail_shows_their_answer(
        outgoing: Outgoing, guest: Guest, client: httpx.AsyncClient) -> None:
    services, organiser = outgoing.services, outgoing.user
    editor = services.calendar.editor
    saved = await editor.create_event(organiser.id, form("Planning", START, (Address("Gus", guest.address),)),
                                      user_zone=ZONE)
    [sent] = saved.invitations
    assert sent.problem is None and sent.recipients == (guest.address,)

    request = await _sent(outgoing, sent.submission_id, 1)
    assert request.rcpt_to == (guest.address,) and request.mail_from == outgoing.address
    method, vevent = itip(request)
    assert method == "REQUEST" and int(vevent["sequence"]) == 0
    assert str(vevent["organizer"]).lower() == f"mailto:{outgoing.address}"
    invited = attendees_of(vevent)[guest.address]
    # RFC 5546 §3.2.2: the organiser asks each attendee to answer
    assert (invited.params["PARTSTAT"], invited.params["RSVP"], invited.params["ROLE"]) == (
        "NEEDS-ACTION", "TRUE", "REQ-PARTICIPANT")
    assert vevent.decoded("dtstart") == START
    uid = str(vevent["uid"])

    # the guest's plmail puts it on their calendar, and they accept
    await guest.receive(request)
    theirs = await guest.event(uid)
    assert theirs is not None and theirs["starts_at"] == START
    outcome = await services.rsvp.answer(guest.user.id, theirs["id"], RsvpAnswer.ACCEPTED)
    assert outcome.submission_id is not None
    await services.outbox.deliver(outcome.submission_id)
    reply = outgoing.smtp.wait_for(2)[1]
    assert reply.rcpt_to == (outgoing.address,) and itip(reply)[0] == "REPLY"

    # the organiser's plmail reads the REPLY and shows the guest's answer on the event they made
    outgoing.mail.append([reply.data])
    await outgoing.sync()
    await run_queued(services, ("extract_events",))
    event_id = saved.event_id
    detail = await services.calendar.browser.detail(organiser.id, event_id)
    answers = {str(a["email"]).lower(): a.get("partstat") for a in detail.event.values.attendees}
    assert answers == {guest.address: "accepted"}
    assert (await sign_in(client, outgoing.user.email, "correct horse")).status_code == 200
    page = await client.get(f"/calendar/event/{event_id}")
    assert page.status_code == 200
    assert re.search(r'<li>Gus[^<]*<span class="partstat">Accepted</span></li>', page.text), page.text


async def test_a_change_goes_out_at_a_higher_sequence_and_deleting_cancels_it(
        outgoing: Outgoing, guest: Guest) -> None:
    services, organiser = outgoing.services, outgoing.user
    editor = services.calendar.editor
    other = Address("", "ola@example.net")
    saved = await editor.create_event(
        organiser.id, form("Review", START, (Address("Gus", guest.address), other)), user_zone=ZONE)
    request = await _sent(outgoing, saved.invitations[0].submission_id, 1)
    assert sorted(request.rcpt_to) == sorted([guest.address, other.address])
    uid = str(itip(request)[1]["uid"])
    await guest.receive(request)

    # two hours later, and Ola no longer invited: Ola is told it is cancelled, Gus gets the new time
    later = START + timedelta(hours=2)
    changed = await editor.update_event(organiser.id, saved.event_id, form("Review", later, (
        Address("Gus", guest.address),)), user_zone=ZONE)
    assert [s.method.value for s in changed.invitations] == ["CANCEL", "REQUEST"]
    cancel_for_ola = await _sent(outgoing, changed.invitations[0].submission_id, 2)
    assert cancel_for_ola.rcpt_to == (other.address,)
    method, vevent = itip(cancel_for_ola)
    assert method == "CANCEL" and str(vevent["status"]) == "CANCELLED"
    update = await _sent(outgoing, changed.invitations[1].submission_id, 3)
    method, vevent = itip(update)
    assert method == "REQUEST" and int(vevent["sequence"]) == 1 and vevent.decoded("dtstart") == later
    assert update.rcpt_to == (guest.address,)
    await guest.receive(update)
    theirs = await guest.event(uid)
    assert theirs is not None and theirs["starts_at"] == later and theirs["sequence"] == 1

    # the same guests and times again: nothing to tell anyone
    unchanged = await editor.update_event(organiser.id, saved.event_id, form("Review", later, (
        Address("Gus", guest.address),)), user_zone=ZONE)
    assert unchanged.invitations == ()

    # deleting it cancels it for the guest, one SEQUENCE higher
    assert await editor.delete(organiser.id, saved.event_id, user_zone=ZONE) is True
    pending = await services.db.fetchval(
        "SELECT id FROM submission WHERE origin = 'invite' AND state <> 'sent' ORDER BY id DESC LIMIT 1")
    cancel = await _sent(outgoing, int(pending), 4)
    method, vevent = itip(cancel)
    assert method == "CANCEL" and int(vevent["sequence"]) == 2 and cancel.rcpt_to == (guest.address,)
    await guest.receive(cancel)
    theirs = await guest.event(uid)
    assert theirs is None or theirs["status"] == "cancelled"


async def test_guests_need_an_account_to_send_from_and_a_received_invitation_keeps_its_guests(
        outgoing: Outgoing, guest: Guest) -> None:
    services = outgoing.services
    nobody = await services.users.create_user("nobody@example.org", "correct horse", time_zone=ZONE)
    with pytest.raises(ValidationError, match="Connect a mail account"):
        await services.calendar.editor.create_event(nobody.id, form("Alone", START, (
            Address("", "x@example.net"),)), user_zone=ZONE)
    assert not await services.db.fetchval(
        "SELECT count(*) FROM calendar_event e JOIN calendar c ON c.id = e.calendar_id WHERE c.user_id = $1",
        nobody.id)

    # the guest cannot re-invite people to an event someone else organises
    saved = await services.calendar.editor.create_event(
        outgoing.user.id, form("Theirs", START, (Address("", guest.address),)), user_zone=ZONE)
    request = await _sent(outgoing, saved.invitations[0].submission_id, 1)
    await guest.receive(request)
    theirs = await guest.event(str(itip(request)[1]["uid"]))
    assert theirs is not None
    with pytest.raises(ValidationError, match="Only the organiser"):
        await services.calendar.editor.update_event(guest.user.id, theirs["id"], form("Theirs", START, (
            Address("", "intruder@example.net"),)), user_zone=ZONE)
    assert len(outgoing.smtp.received) == 1


async def test_the_event_editor_form_takes_guests_and_refuses_a_broken_address(
        outgoing: Outgoing, client: httpx.AsyncClient) -> None:
    assert (await sign_in(client, outgoing.user.email, "correct horse")).status_code == 200
    page = await client.get("/calendar/new")
    assert 'name="guests"' in page.text
    token = await csrf_token(client, "/calendar/new")
    fields = {"_csrf_token": token, "title": "Lunch", "start_date": START.date().isoformat(),
              "start_time": "12:00", "end_date": START.date().isoformat(), "end_time": "13:00"}
    refused = await client.post("/calendar/new", data={**fields, "guests": "Bea <not an address"})
    assert refused.status_code == 400 and "Lunch" in refused.text  # what was typed is kept
    assert "not an address" in refused.text
    made = await client.post("/calendar/new", data={**fields, "guests": "Bea Berg <bea@example.net>"},
                             follow_redirects=False)
    assert made.status_code == 303 and "invited=1" in made.headers["location"]
    shown = await client.get(made.headers["location"])
    assert "The invitation is on its way to 1 guest." in shown.text and "bea@example.net" in shown.text


async def test_a_drag_on_the_time_grid_sends_the_guests_the_new_time_and_undo_the_old(
        outgoing: Outgoing, guest: Guest, client: httpx.AsyncClient) -> None:
    """Issue 32: a drag moves an event "and its copy elsewhere when it has one": the guests' copies of an event the
    user organises follow the drag and its Undo, each a REQUEST one SEQUENCE higher (RFC 5546 §2.1.4)."""
    services, organiser = outgoing.services, outgoing.user
    saved = await services.calendar.editor.create_event(
        organiser.id, form("Standup", START, (Address("Gus", guest.address),)), user_zone=ZONE)
    request = await _sent(outgoing, saved.invitations[0].submission_id, 1)
    uid = str(itip(request)[1]["uid"])
    await guest.receive(request)

    assert (await sign_in(client, organiser.email, "correct horse")).status_code == 200
    local = START.astimezone(ZoneInfo(ZONE))
    day = local.date().isoformat()
    answer = await move(client, saved.event_id, {"start": f"{day}T{local.hour + 2:02d}:00",
                                                 "end": f"{day}T{local.hour + 3:02d}:00", "view": "week", "day": day})
    assert answer.status_code == 200, answer.text
    later = START + timedelta(hours=2)
    update = await _sent(outgoing, await _pending_invitation(services), 2)
    method, vevent = itip(update)
    assert (method, int(vevent["sequence"]), vevent.decoded("dtstart")) == ("REQUEST", 1, later)
    assert update.rcpt_to == (guest.address,)
    await guest.receive(update)
    theirs = await guest.event(uid)
    assert theirs is not None and theirs["starts_at"] == later

    undone = await move(client, saved.event_id, undo_fields(answer.text))
    assert undone.status_code == 200 and "The move is undone." in undone.text
    restore = await _sent(outgoing, await _pending_invitation(services), 3)
    method, vevent = itip(restore)
    assert (method, int(vevent["sequence"]), vevent.decoded("dtstart")) == ("REQUEST", 2, START)
    await guest.receive(restore)
    theirs = await guest.event(uid)
    assert theirs is not None and theirs["starts_at"] == START and theirs["sequence"] == 2


async def _pending_invitation(services: Services) -> int:
    pending = await services.db.fetchval(
        "SELECT id FROM submission WHERE origin = 'invite' AND state <> 'sent' ORDER BY id DESC LIMIT 1")
    assert pending is not None, "the move sent the guests nothing"
    return int(pending)
