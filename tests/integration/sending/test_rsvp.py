"""Answering an invitation from the thunderbird-calendar-invitations corpus: an iTIP REPLY (RFC 5546 §3.2.3,
carried per RFC 6047) to the organiser, from the invited address, with the user's PARTSTAT; the answer
recorded on the event; "answer without sending"; and a failed send that keeps the answer."""

from __future__ import annotations

import email
import email.policy
from datetime import UTC, datetime
from pathlib import Path

import httpx
import icalendar

from plmail.calendar.rsvp import RsvpAnswer
from plmail.domain.outgoing import SubmissionState
from tests.integration.sending.conftest import Outgoing
from tests.support.jobs import run_queued
from tests.support.web import csrf_token, sign_in

FUTURE_YEAR = datetime.now(UTC).year + 2
INVITATIONS = (Path(__file__).resolve().parents[4] / "shared" / "corpus" / "thunderbird-calendar-invitations"
               / "browser" / "invitations" / "data")


async def invited(outgoing: Outgoing, *, year: int = 2022) -> int:
    """single-event.eml delivered to the account, which also answers as the invited receiver@example.com; its
    event moved to `year` (answer buttons are offered only until an event has ended)."""
    await outgoing.verified_alias("receiver@example.com", name="Receiver")
    raw = (INVITATIONS / "single-event.eml").read_bytes().replace(b"\n", b"\r\n")
    raw = raw.replace(b"DTSTART:2022", f"DTSTART:{year}".encode()).replace(b"DTEND:2022", f"DTEND:{year}".encode())
    outgoing.mail.append([raw])
    await outgoing.sync()
    await run_queued(outgoing.services, ("extract_events",))
    event_id = await outgoing.services.db.fetchval("SELECT id FROM calendar_event WHERE uid = '02e79b96'")
    assert event_id is not None, "the invitation is on the calendar"
    return int(event_id)


def reply_of(data: bytes) -> icalendar.Calendar:
    message = email.message_from_bytes(data, policy=email.policy.default)
    parts = [p for p in message.walk() if p.get_content_type() == "text/calendar"]
    assert len(parts) == 1
    assert parts[0].get_param("method") == "REPLY"  # RFC 6047 §2.4: the method on the Content-Type too
    return icalendar.Calendar.from_ical(parts[0].get_content())


async def test_accepting_sends_a_reply_with_partstat_accepted_to_the_organiser(outgoing: Outgoing) -> None:
    event_id = await invited(outgoing)
    outcome = await outgoing.services.rsvp.answer(outgoing.user.id, event_id, RsvpAnswer.ACCEPTED)
    assert outcome.submission_id is not None and outcome.problem is None
    await outgoing.deliver(outcome.submission_id)
    [received] = outgoing.smtp.wait_for(1)
    assert received.rcpt_to == ("sender@example.com",)  # the organiser
    assert received.mail_from == "receiver@example.com"  # the address the invitation was sent to
    calendar = reply_of(received.data)
    assert str(calendar["method"]) == "REPLY"
    [vevent] = calendar.walk("VEVENT")
    assert str(vevent["uid"]) == "02e79b96" and int(vevent["sequence"]) == 0  # the request's own
    assert str(vevent["organizer"]).lower() == "mailto:sender@example.com"
    attendees = vevent.get("attendee")
    assert not isinstance(attendees, list), "a REPLY names the replying attendee alone"
    assert str(attendees).lower() == "mailto:receiver@example.com"
    assert attendees.params["PARTSTAT"] == "ACCEPTED"
    assert "dtstamp" in vevent
    row = await outgoing.services.db.fetchrow("SELECT my_participation, attendees FROM calendar_event WHERE id = $1",
                                              event_id)
    assert row is not None and row["my_participation"] == "accepted"


