"""An event with guests made on the phone over CalDAV (issue 34): plmail sends the invitations, as a CalDAV
scheduling server does (RFC 6638 §3.2: the server delivers the organiser's iTIP messages), from the user's own
account through its SMTP server; a guest taken off on the phone is sent a CANCEL, and deleting the event on the
phone cancels it for the rest."""

from __future__ import annotations

import email
import email.policy
from datetime import UTC, datetime

import httpx
import icalendar

from plmail.services import Services
from tests.integration.dav.conftest import base_url, http, listener
from tests.integration.sending.conftest import Outgoing
from tests.support.smtp import Received

__all__ = ["base_url", "http", "listener"]

YEAR = datetime.now(UTC).year + 1
EVENT = """BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:-//Phone//EN\r
BEGIN:VEVENT\r
UID:standup@phone\r
DTSTAMP:{year}0101T080000Z\r
DTSTART:{year}0310T{hour}0000Z\r
DTEND:{year}0310T{end}0000Z\r
SEQUENCE:{sequence}\r
SUMMARY:Stand-up\r
ORGANIZER;CN=Owner:mailto:{organiser}\r
{attendees}END:VEVENT\r
END:VCALENDAR\r
"""


def _event(organiser: str, guests: list[str], *, hour: int = 9, sequence: int = 0) -> str:
    lines = "".join(f"ATTENDEE;PARTSTAT=NEEDS-ACTION;RSVP=TRUE:mailto:{g}\r\n" for g in guests)
    return EVENT.format(year=YEAR, hour=f"{hour:02d}", end=f"{hour + 1:02d}", sequence=sequence,
                        organiser=organiser, attendees=lines)


def _itip(received: Received) -> tuple[str, icalendar.Event]:
    message = email.message_from_bytes(received.data, policy=email.policy.default)
    [part] = [p for p in message.walk() if p.get_content_type() == "text/calendar"]
    calendar = icalendar.Calendar.from_ical(part.get_content())
    [vevent] = calendar.walk("VEVENT")
    return str(calendar["method"]), vevent


async def test_the_phones_event_with_guests_is_sent_to_them_and_changes_follow(
        outgoing: Outgoing, services: Services, http: httpx.AsyncClient) -> None:
    token = (await services.app_passwords.create(outgoing.user.id, "Phone")).token
    auth = (outgoing.user.email, token)
    calendar = (await services.calendar.dav.calendars(outgoing.user.id))[0]
    path = f"/dav/{outgoing.user.id}/calendars/{calendar.key}/standup.ics"
    me = outgoing.address

    made = await http.put(path, content=_event(me, ["ann@example.net", "ben@example.net"]), auth=auth)
    assert made.status_code == 201, made.text
    await _deliver_pending(outgoing, services)
    [request] = outgoing.smtp.wait_for(1)
    assert sorted(request.rcpt_to) == ["ann@example.net", "ben@example.net"] and request.mail_from == me
    method, vevent = _itip(request)
    assert method == "REQUEST" and str(vevent["uid"]) == "standup@phone"
    assert str(vevent["organizer"]).lower() == f"mailto:{me}"

    # an hour later, and Ben no longer asked: Ben gets a CANCEL, Ann the new time at the phone's SEQUENCE
    moved = await http.put(path, content=_event(me, ["ann@example.net"], hour=10, sequence=1), auth=auth,
                           headers={"If-Match": made.headers["etag"]})
    assert moved.status_code == 204, moved.text
    await _deliver_pending(outgoing, services)
    received = outgoing.smtp.wait_for(3)[1:]
    by_method = {_itip(r)[0]: r for r in received}
    assert by_method["CANCEL"].rcpt_to == ("ben@example.net",)
    assert by_method["REQUEST"].rcpt_to == ("ann@example.net",)
    request_again = _itip(by_method["REQUEST"])[1]
    assert int(request_again["sequence"]) == 1 and request_again.decoded("dtstart").hour == 10

    # deleted on the phone: cancelled for Ann
    gone = await http.delete(path, auth=auth)
    assert gone.status_code == 204
    await _deliver_pending(outgoing, services)
    cancel = outgoing.smtp.wait_for(4)[3]
    assert _itip(cancel)[0] == "CANCEL" and cancel.rcpt_to == ("ann@example.net",)


async def test_an_invitation_someone_else_organises_is_never_sent_from_the_phones_copy(
        outgoing: Outgoing, services: Services, http: httpx.AsyncClient) -> None:
    token = (await services.app_passwords.create(outgoing.user.id, "Phone")).token
    calendar = (await services.calendar.dav.calendars(outgoing.user.id))[0]
    path = f"/dav/{outgoing.user.id}/calendars/{calendar.key}/theirs.ics"
    made = await http.put(path, content=_event("boss@example.net", [outgoing.address, "ann@example.net"]),
                          auth=(outgoing.user.email, token))
    assert made.status_code == 201
    await _deliver_pending(outgoing, services)
    assert outgoing.smtp.received == []


async def _deliver_pending(outgoing: Outgoing, services: Services) -> None:
    """What the send workers would do: every invitation waiting in the outbox goes now."""
    rows = await services.db.fetch(
        "SELECT id FROM submission WHERE origin = 'invite' AND state = 'pending' ORDER BY id")
    for row in rows:
        await outgoing.deliver(int(row["id"]))
