"""jmapc, a real JMAP client, against a running `plmail serve`: session, mailboxes, a query chained into a
get, changes after new mail, marking read and archiving (which the web UI then shows), threads, identities,
an EventSource StateChange within two seconds of a new message, and the calendar read with raw calls."""

from __future__ import annotations

import asyncio
import functools
import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import jmapc
import pytest
from jmapc import Ref
from jmapc.methods import (
    CustomMethod,
    CustomResponse,
    EmailChanges,
    EmailGet,
    EmailQuery,
    EmailSet,
    IdentityGet,
    MailboxGet,
    SearchSnippetGet,
    ThreadGet,
)
from jmapc.models import EmailQueryFilterCondition
from jmapc.session import Session

from plmail.config import Settings
from plmail.services import Services
from tests.integration.calendar.conftest import invite, utc
from tests.integration.jmap.conftest import USING, JmapBox, make_box
from tests.support.mail import make_message
from tests.support.serve import ServeProcess
from tests.support.web import sign_in


class LoopbackClient(jmapc.Client):
    """jmapc always fetches https://{host}/.well-known/jmap; the test server speaks plain HTTP on loopback.
    Everything after that comes from the session the server returns, so only this one URL is changed."""

    @functools.cached_property
    def jmap_session(self) -> Session:
        response = self.requests_session.get(f"http://{self._host}/.well-known/jmap", timeout=30)
        response.raise_for_status()
        return Session.from_dict(response.json())


@pytest.fixture
def live(settings: Settings, database_url: str) -> Iterator[ServeProcess]:
    server = ServeProcess(settings.data_dir, database_url=database_url, args=["--queues", ""]).start()
    try:
        server.wait_healthy()
        yield server
    finally:
        server.terminate()


@pytest.fixture
async def box(services: Services, client: httpx.AsyncClient) -> JmapBox:
    return await make_box(services, client)


def _events_into(client: jmapc.Client, sink: queue.Queue[Any]) -> None:
    try:
        for event in client.events:
            sink.put(event)
    except Exception as exc:  # the stream closes when the test ends
        sink.put(exc)


