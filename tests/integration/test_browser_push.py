"""Issue 33, a browser's push subscription on the server: owned by the web session (never seen by JMAP's
PushSubscription/get, gone when the session ends), what a notification's action token allows, and its migration
run twice and undone."""

from __future__ import annotations

import secrets
import time

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from plmail.db.migrations import plmail_2026_12_07t09_00_00_000000 as browser_migration
from plmail.domain.errors import AuthenticationError, ValidationError
from plmail.push.browser import TOKEN_LIFETIME_SECONDS
from plmail.push.subscriptions import Credentials
from plmail.services import Services
from plmail.users.service import Browser
from tests.support.push_service import b64url


class DeviceKeys:
    """A device's real keys (nothing listens: no push is sent here)."""

    def __init__(self) -> None:
        public = ec.generate_private_key(ec.SECP256R1()).public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        self.keys = {"p256dh": b64url(public), "auth": b64url(secrets.token_bytes(16))}


async def _session(services: Services, email: str) -> tuple[int, int]:
    user = await services.users.create_user(email, "correct horse")
    signed = await services.users.sign_in(email, "correct horse", Browser("127.0.0.1", "test"))
    session_id = await services.db.fetchval("SELECT max(id) FROM web_session WHERE user_id = $1", user.id)
    assert signed is not None and session_id is not None
    return user.id, int(session_id)


@pytest.fixture
def services_with_loopback(services: Services) -> Services:
    services.browser_push.allow_loopback = True
    return services


async def test_a_browser_subscription_belongs_to_its_session_and_its_tokens_die_with_it(
        services_with_loopback: Services) -> None:
    services = services_with_loopback
    push = services.browser_push
    user_id, session_id = await _session(services, "eve@example.org")
    device = DeviceKeys()
    row = await push.subscribe(user_id, session_id, endpoint="http://127.0.0.1:9/push/x",
                               p256dh=device.keys["p256dh"], auth=device.keys["auth"])
    assert row.verified and row.browser and await push.on_for_session(user_id, session_id)
    # JMAP's PushSubscription/get lists only what the app password made.
    assert await services.push_subscriptions.owned(Credentials(user_id, None)) == []

    token = push.token(row.id, 77)
    assert (await push.grant(token)).thread_id == 77
    for forged in (token[:-2] + "xx", token.replace(".77.", ".78."), "1.2.3", ""):
        with pytest.raises(AuthenticationError):
            await push.grant(forged)
    with pytest.raises(AuthenticationError):  # a week later the lock screen's buttons no longer act
        await push.grant(push.token(row.id, 77, now=time.time() - TOKEN_LIFETIME_SECONDS - 1))
    with pytest.raises(ValidationError):
        await push.act(token, "destroy", "k1")
    with pytest.raises(ValidationError):
        await push.act(token, "archive", "")

    await services.sessions.end_all(user_id)  # signing out everywhere ends this session
    assert await services.db.fetchval("SELECT count(*) FROM push_subscription") == 0
    with pytest.raises(AuthenticationError):
        await push.grant(token)


async def test_a_push_endpoint_in_the_servers_own_network_is_refused(services: Services) -> None:
    user_id, session_id = await _session(services, "mallory@example.org")
    device = DeviceKeys()
    for endpoint in ("http://127.0.0.1:9/push", "https://10.0.0.1/push", "https://localhost/push"):
        with pytest.raises(ValidationError):
            await services.browser_push.subscribe(user_id, session_id, endpoint=endpoint,
                                                  p256dh=device.keys["p256dh"], auth=device.keys["auth"])


async def test_the_migration_runs_twice_and_undoing_it_leaves_jmap_subscriptions(services: Services) -> None:
    async with services.db.connection() as conn:
        await conn.execute(browser_migration.FORWARDS_SQL)
        await conn.execute(browser_migration.BACKWARDS_SQL)
        assert await conn.fetchval("SELECT to_regclass('applied_action')") is None
        assert await conn.fetchval("SELECT to_regclass('push_subscription')") is not None
        await conn.execute(browser_migration.FORWARDS_SQL)
    assert await services.db.fetchval("SELECT count(*) FROM notification_preference") == 0


async def test_idempotency_keys_are_kept_thirty_days(services: Services) -> None:
    user_id, _session_id = await _session(services, "keys@example.org")
    async with services.applied_actions.once(user_id, "old") as fresh:
        assert fresh
    async with services.applied_actions.once(user_id, "recent") as fresh:
        assert fresh
    await services.db.execute("UPDATE applied_action SET applied_at = now() - interval '31 days' "
                              "WHERE idempotency_key = 'old'")
    assert await services.applied_actions.prune() == 1
    async with services.applied_actions.once(user_id, "recent") as fresh:
        assert not fresh
