"""`/events` on a running server: a signed-in page hears about its own mail only, and open streams do not
hold up a stop."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from plmail.domain.enums import LabelRole, ProviderKind
from plmail.mail.ingest import parse_message
from plmail.services import Services
from tests.support.mail import make_message
from tests.support.repos import account_rows
from tests.support.serve import ServeProcess
from tests.support.web import sign_in


@pytest.fixture
def serve(tmp_path: Path, database_url: str) -> Iterator[ServeProcess]:
    process = ServeProcess(tmp_path / "serve", database_url=database_url, args=["--queues", ""]).start()
    try:
        process.wait_healthy()
        yield process
    finally:
        process.terminate()


async def _user(services: Services, email: str) -> tuple[int, int]:
    user = await services.users.create_user(email, "correct horse")
    account = await account_rows(services).create(user_id=user.id, provider_kind=ProviderKind.LOCAL, name="Home",
                                             email=email)
    return account, (await services.labels.role_ids(user.id))[LabelRole.INBOX]


async def _deliver(services: Services, account: int, inbox: int, subject: str) -> None:
    raw = make_message(subject=subject, date=datetime.now(UTC))
    await services.pipeline.ingest([parse_message(raw, account_id=account, label_ids=(inbox,))])


async def _read_events(stream: httpx.Response, into: asyncio.Queue[str]) -> None:
    async for line in stream.aiter_lines():
        if line.startswith("event:"):
            await into.put(line.split(":", 1)[1].strip())


async def test_a_page_hears_of_its_own_mail_and_a_stop_does_not_wait_for_open_streams(
    serve: ServeProcess, services: Services
) -> None:
    mine, my_inbox = await _user(services, "eve@example.org")
    theirs, their_inbox = await _user(services, "mallory@example.org")
    async with httpx.AsyncClient(base_url=serve.url, follow_redirects=False, timeout=10) as anonymous:
        refused = await anonymous.get("/events")
        assert refused.status_code in (302, 303, 401)
    async with httpx.AsyncClient(base_url=serve.url, follow_redirects=True, timeout=10) as client:
        assert (await sign_in(client, "eve@example.org", "correct horse")).status_code == 200
        async with client.stream("GET", "/events") as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")
            events: asyncio.Queue[str] = asyncio.Queue()
            reader = asyncio.create_task(_read_events(stream, events))
            assert await asyncio.wait_for(events.get(), 5) == "ready"

            await _deliver(services, theirs, their_inbox, "Not for Eve")
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(events.get(), 1.5)  # another user's mail says nothing here
            await _deliver(services, mine, my_inbox, "For Eve")
            assert await asyncio.wait_for(events.get(), 5) == "mail"

            started = time.monotonic()
            assert await asyncio.to_thread(serve.terminate, 15) == 0
            stopped_after = time.monotonic() - started
            reader.cancel()
    assert stopped_after < 4, serve.log()  # the grace period is 5 s: the open stream did not hold the stop
    assert "timeout graceful shutdown exceeded" not in serve.log()
