"""Issue 33, Web Push to the browser: Settings → Notifications turns it on for this device; new mail arriving in
Dovecot reaches the suite's push service (RFC 8030) encrypted for that device (RFC 8291) with sender and subject;
the service worker shows a push (delivered through the DevTools protocol's ServiceWorker.deliverPushMessage) as a
notification per conversation, and its Archive action archives without opening the app, once."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import os
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.async_api import Browser, BrowserContext, Page, expect

from plmail.config import Settings
from plmail.domain.enums import LabelRole
from plmail.domain.push import NewMailNotice, NotificationPreference
from tests.integration.imap_sync.conftest import ImapSetup, imap
from tests.support.browser import SharedChromium
from tests.support.dovecot import dovecot, dovecot_user
from tests.support.imap_mail import message as imap_message
from tests.support.push_service import PushService
from tests.support.serve import ServeProcess

__all__ = ["dovecot", "dovecot_user", "imap"]

PASSWORD = "correct horse"  # the imap fixture's user
OUTPUT = Path(os.environ.get("PLMAIL_TEST_OUTPUT", Path(__file__).resolve().parents[2] / "test-output")) / "ui"
# The browser's own push service (Google's, Mozilla's) is out of reach on a closed network, so the page's
# PushManager hands out a subscription at the suite's push service instead; everything after is the real path.
FAKE_PUSH_MANAGER = """
(() => {
  const subscription = %s;
  let subscribed = null;
  const made = () => ({endpoint: subscription.endpoint, toJSON: () => subscription,
                       unsubscribe: async () => { subscribed = null; return true; }});
  PushManager.prototype.subscribe = async function (options) {
    if (!options || !options.userVisibleOnly || !options.applicationServerKey) throw new Error("bad options");
    sessionStorage.setItem("serverKey", JSON.stringify(Array.from(new Uint8Array(options.applicationServerKey))));
    subscribed = made();
    return subscribed;
  };
  PushManager.prototype.getSubscription = async function () { return subscribed; };
})();
"""


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The suite's push service listens on loopback, which only this test-only setting lets through."""
    return dataclasses.replace(settings, push_allow_loopback=True)


@pytest.fixture
async def browser(full_chromium: SharedChromium) -> Browser:
    """The whole browser: the headless shell shows no notifications."""
    return await full_chromium.get()


@pytest.fixture
async def push_service() -> AsyncIterator[PushService]:
    async with PushService() as service:
        yield service


@pytest.fixture
def server(imap: ImapSetup, settings: Settings, database_url: str) -> Iterator[ServeProcess]:
    """`plmail serve` with its workers (IDLE, the push dispatcher) on the imap fixture's data directory (its
    secret.key opens the account's password; its vapid.pem signs), allowed to push to loopback."""
    process = ServeProcess(settings.data_dir, database_url=database_url,
                           extra_env={"PLMAIL_PUSH_ALLOW_LOOPBACK": "1"}).start()
    try:
        process.wait_healthy()
        yield process
    finally:
        process.terminate()


async def signed_in(browser: Browser, server: ServeProcess, **options: Any) -> tuple[BrowserContext, Page]:
    context = await browser.new_context(**options)
    await context.grant_permissions(["notifications"], origin=server.url)
    page = await context.new_page()
    await page.goto(server.url + "/login")
    await page.locator("input[name=email]").fill("owner@example.org")
    await page.locator("input[name=password]").fill(PASSWORD)
    await page.locator("form button[type=submit]").click()
    await expect(page.locator("h1")).to_have_count(1)
    return context, page


async def until(check: Any, timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (found := await check()):
        assert time.monotonic() < deadline, "not in time"
        await asyncio.sleep(0.1)
    return found


async def test_turning_on_notifications_brings_new_mail_to_this_device(
        imap: ImapSetup, server: ServeProcess, push_service: PushService, browser: Browser) -> None:
    device = push_service.device()
    push_service.vapid_key = imap.services.vapid.public_key
    context, page = await signed_in(browser, server)
    try:
        await context.add_init_script(FAKE_PUSH_MANAGER % json.dumps({"endpoint": device.url, "keys": device.keys}))
        await page.goto(server.url + "/settings/notifications")
        await expect(page.locator("[data-push-device]")).to_contain_text("Notifications are off for this device.")
        OUTPUT.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=OUTPUT / "settings-notifications-off-1366.png", full_page=True)
        await page.get_by_role("button", name="Turn on for this device").click()
        await expect(page.locator("[data-push-device] [role=status]")).to_have_text(
            "Notifications are on for this device.")
        # The browser subscribed with this server's VAPID key (RFC 8292 §3.2: the applicationServerKey).
        key = bytes(json.loads(await page.evaluate("() => sessionStorage.getItem('serverKey') || '[]'")))
        assert key == push_service_key(imap.services.vapid.public_key)
        # A VIP sender added on the page is listed (lower-cased), and the device stays on.
        await page.get_by_label("Email address").fill("Victor@VIP.example")
        await page.get_by_role("button", name="Add VIP sender").click()
        await expect(page.locator("[data-vip-list]")).to_contain_text("victor@vip.example")
        await expect(page.locator("[data-push-device] [role=status]")).to_have_text(
            "Notifications are on for this device.")
        for width in (390, 1366):
            await page.set_viewport_size({"width": width, "height": 900})
            await page.screenshot(path=OUTPUT / f"settings-notifications-{width}.png", full_page=True)

        await asyncio.to_thread(imap.mail.append, [imap_message(41, subject="Dinner on Friday?")])
        push = await device.next(20)
        assert push.message["@type"] == "NewMail"
        assert push.message["title"] == "Sender 41" and push.message["body"] == "Dinner on Friday?"
        assert push.message["tag"] == f"thread-{push.message['threadId']}"
        assert [a["action"] for a in push.message["actions"]] == ["archive", "read"]

        # Only "New mail" on the lock screen, when asked.
        await page.get_by_label("Show only “New mail”").check()
        await page.get_by_role("button", name="Save").click()
        await expect(page.locator("p.notice")).to_have_text("Notification settings saved.")
        await asyncio.to_thread(imap.mail.append, [imap_message(42, subject="Secret plans")])
        hidden = await device.next(20)
        assert hidden.message["title"] == "New mail" and hidden.message["body"] == ""

        # Signing out of this browser removes its subscription: the next mail reaches nobody.
        await page.goto(server.url + "/")
        await page.get_by_role("button", name="Sign out").click()
        await expect(page).to_have_url(server.url + "/login")
        assert await imap.services.db.fetchval("SELECT count(*) FROM push_subscription") == 0
    finally:
        await context.close()


