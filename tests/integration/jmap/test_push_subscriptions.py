"""JMAP push subscriptions (RFC 8620 §7.2) delivered by Web Push to the suite's push service (RFC 8030), which
checks the VAPID signature against the key the session advertises (RFC 9749) and decrypts each message with the
device's own private key (RFC 8291): verification first, StateChange after an IMAP APPEND, expiry, destroy, 410
removal, back-off on 429, coalescing of 100 arrivals, isolation between users and credentials, and no push URL
into the server's own network."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from babel.dates import format_time

from plmail.app import create_app
from plmail.config import Settings
from plmail.db.migrations import plmail_2026_12_06t18_00_00_000000 as push_migration
from plmail.domain.enums import QueueName
from plmail.domain.errors import ValidationError
from plmail.domain.push import NotificationPreference, NotifyScope
from plmail.mail.change_feed import ChangeFeed
from plmail.providers.imap.watch import IdleSupervisor
from plmail.push.addresses import check_push_url
from plmail.push.dispatcher import PushDispatcher
from plmail.push.sender import WebPushSender
from plmail.services import Services
from plmail.users.service import Browser as UserBrowser
from tests.conftest import browser, running_lifespan
from tests.integration.calendar.conftest import calendar_mail
from tests.integration.imap_sync.conftest import ImapSetup, imap
from tests.integration.jmap.conftest import JmapBox, make_box
from tests.support.dovecot import dovecot, dovecot_user
from tests.support.imap_mail import message as imap_message
from tests.support.mail import make_message
from tests.support.push_service import Device, PushService

__all__ = ["dovecot", "dovecot_user", "imap"]

CORE = "urn:ietf:params:jmap:core"
VAPID = "urn:ietf:params:jmap:webpush-vapid"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The suite's push service listens on loopback, which only this test-only setting lets through."""
    return dataclasses.replace(settings, push_allow_loopback=True)


@pytest.fixture
async def push_service() -> AsyncIterator[PushService]:
    async with PushService() as service:
        yield service


async def advertised_key(box: JmapBox) -> str:
    session = (await box.http.get("/jmap/session", headers=box.headers)).json()
    key = session["capabilities"][VAPID]["applicationServerKey"]
    assert isinstance(key, str) and len(key) == 87  # 65 bytes, base64url without padding (RFC 9749 §3)
    return key


@pytest.fixture
async def pushing(box: JmapBox, push_service: PushService) -> AsyncIterator[JmapBox]:
    """The box with the push dispatcher running in this process (as beside the workers of `plmail serve`)."""
    push_service.vapid_key = await advertised_key(box)
    box.services.push_dispatcher.start()
    try:
        yield box
    finally:
        await box.services.push_dispatcher.stop()


async def push_call(box: JmapBox, name: str, arguments: dict[str, Any], *, token: str | None = None
                    ) -> tuple[str, dict[str, Any]]:
    response = await box.request([[name, arguments, "c0"]], using=[CORE], token=token)
    assert response.status_code == 200, response.text
    result_name, result, _ = response.json()["methodResponses"][0]
    return result_name, result


async def push_set(box: JmapBox, arguments: dict[str, Any], *, token: str | None = None) -> dict[str, Any]:
    name, result = await push_call(box, "PushSubscription/set", arguments, token=token)
    assert name == "PushSubscription/set", result
    return result


async def push_get(box: JmapBox, ids: list[str] | None = None, *, token: str | None = None) -> dict[str, Any]:
    name, result = await push_call(box, "PushSubscription/get", {"ids": ids}, token=token)
    assert name == "PushSubscription/get", result
    return result


def creation(device: Device, **extra: Any) -> dict[str, Any]:
    return {"deviceClientId": f"phone-{device.token[:6]}", "url": device.url, "keys": device.keys, **extra}


