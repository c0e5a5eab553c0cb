"""Issue 33, the installable web app: Chromium's own installability check (what Lighthouse's installable audit
asks, through the DevTools protocol), the manifest's icons and shortcuts, and the service worker's offline reading
of the inbox's newest conversations."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
from playwright.async_api import Page, async_playwright, expect

from tests.e2e.daily_ui import World
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS


async def _controlled(page: Page) -> None:
    """Until the service worker controls the page (first visit: after its install and claim)."""
    await page.wait_for_function("() => navigator.serviceWorker.controller !== null", timeout=15000)


async def _kept(page: Page, path: str) -> bool:
    found: bool = await page.evaluate(
        """async (path) => { const cache = await caches.open("plmail-mail-v1");
                             return (await cache.match(path)) !== undefined; }""", path)
    return found


async def _until_kept(page: Page, path: str, timeout: float = 15.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await _kept(page, path):
        assert asyncio.get_running_loop().time() < deadline, f"{path} was not copied for offline reading"
        await asyncio.sleep(0.1)


async def test_manifest_and_service_worker_make_plmail_installable(world: World, tmp_path: Path) -> None:
    # A browser profile of its own: Chromium installs no app from an incognito window (World's contexts are).
    async with async_playwright() as playwright:
        context = await playwright.chromium.launch_persistent_context(
            tmp_path / "profile", executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            await context.add_cookies(world.states["eve"]["cookies"])
            page = await context.new_page()
            await page.goto(world.base + "/")
            await _controlled(page)
            cdp = await context.new_cdp_session(page)
            manifest: dict[str, Any] = await cdp.send("Page.getAppManifest")
            assert manifest["url"].endswith("/manifest.webmanifest")
            assert manifest["errors"] == []
            installability = await cdp.send("Page.getInstallabilityErrors")
            assert installability["installabilityErrors"] == []
        finally:
            await context.close()
    # What the browser read: icons at the sizes it asks for (192 and 512, one of them maskable), standalone, and
    # the two shortcuts the issue names; the German visitor gets them in German.
    with httpx.Client(base_url=world.base) as client:
        response = client.get("/manifest.webmanifest", headers={"Accept-Language": "de"})
        worker = client.get("/sw.js")
        icon = client.get("/static/icons/plmail-maskable-512.png")
    assert response.headers["content-type"].startswith("application/manifest+json")
    body = response.json()
    assert body["display"] == "standalone" and body["start_url"] == "/" and body["scope"] == "/"
    sizes = {(i["sizes"], i["purpose"]) for i in body["icons"]}
    assert {("192x192", "any"), ("512x512", "any"), ("512x512", "maskable")} <= sizes
    assert [(s["name"], s["url"]) for s in body["shortcuts"]] == [("Schreiben", "/compose"), ("Kalender", "/calendar")]
    assert icon.content[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(icon.content[16:20], "big") == 512
    assert worker.headers["content-type"].startswith("text/javascript")
    assert worker.headers["service-worker-allowed"] == "/"
    assert "script-src 'self'" in worker.headers["content-security-policy"]


async def test_the_inbox_newest_conversations_are_readable_offline(world: World) -> None:
    thread_id = await world.fresh_thread("Ferry times for Sunday")
    page = await world.page()
    try:
        await page.goto(world.base + "/")
        await _controlled(page)
        # The worker copies the inbox when a page shows it; the first visit's ask may have come before it ran.
        await page.evaluate("navigator.serviceWorker.controller.postMessage({type: 'refresh-offline-copies', "
                            "force: true})")
        await _until_kept(page, "/offline/inbox.json")  # kept last, when every copy is in
        assert await _kept(page, f"/thread/{thread_id}") and await _kept(page, "/")
        # Copying is no reading: the conversation is still unread on the server.
        summary, _messages = await world.services.reader.thread(
            (await world.services.users.by_email("eve@example.org")).id, thread_id)
        assert summary.unread_count == 1
        assert not await _kept(page, "/settings")

        await page.context.set_offline(True)
        await page.goto(world.base + f"/thread/{thread_id}")
        await expect(page.locator("h1")).to_contain_text("Ferry times for Sunday")
        await expect(page.locator("body")).to_contain_text("About Ferry times for Sunday.")
        await page.goto(world.base + "/")
        await expect(page.locator("li.thread").first).to_contain_text("Ferry times for Sunday")
        await page.goto(world.base + "/settings")  # never kept: the offline page says so
        await expect(page.locator("h1")).to_have_text("You are offline")
        await page.context.set_offline(False)
        await page.goto(world.base + "/settings")
        await expect(page.locator("h1")).not_to_have_text("You are offline")
    finally:
        await page.context.close()


async def _in_inbox(world: World, thread_id: int) -> bool:
    return bool(await world.services.db.fetchval(
        "SELECT count(*) FROM thread_label WHERE thread_id = $1 AND label_id = $2", thread_id, world.inbox))


async def _until(check: Any, timeout: float = 15.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, "not in time"
        await asyncio.sleep(0.1)


async def test_an_archive_made_offline_is_applied_once_on_reconnect(world: World) -> None:
    thread_id = await world.fresh_thread("Boarding passes")
    page = await world.page()
    try:
        await page.goto(world.base + "/")
        await _controlled(page)
        await page.evaluate("navigator.serviceWorker.controller.postMessage({type: 'refresh-offline-copies', "
                            "force: true})")
        await _until_kept(page, "/offline/inbox.json")  # kept last, when every copy is in
        assert await _kept(page, f"/thread/{thread_id}") and await _kept(page, "/")

        await page.context.set_offline(True)
        await page.goto(world.base + f"/thread/{thread_id}")
        await page.locator("form.thread-actions button[value=archive]").click()
        await expect(page.locator(".toast", has_text="You are offline")).to_be_visible()
        assert await _in_inbox(world, thread_id)  # nothing reached the server yet

        await page.context.set_offline(False)  # the page's "online" event asks the worker to replay
        await _until(lambda: _not(_in_inbox(world, thread_id)))
        keys = await world.services.db.fetch(
            "SELECT idempotency_key FROM applied_action a JOIN app_user u ON u.id = a.user_id "
            "WHERE u.email = 'eve@example.org'")
        assert len(keys) == 1
        await _until(lambda: _queue_empty(page))

        # The same request again (its answer lost, say) is refused and changes nothing.
        user = await world.services.users.by_email("eve@example.org")
        await world.services.operations.move_to_inbox(user.id, thread_ids=[thread_id])
        status = await page.evaluate(
            """async ([key, id]) => {
                 const csrf = JSON.parse(document.body.getAttribute("hx-headers"))["x-csrftoken"];
                 const body = new URLSearchParams({action: "archive", thread_ids: id, next: "/", _csrf_token: csrf});
                 const answer = await fetch("/actions", {method: "POST", body, redirect: "manual",
                                                         headers: {"Idempotency-Key": key, "x-csrftoken": csrf}});
                 return answer.status; }""", [keys[0]["idempotency_key"], str(thread_id)])
        assert status == 409
        assert await _in_inbox(world, thread_id)
    finally:
        await page.context.close()


async def _queue_empty(page: Page) -> bool:
    left: int = await page.evaluate("async () => (await (await caches.open('plmail-queue-v1')).keys()).length")
    return left == 0


async def _not(awaitable: Any) -> bool:
    return not await awaitable
