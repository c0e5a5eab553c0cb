"""Fixtures: each fake on its own uvicorn server on 127.0.0.1, with a manual clock, stopped after the test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from tests.support.fakes import FakeServer, GmailFake, GraphFake, ManualClock, ModelFake


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def gmail(clock: ManualClock) -> Iterator[FakeServer[GmailFake]]:
    with FakeServer(GmailFake(clock=clock)) as server:
        yield server


@pytest.fixture
def gmail_http(gmail: FakeServer[GmailFake]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=f"{gmail.url}/gmail/v1/users/me", headers=gmail.app.auth_headers(),
                      timeout=5) as client:
        yield client


@pytest.fixture
def graph(clock: ManualClock) -> Iterator[FakeServer[GraphFake]]:
    with FakeServer(GraphFake(clock=clock)) as server:
        yield server


@pytest.fixture
def graph_http(graph: FakeServer[GraphFake]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=f"{graph.url}/v1.0", headers=graph.app.auth_headers(), timeout=5) as client:
        yield client


@pytest.fixture
async def model() -> AsyncIterator[FakeServer[ModelFake]]:
    async with FakeServer(ModelFake()) as server:
        yield server


@pytest.fixture
async def model_http(model: FakeServer[ModelFake]) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=model.url, timeout=5) as client:
        yield client