async def subscribe(box: JmapBox, device: Device, *, token: str | None = None, **extra: Any) -> str:
    """Create, receive the PushVerification, set its code: what a phone does (RFC 8620 §7.2.2)."""
    created = await push_set(box, {"create": {"s": creation(device, **extra)}}, token=token)
    assert created["notCreated"] is None, created
    subscription_id = created["created"]["s"]["id"]
    verification = (await device.next()).message
    assert verification["@type"] == "PushVerification" and verification["pushSubscriptionId"] == subscription_id
    updated = await push_set(box, {"update": {subscription_id: {"verificationCode": verification["verificationCode"]}}},
                             token=token)
    assert updated["notUpdated"] is None and subscription_id in updated["updated"], updated
    return str(subscription_id)


async def until(check: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        assert time.monotonic() < deadline, "not in time"
        await asyncio.sleep(0.05)


async def test_verification_comes_first_and_nothing_else_until_the_code_is_set(
        pushing: JmapBox, push_service: PushService) -> None:
    box, device = pushing, push_service.device()
    asked = datetime.now(UTC) + timedelta(days=30)
    created = await push_set(box, {"create": {"s": creation(device, types=["Email"],
                                                            expires=asked.strftime("%Y-%m-%dT%H:%M:%SZ"))}})
    subscription_id = created["created"]["s"]["id"]
    # capped at seven days, and the server says what it kept (RFC 8620 §7.2: it may shorten the expiry)
    kept = datetime.fromisoformat(created["created"]["s"]["expires"].replace("Z", "+00:00"))
    assert kept <= datetime.now(UTC) + timedelta(days=7) and kept > datetime.now(UTC) + timedelta(days=6, hours=23)

    verification = (await device.next()).message
    assert verification == {"@type": "PushVerification", "pushSubscriptionId": subscription_id,
                            "verificationCode": verification["verificationCode"]}
    await box.ingest(make_message(message_id="before-verified@x"))
    # not verified: the server makes no further request to the URL (§7.2.2); a wrong code is refused
    wrong = await push_set(box, {"update": {subscription_id: {"verificationCode": "not-the-code"}}})
    assert wrong["notUpdated"][subscription_id]["type"] == "invalidProperties"
    listed = await push_get(box)
    assert listed["list"] == [{"id": subscription_id, "deviceClientId": creation(device)["deviceClientId"],
                               "verificationCode": None, "expires": created["created"]["s"]["expires"],
                               "types": ["Email"]}]
    assert "accountId" not in listed and "state" not in listed
    # url and keys are the device's secrets: never returned, and asking is forbidden (§7.2.1)
    name, refused = await push_call(box, "PushSubscription/get", {"ids": None, "properties": ["id", "url"]})
    assert name == "error" and refused["type"] == "forbidden"

    updated = await push_set(box, {"update": {subscription_id: {"verificationCode": verification["verificationCode"]}}})
    assert updated["updated"] == {subscription_id: None}
    assert len(device.attempts) == 1  # the verification only: nothing reached the device before the code was set
    assert (await push_get(box))["list"][0]["verificationCode"] == verification["verificationCode"]

    await box.ingest(make_message(message_id="after-verified@x"))
    change = (await device.next()).message
    # the types asked for, in every JMAP account of the user: the connected one and the unified one
    assert change["@type"] == "StateChange" and set(change["changed"]) == {box.account, box.primary}
    assert change["changed"][box.account] == {"Email": await box.state("Email")}
    assert list(change["changed"][box.primary]) == ["Email"]
    # url and keys cannot change (§7.2.2); expires renews, capped again
    immutable = await push_set(box, {"update": {subscription_id: {"url": device.url}}})
    assert immutable["notUpdated"][subscription_id]["type"] == "invalidProperties"
    renewed = await push_set(box, {"update": {subscription_id: {"expires": asked.strftime("%Y-%m-%dT%H:%M:%SZ")}}})
    again = datetime.fromisoformat(renewed["updated"][subscription_id]["expires"].replace("Z", "+00:00"))
    assert kept <= again <= datetime.now(UTC) + timedelta(days=7)


async def test_state_change_follows_an_imap_append(imap: ImapSetup, settings: Settings, database_url: str,
                                                   push_service: PushService) -> None:
    """New mail by IDLE from a real Dovecot APPEND, pushed through `plmail serve`'s workers' dispatcher."""
    services = imap.services
    app = create_app(settings, database_url, worker_queues=(QueueName.INGEST, QueueName.INGEST_BACKLOG),
                     services=services)
    idle = services.providers.get(IdleSupervisor)
    token = (await services.app_passwords.create(imap.user.id, "Phone")).token
    async with running_lifespan(app), browser(app) as http:
        box = JmapBox(services, http, imap.user, imap.account_id, token, await services.labels.role_ids(imap.user.id))

        async def watching() -> bool:
            inbox = await services.db.fetchval(
                "SELECT id FROM mailbox WHERE account_id = $1 AND full_path = 'INBOX'", imap.account_id)
            return inbox is not None and inbox in idle.idling

        await until(watching, 30)
        push_service.vapid_key = await advertised_key(box)
        device = push_service.device()
        await subscribe(box, device, types=["Email", "Mailbox"])
        started = time.monotonic()
        await asyncio.to_thread(imap.mail.append, [imap_message(7)])
        change = await device.next(10)
        assert change.message["@type"] == "StateChange"
        assert set(change.message["changed"][box.account]) <= {"Email", "Mailbox"}  # only the types asked for
        assert change.message["changed"][box.account]["Email"] == await box.state("Email")
        assert await imap.count("rfc_message_id = $2", "seq-7@plmail.test") == 1
        print(f"\nAPPEND -> push received: {change.at - started:.2f} s")


async def test_expired_subscription_gets_nothing_and_is_gone(pushing: JmapBox, push_service: PushService) -> None:
    box, short, lasting = pushing, push_service.device(), push_service.device()
    ends = datetime.now(UTC) + timedelta(seconds=2)
    short_id = await subscribe(box, short, expires=ends.isoformat())
    await subscribe(box, lasting)
    await asyncio.sleep(max((ends - datetime.now(UTC)).total_seconds(), 0) + 0.2)  # the expiry itself is awaited
    await box.ingest(make_message(message_id="after-expiry@x"))
    assert (await lasting.next()).message["@type"] == "StateChange"  # the same user's live one is pushed to ...
    assert short.state_changes() == []  # ... the expired one is not (§7.2: no requests after `expires`)
    assert (await push_get(box, [short_id]))["notFound"] == [short_id]
    refused = await push_set(box, {"update": {short_id: {"expires": None}}})
    assert refused["notUpdated"][short_id]["type"] == "notFound"


async def test_destroy_stops_pushes(pushing: JmapBox, push_service: PushService) -> None:
    box, gone, kept = pushing, push_service.device(), push_service.device()
    gone_id = await subscribe(box, gone)
    await subscribe(box, kept)
    destroyed = await push_set(box, {"destroy": [gone_id]})
    assert destroyed["destroyed"] == [gone_id]
    await box.ingest(make_message(message_id="after-destroy@x"))
    assert (await kept.next()).message["@type"] == "StateChange"
    assert gone.state_changes() == []
    assert (await push_set(box, {"destroy": [gone_id]}))["notDestroyed"][gone_id]["type"] == "notFound"


async def test_410_and_404_remove_the_subscription(pushing: JmapBox, push_service: PushService) -> None:
    box, unsubscribed, unknown = pushing, push_service.device(), push_service.device()
    moved, elsewhere = push_service.device(), push_service.device()
    first = await subscribe(box, unsubscribed)
    second = await subscribe(box, unknown)
    third = await subscribe(box, moved)
    unsubscribed.answer(410)
    unknown.answer(404)
    moved.answer(307, Location=elsewhere.url)  # never followed: a push URL that moves is gone
    await box.ingest(make_message(message_id="to-gone@x"))

    async def removed() -> bool:
        return (await push_get(box, [first, second, third]))["notFound"] == [first, second, third]

    await until(removed)
    assert [a.status for a in unsubscribed.attempts] == [201, 410]
    assert elsewhere.attempts == []
    await box.ingest(make_message(message_id="after-gone@x"))
    await asyncio.sleep(0)  # nothing to wait for: the rows are gone, so the dispatcher has nobody to push to
    assert await box.services.db.fetchval("SELECT count(*) FROM push_subscription") == 0


async def test_429_backs_off_for_retry_after_then_sends_the_latest_states(pushing: JmapBox,
                                                                          push_service: PushService) -> None:
    box, device = pushing, push_service.device()
    await subscribe(box, device, types=["Email"])
    device.answer(429, **{"Retry-After": "2"})
    await box.ingest(make_message(message_id="throttled@x"))

    async def refused() -> bool:
        return any(a.status == 429 for a in device.attempts)

    await until(refused)
    refused_at = next(a.at for a in device.attempts if a.status == 429)
    await box.ingest(make_message(message_id="meanwhile@x"))  # arrives while the push service waits
    change = await device.next(10)
    assert change.at - refused_at >= 1.9  # Retry-After honoured
    assert change.message["changed"][box.account]["Email"] == await box.state("Email")  # the latest, in one push
    assert len(device.state_changes()) == 1


async def test_two_dispatchers_push_each_state_once(pushing: JmapBox, push_service: PushService) -> None:
    """A second dispatcher, as another process runs it (its own LISTEN connection, its own HTTP session), races
    the first for every change: each state reaches the device once, whichever claimed it."""
    box, device = pushing, push_service.device()
    await subscribe(box, device, types=["Email"])
    services = box.services
    other_feed = ChangeFeed(services.db)
    other = PushDispatcher(services.db, other_feed, services.changes,
                           WebPushSender(services.vapid, allow_loopback=True))
    other.start()
    try:
        for n in range(4):
            await box.ingest(make_message(message_id=f"two{n}@x"))
            expected = await box.state("Email")

            async def pushed(state: str = expected) -> bool:
                return any(c["changed"][box.account]["Email"] == state for c in device.state_changes())

            await until(pushed)
        states = [c["changed"][box.account]["Email"] for c in device.state_changes()]
        assert len(states) == len(set(states)) == 4  # every change once, none twice
    finally:
        await other.stop()
        await other_feed.close()


async def test_a_hundred_arrivals_in_a_second_are_coalesced(pushing: JmapBox, push_service: PushService) -> None:
    box, device = pushing, push_service.device()
    await subscribe(box, device, types=["Email"])
    messages = [make_message(message_id=f"burst{n}@x", subject=f"Burst {n}") for n in range(100)]
    started = time.monotonic()
    # a hundred arrivals, each its own commit and notification, as many at once as the pool allows
    await asyncio.gather(*(box.ingest(raw) for raw in messages))
    elapsed = time.monotonic() - started
    final = await box.state("Email")

    async def latest_arrived() -> bool:
        changes = device.state_changes()
        return bool(changes) and changes[-1]["changed"][box.account]["Email"] == final

    await until(latest_arrived, 10)
    received = [r for r in device.received if r.message["@type"] == "StateChange"]
    # at most one push a second, with the latest states: about one per second of arrivals, never one per message
    assert len(received) <= elapsed + 2, (len(received), elapsed)
    assert all(b.at - a.at >= 0.9 for a, b in itertools.pairwise(received))
    print(f"\n100 arrivals in {elapsed:.2f} s -> {len(received)} pushes")


async def test_one_user_never_sees_or_reaches_anothers_subscription(pushing: JmapBox,
                                                                    push_service: PushService) -> None:
    box = pushing
    other = await make_box(box.services, box.http, "other@example.org")
    mine, theirs = push_service.device(), push_service.device()
    my_id = await subscribe(box, mine)
    their_id = await subscribe(other, theirs)
    assert [s["id"] for s in (await push_get(box))["list"]] == [my_id]
    assert [s["id"] for s in (await push_get(other))["list"]] == [their_id]
    assert (await push_get(box, [their_id]))["notFound"] == [their_id]
    meddling = await push_set(box, {"update": {their_id: {"types": ["Email"]}}, "destroy": [their_id]})
    assert meddling["notUpdated"][their_id]["type"] == "notFound"
    assert meddling["notDestroyed"][their_id]["type"] == "notFound"
    # a subscription is its credentials' (§7.2.1): the same user's other app password does not see it either
    tablet = await box.services.app_passwords.create(box.user.id, "Tablet")
    assert (await push_get(box, token=tablet.token))["list"] == []

    await box.ingest(make_message(message_id="mine-only@x"))
    assert box.account in (await mine.next()).message["changed"]
    await other.ingest(make_message(message_id="theirs-only@x"))
    their_change = (await theirs.next()).message
    assert set(their_change["changed"]) == {other.account, other.primary}
    assert len(mine.state_changes()) == 1 and len(theirs.state_changes()) == 1

    # revoking the app password removes what it subscribed; disabling a user removes everything of theirs
    tablet_id = await subscribe(box, push_service.device(), token=tablet.token)
    await box.services.app_passwords.revoke(box.user.id, tablet.id)
    assert await box.services.db.fetchval("SELECT count(*) FROM push_subscription WHERE id = $1", int(tablet_id)) == 0
    await box.services.users.set_disabled(box.user, other.user.id, True)  # as the admin page does
    assert await box.services.db.fetchval("SELECT count(*) FROM push_subscription WHERE user_id = $1",
                                          other.user.id) == 0
    assert [s["id"] for s in (await push_get(box))["list"]] == [my_id]


@pytest.mark.parametrize("url", [
    "http://push.example.com/send/1",  # not https
    "https://10.0.0.7/push",  # private
    "https://192.168.1.20:8443/push",
    "https://169.254.169.254/latest/meta-data",  # link-local: a cloud's metadata service
    "https://100.64.0.1/push",  # shared address space
    "https://[fd00::1]/push",  # IPv6 unique local
    "https://[::ffff:10.0.0.7]/push",  # a private IPv4 address dressed as IPv6
    "https://0.0.0.0/push",
    "https://user:secret@push.example.com/x",  # credentials in the URL
    "ftp://push.example.com/x",
])
async def test_a_push_url_into_the_servers_network_is_refused(pushing: JmapBox, push_service: PushService,
                                                              url: str) -> None:
    device = push_service.device()
    result = await push_set(pushing, {"create": {"s": {**creation(device), "url": url}}})
    assert result["created"] is None
    assert result["notCreated"]["s"]["type"] == "invalidProperties"
    assert result["notCreated"]["s"]["properties"] == ["url"]
    assert await pushing.services.db.fetchval("SELECT count(*) FROM push_subscription") == 0


@pytest.mark.parametrize("url", ["https://127.0.0.1:9/push", "https://localhost/push", "https://[::1]/push",
                                 "http://127.0.0.1:9/push"])
async def test_loopback_is_refused_without_the_test_only_setting(url: str) -> None:
    with pytest.raises(ValidationError) as refused:
        await check_push_url(url, allow_loopback=False)
    assert refused.value.field == "url"


async def test_bad_keys_and_missing_fields_are_refused(pushing: JmapBox, push_service: PushService) -> None:
    device = push_service.device()
    bad = {
        "short-key": creation(device, keys={"p256dh": "BBBB", "auth": device.keys["auth"]}),
        "long-auth": creation(device, keys={"p256dh": device.keys["p256dh"], "auth": "A" * 40}),
        "no-keys": {k: v for k, v in creation(device).items() if k != "keys"},
        "no-device": {k: v for k, v in creation(device).items() if k != "deviceClientId"},
        "with-code": creation(device, verificationCode="chosen"),
        "past": creation(device, expires="2020-01-01T00:00:00Z"),
    }
    result = await push_set(pushing, {"create": bad})
    assert result["created"] is None
    assert {k: v["type"] for k, v in result["notCreated"].items()} == dict.fromkeys(bad, "invalidProperties")
    name, error = await push_call(pushing, "PushSubscription/get", {"accountId": pushing.account, "ids": None})
    assert name == "error" and error["type"] == "invalidArguments"  # no accountId (§7.2.1)


async def test_a_user_has_at_most_25_subscriptions(pushing: JmapBox, push_service: PushService) -> None:
    """Every subscription makes the server POST to a URL of the client's choosing: bounded per user."""
    many = {f"d{n}": creation(push_service.device()) for n in range(26)}
    result = await push_set(pushing, {"create": many})
    assert len(result["created"]) == 25
    assert result["notCreated"] == {"d25": result["notCreated"]["d25"]}
    assert result["notCreated"]["d25"]["type"] == "overQuota"


async def test_the_migration_runs_twice_and_undoing_it_leaves_revoking_and_disabling_working(
        services: Services) -> None:
    user = await services.users.create_user("admin@example.org", "correct horse")
    other = await services.users.create_user("someone@example.org", "correct horse")
    password = await services.app_passwords.create(other.id, "Phone")
    async with services.db.connection() as conn:
        await conn.execute(push_migration.FORWARDS_SQL)  # again, over the applied one: nothing changes
        await conn.execute(push_migration.BACKWARDS_SQL)
    assert await services.db.fetchval("SELECT to_regclass('push_subscription')") is None
    left = await services.db.fetchval(
        "SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'push_subscription%' AND NOT tgisinternal")
    assert left == 0
    await services.app_passwords.revoke(other.id, password.id)  # a trigger left behind would fail these
    await services.users.set_disabled(user, other.id, True)
    async with services.db.connection() as conn:
        await conn.execute(push_migration.FORWARDS_SQL)
    assert await services.db.fetchval("SELECT count(*) FROM push_subscription") == 0


async def browser_on(box: JmapBox, device: Device) -> None:
    """Notifications turned on in a signed-in browser whose push service is `device`."""
    services = box.services
    await services.users.sign_in(box.user.email, "correct horse", UserBrowser("127.0.0.1", "test"))
    session_id = await services.db.fetchval("SELECT max(id) FROM web_session WHERE user_id = $1", box.user.id)
    await services.browser_push.subscribe(box.user.id, session_id, endpoint=device.url, **device.keys)


async def test_a_browser_notification_refused_with_429_is_sent_again_after_retry_after(
        pushing: JmapBox, push_service: PushService) -> None:
    """Issue 33: a browser's push service answering 429 gets the new-mail notification again once Retry-After
    has passed, once, instead of losing it."""
    box, device = pushing, push_service.device()
    await browser_on(box, device)
    device.answer(429, **{"Retry-After": "1"})
    await box.ingest(make_message(message_id="throttled-browser@x", subject="Board meeting moved"))

    async def refused() -> bool:
        return any(a.status == 429 for a in device.attempts)

    await until(refused)
    refused_at = next(a.at for a in device.attempts if a.status == 429)
    notification = await device.next(10)
    assert notification.at - refused_at >= 0.9  # Retry-After honoured
    assert notification.message["@type"] == "NewMail" and notification.message["body"] == "Board meeting moved"
    await box.ingest(make_message(message_id="next-browser@x", subject="Lunch"))
    assert (await device.next(10)).message["body"] == "Lunch"
    assert [r.message["body"] for r in device.received] == ["Board meeting moved", "Lunch"]  # each once
    assert [a.status for a in device.attempts] == [429, 201, 201]


def invitation(uid: str, title: str, start: datetime, alarm: str | None = None) -> bytes:
    stamp = "%Y%m%dT%H%M%SZ"
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//plmail tests//EN", "METHOD:REQUEST", "BEGIN:VEVENT",
             f"UID:{uid}", "SEQUENCE:0", f"DTSTAMP:{start.strftime(stamp)}", f"DTSTART:{start.strftime(stamp)}",
             f"DTEND:{(start + timedelta(hours=1)).strftime(stamp)}", f"SUMMARY:{title}", "LOCATION:Room 4",
             "ORGANIZER;CN=Boss:mailto:boss@example.com",
             "ATTENDEE;PARTSTAT=NEEDS-ACTION;ROLE=REQ-PARTICIPANT:mailto:reader@example.org"]
    if alarm:  # RFC 5545 §3.6.6: a display alarm, its trigger relative to the start
        lines += ["BEGIN:VALARM", "ACTION:DISPLAY", "DESCRIPTION:Reminder", f"TRIGGER:{alarm}", "END:VALARM",
                  "BEGIN:VALARM", "ACTION:AUDIO", "TRIGGER:-PT1M", "END:VALARM"]  # not a display alarm
    lines += ["END:VEVENT", "END:VCALENDAR"]
    return calendar_mail("\r\n".join(lines), subject=title, date=start - timedelta(days=1), message_id=f"{uid}")