async def test_declining_without_sending_records_the_answer_only(outgoing: Outgoing) -> None:
    event_id = await invited(outgoing)
    outcome = await outgoing.services.rsvp.answer(outgoing.user.id, event_id, RsvpAnswer.DECLINED, send=False)
    assert outcome.submission_id is None
    await run_queued(outgoing.services, ("send_submission",))
    assert outgoing.smtp.received == []
    assert await outgoing.services.db.fetchval("SELECT my_participation FROM calendar_event WHERE id = $1",
                                               event_id) == "declined"


async def test_a_failed_reply_keeps_the_answer_and_says_why(outgoing: Outgoing) -> None:
    event_id = await invited(outgoing)
    outgoing.smtp.faults.rejected = {"sender@example.com"}
    outcome = await outgoing.services.rsvp.answer(outgoing.user.id, event_id, RsvpAnswer.TENTATIVE)
    assert outcome.submission_id is not None
    submission = await outgoing.deliver(outcome.submission_id)
    assert submission.state is SubmissionState.FAILED and "550" in submission.last_error
    assert await outgoing.services.db.fetchval("SELECT my_participation FROM calendar_event WHERE id = $1",
                                               event_id) == "tentative"


async def test_the_invitation_card_answers_and_no_takes_it_off_the_calendar(
    outgoing: Outgoing, client: httpx.AsyncClient
) -> None:
    event_id = await invited(outgoing, year=FUTURE_YEAR)
    assert (await sign_in(client, outgoing.user.email, "correct horse")).status_code == 200
    thread_id = await outgoing.services.db.fetchval(
        "SELECT m.thread_id FROM message m JOIN event_source_link l ON l.message_id = m.id WHERE l.event_id = $1",
        event_id)
    page = await client.get(f"/thread/{thread_id}")
    assert f'action="/calendar/event/{event_id}/answer"' in page.text
    assert 'value="accepted"' in page.text and 'value="declined"' in page.text
    token = await csrf_token(client, f"/thread/{thread_id}")
    answered = await client.post(f"/calendar/event/{event_id}/answer", data={
        "answer": "accepted", "send": "on", "next": f"/thread/{thread_id}", "_csrf_token": token})
    assert answered.status_code == 200 and "answered=sent" in str(answered.url)
    assert "on its way to the organiser" in answered.text
    await run_queued(outgoing.services, ("send_submission", "file_sent_copy"))
    [received] = outgoing.smtp.wait_for(1)
    assert reply_of(received.data).walk("VEVENT")[0]["attendee"].params["PARTSTAT"] == "ACCEPTED"
    week = await client.get(f"/calendar?view=month&day={FUTURE_YEAR}-03-16")
    assert "Single Event" in week.text
    # No, without sending: recorded, nothing goes, and the event leaves the calendar.
    declined = await client.post(f"/calendar/event/{event_id}/answer", data={
        "answer": "declined", "next": f"/thread/{thread_id}", "_csrf_token": token})
    assert "answered=recorded" in str(declined.url)
    await run_queued(outgoing.services, ("send_submission",))
    assert len(outgoing.smtp.received) == 1
    week = await client.get(f"/calendar?view=month&day={FUTURE_YEAR}-03-16")
    assert "Single Event" not in week.text


async def test_an_rsvp_from_a_jmap_client_reaches_the_organiser_as_a_reply(
    outgoing: Outgoing, client: httpx.AsyncClient
) -> None:
    event_id = await invited(outgoing)
    token = (await outgoing.services.app_passwords.create(outgoing.user.id, "Phone")).token
    using = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:calendars"]

    async def call(name: str, arguments: dict[str, object]) -> dict[str, object]:
        response = await client.post("/jmap/api", headers={"Authorization": f"Bearer {token}"}, json={
            "using": using, "methodCalls": [[name, {"accountId": f"u{outgoing.user.id}", **arguments}, "0"]]})
        assert response.status_code == 200, response.text
        result_name, result, _ = response.json()["methodResponses"][0]
        assert result_name == name, result
        return dict(result)

    got = await call("CalendarEvent/get", {"ids": [str(event_id)]})
    event = got["list"][0]  # type: ignore[index]
    me = next(key for key, p in event["participants"].items() if p.get("email") == "receiver@example.com")
    done = await call("CalendarEvent/set", {"sendSchedulingMessages": True, "update": {
        str(event_id): {f"participants/{me}/participationStatus": "accepted"}}})
    assert done["updated"] == {str(event_id): None}
    await run_queued(outgoing.services, ("send_submission", "file_sent_copy"))
    [received] = outgoing.smtp.wait_for(1)
    assert received.rcpt_to == ("sender@example.com",)
    attendee = reply_of(received.data).walk("VEVENT")[0]["attendee"]
    assert str(attendee).lower() == "mailto:receiver@example.com" and attendee.params["PARTSTAT"] == "ACCEPTED"


