"""Issue 39 rule 1, as the attack: a guesser rotating `X-Forwarded-For` / `Forwarded` to pose as a fresh client on
every attempt. The headers count only from a peer in PLMAIL_TRUSTED_PROXIES (nothing by default, loopback
included), and then the right-most hop that is not itself a trusted proxy is the client."""

from __future__ import annotations

import dataclasses
import ipaddress
import itertools
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from litestar import Litestar

from plmail.app import create_app
from plmail.config import Settings
from plmail.services import Services
from tests.conftest import browser, running_lifespan
from tests.support.serve import ServeProcess
from tests.support.web import csrf_token

EMAIL = "admin@example.org"
PASSWORD = "correct horse"
PROXY = "203.0.113.7"
INNER_PROXY = "10.1.2.3"
ATTACKER = "198.51.100.9"
_fresh = (f"192.0.2.{n}" for n in itertools.count(1))


async def _wrong_password(client: httpx.AsyncClient, headers: dict[str, str]) -> int:
    token = await csrf_token(client, "/login")
    answer = await client.post("/login", data={"email": EMAIL, "password": "wrong guess", "_csrf_token": token},
                               headers=headers)
    return answer.status_code


@pytest.fixture
def serve(tmp_path: Path, database_url: str) -> Iterator[ServeProcess]:
    """`plmail serve` as a user starts it, with PLMAIL_TRUSTED_PROXIES unset."""
    process = ServeProcess(tmp_path / "serve", database_url=database_url, args=["--queues", ""]).start()
    try:
        process.wait_healthy()
        yield process
    finally:
        process.terminate()


async def test_a_rotating_x_forwarded_for_from_loopback_is_not_believed_by_default(
        serve: ServeProcess, services: Services) -> None:
    await services.users.create_user(EMAIL, PASSWORD)
    async with httpx.AsyncClient(base_url=serve.url, timeout=30) as attacker:
        statuses = []
        for _ in range(8):  # a new made-up client address on every guess, from 127.0.0.1
            fresh = next(_fresh)
            statuses.append(await _wrong_password(attacker, {"X-Forwarded-For": fresh, "Forwarded": f"for={fresh}"}))
    # Five wrong passwords for one address from one client, then each further attempt waits (users/throttle.py).
    assert statuses[:5] == [401] * 5 and statuses[5:] == [429] * 3, statuses
    keys = {r["key"] for r in await services.db.fetch("SELECT key FROM login_throttle")}
    assert f"web:pair:{EMAIL}|127.0.0.1" in keys
    assert not any("192.0.2." in key for key in keys)


@pytest.fixture
async def proxied(settings: Settings, database_url: str, services: Services) -> AsyncIterator[Litestar]:
    """Behind two proxies: the outer one at 203.0.113.7 and an inner one in 10.0.0.0/8."""
    trusted = dataclasses.replace(settings, trusted_proxies=(ipaddress.ip_network(f"{PROXY}/32"),
                                                             ipaddress.ip_network("10.0.0.0/8")))
    app = create_app(trusted, database_url, worker_queues=(), services=services)
    async with running_lifespan(app):
        yield app


@pytest.mark.parametrize("header", ["X-Forwarded-For", "Forwarded"])
async def test_behind_a_trusted_proxy_the_right_most_untrusted_hop_counts_whatever_the_client_prepends(
        proxied: Litestar, services: Services, header: str) -> None:
    await services.users.create_user(EMAIL, PASSWORD)

    def chain(*hops: str) -> dict[str, str]:
        if header == "Forwarded":  # RFC 7239 §4; an IPv6 node would be quoted and bracketed
            return {header: ", ".join(f'for="{hop}"' if ":" in hop else f"for={hop}" for hop in hops)}
        return {header: ", ".join(hops)}

    statuses = []
    async with browser(proxied, PROXY) as via_proxy:
        for _ in range(7):
            # The attacker writes the left part; the inner proxy appends the attacker's address, the outer one the
            # inner proxy's.
            statuses.append(await _wrong_password(via_proxy, chain(next(_fresh), ATTACKER, INNER_PROXY)))
    assert statuses[:5] == [401] * 5 and statuses[5:] == [429] * 2, statuses
    keys = {r["key"] for r in await services.db.fetch("SELECT key FROM login_throttle")}
    assert f"web:pair:{EMAIL}|{ATTACKER}" in keys and not any("192.0.2." in key for key in keys)

    # Sent straight to the app, not through the proxy, the same header is the sender's say and counts for nothing.
    async with browser(proxied, "198.51.100.77") as direct:
        assert await _wrong_password(direct, chain("192.0.2.200")) == 401
    keys = {r["key"] for r in await services.db.fetch("SELECT key FROM login_throttle")}
    assert f"web:pair:{EMAIL}|198.51.100.77" in keys and not any("192.0.2.200" in key for key in keys)


async def test_forwarded_and_x_forwarded_for_that_disagree_leave_the_proxy_as_the_client(
        proxied: Litestar, services: Services) -> None:
    """A proxy writes one of the two and passes the other through from the client: one the attacker wrote
    cannot be told apart, so neither counts."""
    await services.users.create_user(EMAIL, PASSWORD)
    async with browser(proxied, PROXY) as via_proxy:
        for _ in range(3):
            await _wrong_password(via_proxy, {"X-Forwarded-For": ATTACKER, "Forwarded": f"for={next(_fresh)}"})
        agreeing = {"X-Forwarded-For": "192.0.2.250", "Forwarded": 'for="192.0.2.250:4711";proto=http'}
        await _wrong_password(via_proxy, agreeing)
    keys = {r["key"] for r in await services.db.fetch("SELECT key FROM login_throttle")}
    assert f"web:pair:{EMAIL}|{PROXY}" in keys
    assert f"web:pair:{EMAIL}|192.0.2.250" in keys
    assert not any(ATTACKER in key for key in keys)