async def test_calendar_reminders_reach_the_browser_once_per_occurrence(pushing: JmapBox,
                                                                         push_service: PushService) -> None:
    """Issue 33: an event's VALARM (DISPLAY, relative trigger), else 10 minutes before its start, sends the
    browser "<title> at <time>" once."""
    box, device = pushing, push_service.device()
    services = box.services
    await browser_on(box, device)
    # Only VIP mail notifies (and there are no VIPs), so what reaches the device is reminders alone.
    await services.browser_push.set_preference(box.user.id, NotificationPreference(scope=NotifyScope.VIP))
    now = datetime.now(UTC).replace(microsecond=0)
    standup, review, lunch = now + timedelta(minutes=30), now + timedelta(minutes=30), now + timedelta(minutes=5)
    result = await box.ingest(invitation("standup@x", "Standup", standup, alarm="-PT45M"),
                              invitation("review@x", "Review", review),
                              invitation("lunch@x", "Lunch", lunch, alarm="-PT2M"),
                              invitation("started@x", "Started", now - timedelta(minutes=1)))
    await services.calendar.extraction.run(box.user.id, [m.id for m in result.messages])

    def at(when: datetime) -> str:
        return format_time(when, format="short", locale="en")

    # Standup's alarm rang 15 minutes ago; Review (no alarm) is 20 minutes early; Lunch's alarm rings in 3 minutes.
    assert await services.push_dispatcher.remind(now) == 1
    first = (await device.next()).message
    assert (first["@type"], first["title"], first["body"]) == ("Reminder", f"Standup at {at(standup)}", "Room 4")
    assert first["url"].startswith("/calendar/event/")
    assert await services.push_dispatcher.remind(now + timedelta(seconds=30)) == 0  # never twice

    assert await services.push_dispatcher.remind(now + timedelta(minutes=3)) == 1
    assert (await device.next()).message["title"] == f"Lunch at {at(lunch)}"
    assert await services.push_dispatcher.remind(now + timedelta(minutes=19)) == 0
    assert await services.push_dispatcher.remind(now + timedelta(minutes=20)) == 1  # the default 10 minutes
    assert (await device.next()).message["title"] == f"Review at {at(review)}"
    assert await services.push_dispatcher.remind(now + timedelta(minutes=21)) == 0
    assert [r.message["title"].split(" at ")[0] for r in device.received] == ["Standup", "Lunch", "Review"]
