"""Issue 33, a browser's push subscription on the server: owned by the web session (never seen by JMAP's
PushSubscription/get, gone when the session ends), what a notification's action token allows, and its migration
run twice and undone."""

from __future__ import annotations

import secrets
import time
from datetime import UTC, datetime

import asyncpg
import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from plmail.db.migrations import plmail_2026_12_07t09_00_00_000000 as browser_migration
from plmail.db.migrations import plmail_2026_12_07t09_30_00_000000 as choice_migration
from plmail.db.migrations import plmail_2026_12_07t09_40_00_000000 as quiet_migration
from plmail.domain.enums import LabelRole, ProviderKind
from plmail.domain.errors import AuthenticationError, ValidationError
from plmail.domain.push import NotificationPreference, NotifyScope
from plmail.mail.ingest import parse_message
from plmail.push.browser import TOKEN_LIFETIME_SECONDS
from plmail.push.subscriptions import Credentials
from plmail.services import Services
from plmail.users.service import Browser
from tests.support.mail import make_message
from tests.support.push_service import b64url
from tests.support.repos import account_rows
from tests.support.web import csrf_token, sign_up_admin


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


async def _deliver(services: Services, account: int, labels: tuple[int, ...], subject: str, sender: str,
                   headers: dict[str, str] | None = None) -> None:
    raw = make_message(subject=subject, sender=sender, message_id=f"{subject.replace(' ', '-')}@example.org",
                       date=datetime.now(UTC), headers=headers)
    await services.pipeline.ingest([parse_message(raw, account_id=account, label_ids=labels)])


async def test_what_notifies_is_decided_per_message_by_the_users_choice(services: Services) -> None:
    """Issue 33: new mail in General (default), every tab, chosen labels, chosen accounts, VIP senders; a VIP's
    mail notifies whatever the choice, and mail outside the choice does not."""
    push = services.browser_push
    user = await services.users.create_user("vera@example.org", "correct horse")
    home = await account_rows(services).create(user_id=user.id, provider_kind=ProviderKind.LOCAL, name="Home",
                                               email="vera@example.org")
    work = await account_rows(services).create(user_id=user.id, provider_kind=ProviderKind.LOCAL, name="Work",
                                               email="vera@work.example")
    inbox = (await services.labels.role_ids(user.id))[LabelRole.INBOX]
    projects = await services.labels.create(user.id, "Projects")
    other = await services.labels.create(user.id, "Receipts")
    bulk = {"List-Unsubscribe": "<mailto:leave@shop.example>", "Precedence": "bulk"}
    await _deliver(services, home, (inbox,), "home general", "Alice <alice@example.org>")
    await _deliver(services, home, (inbox,), "home offer", "Shop <news@shop.example>", bulk)
    await _deliver(services, work, (inbox,), "work general", "Bob <bob@work.example>")
    await _deliver(services, home, (projects,), "filed project", "Carol <carol@example.org>")
    await _deliver(services, home, (other,), "filed receipt", "Dan <dan@example.org>")
    await _deliver(services, work, (inbox,), "vip offer", "Victor <Victor@VIP.example>", bulk)
    await _deliver(services, home, (inbox,), "read already", "Alice <alice@example.org>")
    newest = await push.repo.newest_message_id(user.id)
    await services.db.execute("UPDATE message SET seen_at = now() WHERE subject = 'read already'")

    async def notified() -> set[str]:
        preference = await push.preference(user.id)
        return {n.subject for n in await push.notices(user.id, 0, newest, preference, limit=50)}

    assert (await push.preference(user.id)).scope is NotifyScope.GENERAL
    assert await notified() == {"home general", "work general"}  # not the offer, the filed mail, the read one

    assert await push.add_vip(user.id, "Victor <victor@vip.example>") == "victor@vip.example"
    assert await notified() == {"home general", "work general", "vip offer"}  # a VIP in Promotions too

    await push.set_preference(user.id, NotificationPreference(scope=NotifyScope.EVERY))
    assert await notified() == {"home general", "home offer", "work general", "vip offer"}

    await push.set_preference(user.id, NotificationPreference(scope=NotifyScope.LABELS, label_ids=(projects,)))
    assert await notified() == {"filed project", "vip offer"}  # in the label though not in the inbox

    await push.set_preference(user.id, NotificationPreference(scope=NotifyScope.ACCOUNTS, account_ids=(work,)))
    assert await notified() == {"work general", "vip offer"}

    await push.set_preference(user.id, NotificationPreference(scope=NotifyScope.VIP))
    assert await notified() == {"vip offer"}
    await push.remove_vip(user.id, "VICTOR@vip.example")
    assert await notified() == set()

    # Another user's label or account cannot be chosen; a scope needs its choice; a VIP needs an address.
    stranger = await services.users.create_user("sam@example.org", "correct horse")
    await push.set_preference(stranger.id, NotificationPreference(scope=NotifyScope.LABELS,
                                                                  label_ids=(projects,)))
    assert (await push.preference(stranger.id)).label_ids == ()
    with pytest.raises(ValidationError):
        await push.set_preference(user.id, NotificationPreference(scope=NotifyScope.ACCOUNTS))
    with pytest.raises(ValidationError):
        await push.add_vip(user.id, "not an address")