async def test_jmapc_against_a_running_server(box: JmapBox, live: ServeProcess) -> None:
    old = await box.ingest(make_message(message_id="first@x", subject="Quarterly plan", body="Numbers inside."),
                           make_message(message_id="second@x", subject="Lunch", body="Pizza?"))
    client = LoopbackClient.create_with_api_token(host=f"127.0.0.1:{live.port}", api_token=box.token)

    session = await asyncio.to_thread(lambda: client.jmap_session)
    # jmapc works on the primary account: the user's unified one
    assert client.account_id == box.primary and session.username == "reader@example.org"
    assert "urn:ietf:params:jmap:mail" in session.capabilities.urns
    assert session.capabilities.core.max_calls_in_request == 32

    mailboxes = await asyncio.to_thread(client.request, MailboxGet(ids=None))
    roles = {m.role: m for m in mailboxes.data}
    inbox, archive = roles["inbox"], roles["archive"]
    assert inbox.total_emails == 2 and inbox.unread_emails == 2

    query, got = await asyncio.to_thread(client.request, [
        EmailQuery(filter=EmailQueryFilterCondition(in_mailbox=inbox.id), collapse_threads=True, limit=50),
        EmailGet(ids=Ref("/ids"), properties=["subject", "threadId", "keywords", "mailboxIds", "from"]),
    ])
    assert set(query.response.ids) == {str(m.id) for m in old.messages}
    assert {e.subject for e in got.response.data} == {"Quarterly plan", "Lunch"}
    state = got.response.state
    plan = next(e for e in got.response.data if e.subject == "Quarterly plan")

    fresh = await box.ingest(make_message(message_id="third@x", subject="Fresh news"))
    changes = await asyncio.to_thread(client.request, EmailChanges(since_state=state))
    assert changes.created == [str(fresh.messages[0].id)] and changes.updated == [] and changes.destroyed == []

    done = await asyncio.to_thread(client.request, EmailSet(update={plan.id: {
        "keywords/$seen": True, f"mailboxIds/{inbox.id}": None, f"mailboxIds/{archive.id}": True}}))
    assert done.updated == {plan.id: None}
    after = await asyncio.to_thread(client.request, EmailGet(ids=[plan.id], properties=["keywords", "mailboxIds"]))
    assert after.data[0].keywords == {"$seen": True} and after.data[0].mailbox_ids == {archive.id: True}
    assert (await sign_in(box.http, box.user.email, "correct horse")).status_code == 200
    inbox_page = (await box.http.get("/")).text
    assert "Quarterly plan" not in inbox_page and "Lunch" in inbox_page  # the web UI agrees
    assert await box.services.db.fetchval("SELECT seen_at IS NOT NULL FROM message WHERE id = $1", int(plan.id))

    threads = await asyncio.to_thread(client.request, ThreadGet(ids=[plan.thread_id]))
    assert threads.data[0].email_ids == [plan.id]
    snippets = await asyncio.to_thread(client.request, SearchSnippetGet(
        filter=EmailQueryFilterCondition(text="numbers"), ids=[plan.id]))
    assert snippets.data[0].preview is not None and "<mark>" in snippets.data[0].preview
    # The unified account lists the addresses the user can send from (issue 35); a local archive sends nothing,
    # so its addresses are listed in its own account only.
    identities = await asyncio.to_thread(client.request, IdentityGet())
    assert identities.data == []
    own = await box.call("Identity/get", {"ids": None}, using=[*USING, "urn:ietf:params:jmap:submission"])
    assert [i["email"] for i in own["list"]] == ["reader@example.org", "alias.reader@example.org"]

    events: queue.Queue[Any] = queue.Queue()
    # jmapc reads the stream with sseclient, which blocks: a daemon thread of its own, ended by the server
    # going away at teardown (closing the response from here would wait for the stream to finish).
    threading.Thread(target=_events_into, args=(client, events), daemon=True).start()
    initial = await asyncio.to_thread(events.get, True, 10)
    assert isinstance(initial, jmapc.Event) and {box.primary, box.account} <= set(initial.data.changed)
    started = time.monotonic()
    arrived = await box.ingest(make_message(message_id="fourth@x", subject="Pushed"))
    pushed = await asyncio.to_thread(events.get, True, 2)
    elapsed = time.monotonic() - started
    assert isinstance(pushed, jmapc.Event), pushed
    assert elapsed < 2.0
    assert pushed.data.changed[box.primary].email is not None
    newer = await asyncio.to_thread(client.request, EmailChanges(since_state=changes.new_state))
    assert str(arrived.messages[0].id) in newer.created

    # The same session reads the calendar with raw calls (jmapc has no calendar classes).
    invited = await box.ingest(invite("jmapc@x", title="Phone sees this", rrule="FREQ=WEEKLY;COUNT=3",
                                      start=utc(2026, 4, 1, 9)))
    await box.services.calendar.extraction.run(box.user.id, [m.id for m in invited.messages])
    assert "urn:ietf:params:jmap:calendars" in session.capabilities.urns
    calendars, found = await asyncio.to_thread(client.request, [
        _raw("Calendar/get", {"accountId": box.primary, "ids": None}),
        _raw("CalendarEvent/query", {"accountId": box.primary, "filter": {"after": "2026-04-07T00:00:00Z"}}),
    ])
    assert isinstance(calendars.response, CustomResponse) and isinstance(found.response, CustomResponse)
    assert calendars.response.data is not None and found.response.data is not None
    assert any(c["isDefault"] for c in calendars.response.data["list"])
    got = await asyncio.to_thread(client.request, _raw("CalendarEvent/get", {
        "accountId": box.primary, "ids": found.response.data["ids"]}))
    assert isinstance(got, CustomResponse) and got.data is not None
    [event] = got.data["list"]
    assert (event["uid"], event["title"], event["start"], event["recurrenceRules"][0]["count"]) == (
        "jmapc@x", "Phone sees this", "2026-04-01T09:00:00", 3)


def _raw(name: str, arguments: dict[str, Any]) -> CustomMethod:
    """A method jmapc has no class for, sent as it is (jmapc's own way of calling an extension)."""
    method = CustomMethod(data=arguments)
    method.jmap_method = name
    method.using = {"urn:ietf:params:jmap:calendars"}
    return method