async def _deliver(outgoing: Outgoing, *, year: int, uid: bytes) -> int:
    raw = (INVITATIONS / "single-event.eml").read_bytes().replace(b"\n", b"\r\n")
    raw = raw.replace(b"DTSTART:2022", f"DTSTART:{year}".encode()).replace(b"DTEND:2022", f"DTEND:{year}".encode())
    raw = raw.replace(b"UID:02e79b96", b"UID:" + uid).replace(b"Message-ID: <", b"Message-ID: <" + uid + b".")
    outgoing.mail.append([raw])
    await outgoing.sync()
    await run_queued(outgoing.services, ("extract_events",))
    event_id = await outgoing.services.db.fetchval("SELECT id FROM calendar_event WHERE uid = $1", uid.decode())
    assert event_id is not None
    return int(event_id)


async def _thread_of(outgoing: Outgoing, event_id: int) -> int:
    return int(await outgoing.services.db.fetchval(
        "SELECT m.thread_id FROM message m JOIN event_source_link l ON l.message_id = m.id WHERE l.event_id = $1",
        event_id))


async def test_answer_buttons_only_on_an_invitation_naming_me_whose_event_has_not_ended(
    outgoing: Outgoing, client: httpx.AsyncClient
) -> None:
    """Issue 29: Yes/Maybe/No appear only where one of the user's addresses is an attendee and the event is to
    come. The card itself (what, when, who) is shown either way."""
    upcoming = await _deliver(outgoing, year=FUTURE_YEAR, uid=b"future-29b")
    assert (await sign_in(client, outgoing.user.email, "correct horse")).status_code == 200
    thread = await _thread_of(outgoing, upcoming)
    page = await client.get(f"/thread/{thread}")
    assert f'data-event-id="{upcoming}"' in page.text  # the card is there...
    assert f'action="/calendar/event/{upcoming}/answer"' not in page.text  # ...but receiver@ is not the user yet
    await outgoing.verified_alias("receiver@example.com", name="Receiver")
    page = await client.get(f"/thread/{thread}")
    assert f'action="/calendar/event/{upcoming}/answer"' in page.text
    for answer in ("accepted", "tentative", "declined"):
        assert f'value="{answer}"' in page.text
    # The same invitation for an event that ended (March 2022): a card, no question.
    ended = await _deliver(outgoing, year=2022, uid=b"past-29b")
    page = await client.get(f"/thread/{await _thread_of(outgoing, ended)}")
    assert f'data-event-id="{ended}"' in page.text
    assert f'action="/calendar/event/{ended}/answer"' not in page.text
    # And the upcoming one stops asking once it is over.
    cards = await outgoing.services.calendar.invites.cards_for_thread(
        outgoing.user.id, thread, now=datetime(FUTURE_YEAR, 3, 16, 11, 30, tzinfo=UTC))
    assert [card.answerable for found in cards.values() for card in found] == [False]
    cards = await outgoing.services.calendar.invites.cards_for_thread(
        outgoing.user.id, thread, now=datetime(FUTURE_YEAR, 3, 16, 11, 29, tzinfo=UTC))
    assert [card.answerable for found in cards.values() for card in found] == [True]
