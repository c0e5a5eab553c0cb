"""Issue 39, rule 9, as the attack: once an administrator disables a user, whatever that user set up keeps
nothing working — the calendar feed URL is refused, the app password gets 401, an open EventSource push
stream ends, and a send scheduled for later never reaches the SMTP server (its message is a draft again).
plmail has no CalDAV/CardDAV and no RFC 8620 PushSubscription: there is nothing else to stop."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import httpx

from plmail.domain.models import User
from plmail.domain.outgoing import SubmissionState
from plmail.services import Services
from tests.integration.jmap.conftest import EventReader, JmapBox, box, live, make_box  # noqa: F401 (fixtures)
from tests.integration.sending.conftest import Outgoing
from tests.support.jobs import run_queued
from tests.support.serve import ServeProcess


async def administrator(services: Services) -> User:
    return await services.users.create_user("admin@example.org", "correct horse")


async def test_a_disabled_users_feed_and_app_password_are_refused(services: Services, client: httpx.AsyncClient
                                                                  ) -> None:
    eve = await make_box(services, client, "eve@example.org")
    [calendar, *_] = await services.calendar.browser.provision(eve.user.id)
    feed = await services.calendar.feeds.subscribe(eve.user.id, calendar.id)
    url = f"/calendar/feed/{feed.token}.ics"
    assert (await client.get(url)).status_code == 200
    assert (await client.get("/jmap/session", headers=eve.headers)).status_code == 200

    await services.users.set_disabled(await administrator(services), eve.user.id, True)

    assert (await client.get(url)).status_code == 404  # like any unknown feed: the URL tells nothing
    refused = await client.get("/jmap/session", headers=eve.headers)
    assert refused.status_code == 401
    api = await client.post("/jmap/api", headers=eve.headers,
                            json={"using": ["urn:ietf:params:jmap:core"], "methodCalls": []})
    assert api.status_code == 401


async def test_a_disabled_users_scheduled_send_never_reaches_smtp(outgoing: Outgoing) -> None:
    services = outgoing.services
    content = await outgoing.content(subject="Sent while I am away")
    saved = await outgoing.save(content)
    later = await services.outbox.submit(outgoing.user.id, saved.message_id, content.identity_id,
                                         send_at=datetime.now(UTC) + timedelta(hours=2))
    racing = await outgoing.save(await outgoing.content(subject="Already due"))
    due = await services.outbox.submit(outgoing.user.id, racing.message_id, content.identity_id,
                                       send_at=datetime.now(UTC) + timedelta(hours=3))

    await services.users.set_disabled(await administrator(services), outgoing.user.id, True)
    # One the disable did not see (a second process scheduled it in the same instant), due now: the claim
    # refuses it all the same.
    await services.db.execute("UPDATE submission SET state = 'pending', send_at = now() WHERE id = ANY($1)",
                              [later.id, due.id])
    await run_queued(services, ("send_submission",))
    for submission_id in (later.id, due.id):
        assert await services.outbox.deliver(submission_id) == SubmissionState.CANCELED.value
    await asyncio.sleep(0.3)
    assert outgoing.smtp.received == []
    listed = {s.id: s.state for s in await services.outbox.for_accounts([outgoing.account_id])}
    assert listed == {later.id: SubmissionState.CANCELED, due.id: SubmissionState.CANCELED}


async def test_disabling_ends_the_users_open_push_stream(box: JmapBox, live: ServeProcess) -> None:  # noqa: F811
    await box.state("Mailbox")
    async with (httpx.AsyncClient(base_url=live.url, timeout=30) as http,
                http.stream("GET", "/jmap/eventsource?types=*&closeafter=no&ping=0", headers=box.headers) as stream):
        reader = EventReader(stream)
        initial = await reader.next(5)
        assert initial is not None and initial.event == "state"
        await box.services.users.set_disabled(await administrator(box.services), box.user.id, True)
        closed = await reader.next(3)
        assert closed is not None and closed.event == "closed"  # the server ended the stream
        assert (await http.get("/jmap/session", headers=box.headers)).status_code == 401