def push_service_key(public_key: str) -> bytes:
    return base64.urlsafe_b64decode(public_key + "=" * (-len(public_key) % 4))


async def test_a_push_shows_sender_and_subject_and_its_archive_action_archives_once(
        imap: ImapSetup, server: ServeProcess, push_service: PushService, browser: Browser) -> None:
    services = imap.services
    await asyncio.to_thread(imap.mail.append, [imap_message(51, subject="Quarterly report")])
    thread_id = await until(lambda: services.db.fetchval(
        "SELECT thread_id FROM message WHERE rfc_message_id = 'seq-51@plmail.test'"))
    inbox = (await services.labels.role_ids(imap.user.id))[LabelRole.INBOX]

    async def in_inbox() -> bool:
        return bool(await services.db.fetchval(
            "SELECT count(*) FROM thread_label WHERE thread_id = $1 AND label_id = $2", thread_id, inbox))

    assert await in_inbox()
    context, page = await signed_in(browser, server)
    try:
        await page.goto(server.url + "/settings/notifications")
        # Installed on the sign-in's redirect; a page loaded while it was activating is controlled from its reload.
        await page.evaluate("async () => { await navigator.serviceWorker.ready; }")
        await page.reload()
        await page.wait_for_function("() => navigator.serviceWorker.controller !== null", timeout=15000)
        # The subscription a "Turn on" stores for this session, and the push the dispatcher would send for it.
        session_id = await services.db.fetchval("SELECT max(id) FROM web_session WHERE user_id = $1", imap.user.id)
        device = push_service.device()
        push_service.vapid_key = services.vapid.public_key
        row = await services.browser_push.subscribe(imap.user.id, session_id, endpoint=device.url,
                                                    p256dh=device.keys["p256dh"], auth=device.keys["auth"])
        payload = services.browser_push.payload(
            row, NewMailNotice(0, thread_id, "Sender 51", "Quarterly report"), NotificationPreference(), "en")

        cdp = await context.new_cdp_session(page)
        registrations: list[dict[str, Any]] = []
        cdp.on("ServiceWorker.workerRegistrationUpdated", lambda e: registrations.extend(e["registrations"]))
        await cdp.send("ServiceWorker.enable")
        registration = await until(lambda: _first(registrations))
        await cdp.send("ServiceWorker.deliverPushMessage", {
            "origin": server.url, "registrationId": registration["registrationId"], "data": json.dumps(payload)})
        shown = await until(lambda: page.evaluate(
            """async () => (await (await navigator.serviceWorker.ready).getNotifications())
                 .map(n => ({title: n.title, body: n.body, tag: n.tag, actions: n.actions.map(a => a.title)}))"""))
        assert shown == [{"title": "Sender 51", "body": "Quarterly report", "tag": f"thread-{thread_id}",
                          "actions": ["Archive", "Mark read"]}]

        # The Archive button, pressed with no page of plmail involved: the worker posts the signed token.
        worker = context.service_workers[0]
        await worker.evaluate(
            """async () => { const [n] = await self.registration.getNotifications();
                             self.dispatchEvent(new NotificationEvent("notificationclick",
                                                                      {notification: n, action: "archive"})); }""")
        await until(lambda: _not(in_inbox))
        assert await page.evaluate(
            "async () => (await (await navigator.serviceWorker.ready).getNotifications()).length") == 0

        # A replay of the same action is refused and changes nothing; a forged token does nothing.
        await services.operations.move_to_inbox(imap.user.id, thread_ids=[thread_id])
        body = {"token": payload["token"], "action": "archive", "key": f"{payload['token']}:archive"}
        async with httpx.AsyncClient(base_url=server.url) as http:
            replay = await http.post("/push/action", json=body)
            forged = await http.post("/push/action", json={**body, "token": payload["token"][:-4] + "AAAA",
                                                           "key": "other"})
        assert replay.status_code == 409 and forged.status_code == 403
        assert await in_inbox()

        # A push service that says the subscription is gone (RFC 8030 §7.3: 410) has it removed.
        device.answer(410)
        await asyncio.to_thread(imap.mail.append, [imap_message(52, subject="Anyone there?")])
        await until(lambda: _not(lambda: services.db.fetchval("SELECT count(*) FROM push_subscription")))
        assert [a.status for a in device.attempts] == [410]
    finally:
        await context.close()


async def _first(items: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((r for r in items if not r.get("isDeleted")), None)


async def _not(check: Any) -> bool:
    return not await check()