async def test_the_choice_migration_runs_twice_keeps_every_message_and_undoes(services: Services) -> None:
    user = await services.users.create_user("wim@example.org", "correct horse")
    await services.browser_push.set_preference(user.id, NotificationPreference(scope=NotifyScope.EVERY))
    async with services.db.connection() as conn:
        await conn.execute(choice_migration.BACKWARDS_SQL)
        assert await conn.fetchval("SELECT every_message FROM notification_preference") is True
        assert await conn.fetchval("SELECT to_regclass('vip_sender')") is None
        await conn.execute(choice_migration.FORWARDS_SQL)
        await conn.execute(choice_migration.FORWARDS_SQL)
    assert (await services.browser_push.preference(user.id)).scope is NotifyScope.EVERY


async def test_the_notifications_page_chooses_labels_and_keeps_a_vip_list(client: httpx.AsyncClient,
                                                                           services: Services) -> None:
    await sign_up_admin(client)
    user = await services.users.by_email("admin@example.org")
    projects = await services.labels.create(user.id, "Projects")
    page = await client.get("/settings/notifications")
    assert "Projects" in page.text and "No VIP senders yet." in page.text
    token = await csrf_token(client, "/settings/notifications")

    empty = await client.post("/settings/notifications", data={"notify": "labels", "show": "content",
                                                                 "_csrf_token": token})
    assert empty.status_code == 400 and "Choose at least one label" in empty.text
    assert (await services.browser_push.preference(user.id)).scope is NotifyScope.GENERAL

    saved = await client.post("/settings/notifications", data={"notify": "labels", "show": "hidden",
                                                                 "labels": [str(projects)], "_csrf_token": token})
    assert saved.status_code == 200
    assert await services.browser_push.preference(user.id) == NotificationPreference(
        scope=NotifyScope.LABELS, show_content=False, label_ids=(projects,), reminders=False)  # its box unticked
    again = await client.post("/settings/notifications", data={"notify": "labels", "show": "hidden",
                                                                 "labels": [str(projects)], "reminders": "on",
                                                                 "_csrf_token": token})
    assert again.status_code == 200 and (await services.browser_push.preference(user.id)).reminders

    bad = await client.post("/settings/notifications/vip", data={"address": "victor", "_csrf_token": token})
    assert bad.status_code == 400 and "Enter an email address" in bad.text
    added = await client.post("/settings/notifications/vip", data={"address": "Victor@VIP.example",
                                                                     "_csrf_token": token})
    assert added.status_code == 200 and "victor@vip.example" in added.text
    assert (await services.browser_push.preference(user.id)).vip_senders == ("victor@vip.example",)
    removed = await client.post("/settings/notifications/vip/remove", data={"address": "victor@vip.example",
                                                                              "_csrf_token": token})
    assert removed.status_code == 200 and "No VIP senders yet." in removed.text
    assert (await services.browser_push.preference(user.id)).vip_senders == ()


