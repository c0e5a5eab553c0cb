"""EventSource push against a running `plmail serve`: StateChange within 2 s of new mail, one push per
batch, types, closeafter=state with Last-Event-ID, pings, and no other user's changes."""

from __future__ import annotations

import time

import httpx

from tests.integration.jmap.conftest import EventReader, JmapBox, make_box
from tests.support.mail import make_message
from tests.support.serve import ServeProcess

STREAM = "/jmap/eventsource?types={types}&closeafter={closeafter}&ping={ping}"


def _url(types: str = "*", closeafter: str = "no", ping: int = 0) -> str:
    return STREAM.format(types=types, closeafter=closeafter, ping=ping)


async def test_state_change_arrives_within_two_seconds_once_per_batch(box: JmapBox, live: ServeProcess) -> None:
    other = await make_box(box.services, box.http, "other@example.org")
    await box.state("Mailbox")  # a client starts with Mailbox/get, which binds the user's labels to the account
    async with (httpx.AsyncClient(base_url=live.url, timeout=30) as http,
                http.stream("GET", _url(), headers=box.headers) as mine,
                http.stream("GET", _url(), headers=other.headers) as theirs):
            assert mine.headers["content-type"].startswith("text/event-stream")
            reader, spy = EventReader(mine), EventReader(theirs)
            initial = await reader.next(5)
            assert initial is not None and initial.event == "state" and initial.id
            assert initial.data["@type"] == "StateChange"
            unified = f"u{box.user.id}"
            assert set(initial.data["changed"]) == {unified, box.account}  # the unified account and its one
            # every type this server pushes (issue 17 added Identity and EmailSubmission)
            assert set(initial.data["changed"][box.account]) == {"Mailbox", "Email", "Thread", "Identity",
                                                                 "EmailSubmission"}
            their_initial = await spy.next(5)
            assert their_initial is not None and set(their_initial.data["changed"]) == {f"u{other.user.id}",
                                                                                      other.account}

            started = time.monotonic()
            await box.ingest(*[make_message(message_id=f"push{i}@x", subject=f"Push {i}") for i in range(10)])
            pushed = await reader.next(2)
            assert pushed is not None and time.monotonic() - started < 2.0
            changed = pushed.data["changed"][box.account]
            assert changed["Email"] == await box.state("Email") and "Thread" in changed
            assert pushed.data["changed"][unified]["Email"] == changed["Email"]  # the same log, the same state
            assert pushed.id != initial.id
            assert await reader.next(1.5) is None  # ten messages, one batch, one push
            assert await spy.next(0.5) is None  # nothing of another user's mail reaches this stream

            await box.call("Email/set", {"update": {str(await box.services.db.fetchval(
                "SELECT min(id) FROM message WHERE account_id = $1", box.account_id)): {"keywords/$seen": True}}})
            marked = await reader.next(2)
            # a keyword is the Email's and its Mailboxes' counts, never the Thread's
            assert marked is not None and set(marked.data["changed"][box.account]) == {"Email", "Mailbox"}
            await reader.close()
            await spy.close()


async def test_types_closeafter_state_and_last_event_id(box: JmapBox, live: ServeProcess) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=30) as http:
        async with http.stream("GET", _url(types="Email", closeafter="state"), headers=box.headers) as once:
            reader = EventReader(once)
            first = await reader.next(5)
            assert first is not None and set(first.data["changed"][box.account]) == {"Email"}
            # the initial states do not end it: a long-polling client waits for the next change
            assert await reader.next(1.5) is None
            await box.ingest(make_message(message_id="news@x"))
            news = await reader.next(3)
            assert news is not None and news.event == "state" and "Email" in news.data["changed"][box.account]
            ended = await reader.next(5)
            assert ended is not None and ended.event == "closed"  # and after that change, it ends
        resume = {**box.headers, "Last-Event-ID": str(news.id)}
        async with http.stream("GET", _url(types="Email", closeafter="state"), headers=resume) as waiting:
            reader = EventReader(waiting)
            assert await reader.next(1) is None  # nothing moved since that id: nothing to send yet
            await box.ingest(make_message(message_id="late@x"))
            change = await reader.next(3)
            assert change is not None and list(change.data["changed"][box.account]) == ["Email"]
            ended = await reader.next(5)
            assert ended is not None and ended.event == "closed"


async def test_pings_are_clamped_to_at_least_five_seconds(box: JmapBox, live: ServeProcess) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=30) as http:
        async with http.stream("GET", _url(ping=1), headers=box.headers) as stream:
            reader = EventReader(stream)
            assert (await reader.next(5)) is not None
            started = time.monotonic()
            ping = await reader.next(8)
            assert ping is not None and ping.event == "ping" and ping.data == {"interval": 5} and ping.id is None
            assert time.monotonic() - started >= 4.5
            await reader.close()
        unauthorised = await http.get(_url())
        assert unauthorised.status_code == 401
