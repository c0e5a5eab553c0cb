"""Invitations sent from a JMAP client (issue 34; draft-ietf-jmap-calendars with RFC 5546/6047): an event created
over CalendarEvent/set with an attendee and sendSchedulingMessages true reaches the guest as an iTIP REQUEST
through the organiser's own account and the suite's SMTP server; a move goes out again at a higher SEQUENCE, a
destroy as a CANCEL; with sendSchedulingMessages false the event is saved and nothing is sent."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx

from tests.integration.sending.conftest import Outgoing
from tests.integration.sending.test_invitations_sent import attendees_of, itip
from tests.support.jobs import run_queued

USING = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:calendars"]
YEAR = datetime.now(UTC).year + 1


async def test_guests_of_an_event_made_on_the_phone_get_request_update_and_cancel(
        outgoing: Outgoing, client: httpx.AsyncClient) -> None:
    token = (await outgoing.services.app_passwords.create(outgoing.user.id, "Phone")).token

    async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        response = await client.post("/jmap/api", headers={"Authorization": f"Bearer {token}"}, json={
            "using": USING, "methodCalls": [[name, {"accountId": f"u{outgoing.user.id}", **arguments}, "0"]]})
        assert response.status_code == 200, response.text
        result_name, result, _ = response.json()["methodResponses"][0]
        assert result_name == name, result
        return dict(result)

    async def sent(count: int) -> list[Any]:
        await run_queued(outgoing.services, ("send_submission", "file_sent_copy"))
        return outgoing.smtp.wait_for(count)

    def review(title: str) -> dict[str, Any]:
        return {"title": title, "start": f"{YEAR}-03-10T10:00:00", "timeZone": "Europe/Berlin", "duration": "PT1H",
                "participants": {
                    "me": {"@type": "Participant", "roles": {"owner": True, "attendee": True},
                           "sendTo": {"imip": f"mailto:{outgoing.address}"}},
                    "bea": {"@type": "Participant", "name": "Bea Berg", "roles": {"attendee": True},
                            "sendTo": {"imip": "mailto:bea@example.net"}, "participationStatus": "needs-action"}}}

    made = await call("CalendarEvent/set", {"sendSchedulingMessages": True, "create": {"r": review("Review")}})
    event_id = made["created"]["r"]["id"]
    [request] = await sent(1)
    assert request.rcpt_to == ("bea@example.net",) and request.mail_from == outgoing.address
    method, vevent = itip(request)
    assert method == "REQUEST" and int(vevent["sequence"]) == 0  # RFC 5546 §3.2.2
    assert str(vevent["organizer"]).lower() == f"mailto:{outgoing.address}"
    assert attendees_of(vevent)["bea@example.net"].params["PARTSTAT"] == "NEEDS-ACTION"
    assert vevent.decoded("dtstart") == datetime(YEAR, 3, 10, 9, 0, tzinfo=UTC)  # 10:00 in Berlin (CET)
    got = (await call("CalendarEvent/get", {"ids": [event_id]}))["list"][0]
    assert got["participants"]["organizer"]["email"] == outgoing.address
    assert [p["email"] for k, p in got["participants"].items() if k != "organizer"] == ["bea@example.net"]

    moved = await call("CalendarEvent/set", {"sendSchedulingMessages": True, "update": {
        event_id: {"start": f"{YEAR}-03-10T14:00:00"}}})
    assert moved["updated"] == {event_id: None}
    update = (await sent(2))[1]
    method, vevent = itip(update)
    assert method == "REQUEST" and int(vevent["sequence"]) == 1  # RFC 5546 §2.1.4: a higher SEQUENCE
    assert vevent.decoded("dtstart") == datetime(YEAR, 3, 10, 13, 0, tzinfo=UTC)

    # sendSchedulingMessages false: saved with its guest, nothing sent.
    quiet = await call("CalendarEvent/set", {"create": {"q": review("Quiet")}})
    quiet_id = quiet["created"]["q"]["id"]
    await run_queued(outgoing.services, ("send_submission", "file_sent_copy"))
    assert len(outgoing.smtp.received) == 2
    assert await outgoing.services.db.fetchval("SELECT count(*) FROM submission") == 2
    stored = (await call("CalendarEvent/get", {"ids": [quiet_id]}))["list"][0]
    assert "bea@example.net" in [p.get("email") for p in stored["participants"].values()]

    gone = await call("CalendarEvent/set", {"sendSchedulingMessages": True, "destroy": [event_id]})
    assert gone["destroyed"] == [event_id]
    cancel = (await sent(3))[2]
    method, vevent = itip(cancel)
    assert method == "CANCEL" and cancel.rcpt_to == ("bea@example.net",)  # RFC 5546 §3.2.5
    assert int(vevent["sequence"]) == 2