async def test_quiet_hours_across_midnight_hold_browser_notifications_in_the_users_time_zone(
        services: Services, client: httpx.AsyncClient) -> None:
    """Issue 33: no browser notification in the quiet hours (22:00–07:00 Berlin time, across midnight)."""
    await sign_up_admin(client)  # Europe/Berlin
    user = await services.users.by_email("admin@example.org")
    account = await account_rows(services).create(user_id=user.id, provider_kind=ProviderKind.LOCAL, name="Home",
                                                  email="admin@example.org")
    inbox = (await services.labels.role_ids(user.id))[LabelRole.INBOX]
    await _deliver(services, account, (inbox,), "late news", "Alice <alice@example.org>")
    newest = await services.browser_push.repo.newest_message_id(user.id)
    token = await csrf_token(client, "/settings/notifications")
    saved = await client.post("/settings/notifications", data={
        "notify": "primary", "show": "content", "quiet": "on", "quiet_from": "22:00", "quiet_to": "07:00",
        "_csrf_token": token})
    assert saved.status_code == 200 and 'value="22:00"' in saved.text
    preference = await services.browser_push.preference(user.id)

    async def notified(utc: str) -> bool:
        at = datetime.fromisoformat(utc).replace(tzinfo=UTC)
        return bool(await services.browser_push.notices(user.id, 0, newest, preference, now=at))

    # Berlin is UTC+1 in January: 20:59 UTC is 21:59 there, 21:00 UTC is 22:00, 05:59 UTC is 06:59, 06:00 is 7:00.
    assert await notified("2027-01-15T20:59:00")
    assert not await notified("2027-01-15T21:00:00")
    assert not await notified("2027-01-15T23:30:00")  # past midnight in Berlin
    assert not await notified("2027-01-16T05:59:00")
    assert await notified("2027-01-16T06:00:00")
    assert await notified("2027-07-16T05:00:00")  # summer time (UTC+2): 07:00 in Berlin

    same = await client.post("/settings/notifications", data={
        "notify": "primary", "show": "content", "quiet": "on", "quiet_from": "07:00", "quiet_to": "07:00",
        "_csrf_token": token})
    nonsense = await client.post("/settings/notifications", data={
        "notify": "primary", "show": "content", "quiet": "on", "quiet_from": "late", "quiet_to": "07:00",
        "_csrf_token": token})
    assert same.status_code == 400 and nonsense.status_code == 400
    assert (await services.browser_push.preference(user.id)).quiet_from == preference.quiet_from
    off = await client.post("/settings/notifications", data={
        "notify": "primary", "show": "content", "quiet_from": "22:00", "quiet_to": "07:00", "_csrf_token": token})
    assert off.status_code == 200
    assert (await services.browser_push.preference(user.id)).quiet_from is None
    assert await notified("2027-01-15T23:30:00") is False  # the preference read before still says quiet
    assert await services.browser_push.notices(user.id, 0, newest, await services.browser_push.preference(user.id),
                                               now=datetime(2027, 1, 15, 23, 30, tzinfo=UTC))


async def test_the_quiet_hours_migration_runs_twice_and_undoes(services: Services) -> None:
    async with services.db.connection() as conn:
        await conn.execute(quiet_migration.FORWARDS_SQL)
        await conn.execute(quiet_migration.BACKWARDS_SQL)
        assert await conn.fetchval("""SELECT count(*) FROM information_schema.columns
                                        WHERE table_name = 'notification_preference'
                                          AND column_name = 'quiet_from'""") == 0
        await conn.execute(quiet_migration.FORWARDS_SQL)
        await conn.execute(quiet_migration.FORWARDS_SQL)
        user = await services.users.create_user("quinn@example.org", "correct horse")
        with pytest.raises(asyncpg.CheckViolationError):  # a start without an end
            await conn.execute("INSERT INTO notification_preference (user_id, quiet_from) VALUES ($1, '22:00')",
                               user.id)
