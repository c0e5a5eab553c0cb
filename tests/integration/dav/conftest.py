"""plmail's CalDAV/CardDAV front on a loopback port (uvicorn in this event loop, sharing `services`), a user with
an app password, and a second user, for real clients (the `caldav` library, vdirsyncer) and raw RFC requests."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import httpx
import pytest
import uvicorn

from plmail.app import create_app
from plmail.config import Settings
from plmail.domain.models import User
from plmail.services import Services


@dataclass(frozen=True)
class DavUser:
    user: User
    password: str  # the app password

    @property
    def email(self) -> str:
        return self.user.email

    @property
    def auth(self) -> tuple[str, str]:
        return self.user.email, self.password


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    try:
        yield sock
    finally:
        sock.close()


@pytest.fixture
async def base_url(settings: Settings, database_url: str, services: Services, listener: socket.socket
                   ) -> AsyncIterator[str]:
    """The real app on the listener's port, in this loop; clients that block run in threads beside it."""
    app = create_app(settings, database_url, worker_queues=(), services=services)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[listener]))
    while not server.started:
        assert not task.done(), task.result()
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        server.should_exit = True
        await task


async def make_user(services: Services, email: str) -> DavUser:
    user = await services.users.create_user(email, "correct horse", display_name="Dee Av", time_zone="Europe/Berlin")
    return DavUser(user, (await services.app_passwords.create(user.id, "Phone")).token)


@pytest.fixture
async def owner(services: Services) -> DavUser:
    return await make_user(services, "owner@example.org")


@pytest.fixture
async def stranger(services: Services) -> DavUser:
    return await make_user(services, "stranger@example.org")


@pytest.fixture
async def http(base_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
        yield client
