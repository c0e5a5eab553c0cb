"""Google and Microsoft sign-in against the fake Gmail and Graph servers: the app's settings point both
providers' hosts at the fakes; Google's OAuth client comes from the environment, Microsoft's is entered on the
admin page by the tests that need it."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from plmail.config import Settings
from tests.support.fakes import FakeServer, GmailFake, GraphFake, ManualClock
from tests.support.web import csrf_token


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def google(clock: ManualClock) -> Iterator[FakeServer[GmailFake]]:
    with FakeServer(GmailFake(clock=clock)) as server:
        yield server


@pytest.fixture
def microsoft(clock: ManualClock) -> Iterator[FakeServer[GraphFake]]:
    with FakeServer(GraphFake(clock=clock)) as server:
        yield server


@pytest.fixture
def settings(settings: Settings, google: FakeServer[GmailFake], microsoft: FakeServer[GraphFake]) -> Settings:
    return dataclasses.replace(settings, google_base_url=google.url, microsoft_base_url=microsoft.url,
                               google_client_id=google.app.client_id,
                               google_client_secret=google.app.client_secret)


async def start_consent(client: httpx.AsyncClient, provider: str, *, account_id: int | None = None,
                        page: str = "/accounts") -> httpx.Response:
    """Press "Connect …": the app answers with a redirect to the provider's consent page."""
    data = {"_csrf_token": await csrf_token(client, page)}
    if account_id is not None:
        data["account_id"] = str(account_id)
    return await client.post(f"/accounts/oauth/{provider}/start", data=data, follow_redirects=False)


async def consent(client: httpx.AsyncClient, provider: str, *, account_id: int | None = None) -> httpx.Response:
    """The whole round trip: the app, the provider's consent page (over real HTTP), the app's callback."""
    started = await start_consent(client, provider, account_id=account_id)
    assert started.status_code in (302, 303), started.text
    async with httpx.AsyncClient(timeout=10) as browser:
        answer = await browser.get(started.headers["location"], follow_redirects=False)
    assert answer.status_code == 302, answer.text
    back = answer.headers["location"]
    assert urlsplit(back).path == f"/accounts/oauth/{provider}/callback"
    return await client.get(back)


def query_of(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
