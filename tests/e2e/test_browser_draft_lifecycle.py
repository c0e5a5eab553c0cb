"""A draft's life in headless Chromium against `plmail serve`, Dovecot and the suite's SMTP server (issue 29,
"Drafts never outlive what they became"; issue 39 rule 7): Send pressed while an autosave is under way, twenty
times in a row; Send after Undo; a scheduled send; a second window; opening composers without typing; a reload;
the cursor above a forward, the signature's delimiter once, and the question before a send without subject.
Each asserts what reached the SMTP server and what Dovecot's Drafts (and plmail) hold afterwards. One server,
database, mailbox and browser for the module."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.message import Message
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from playwright.async_api import Browser, Page, Route, expect

from plmail.services import Services
from tests.e2e.daily_ui import OUTPUT
from tests.e2e.test_browser_compose import incoming
from tests.integration.sending.conftest import Outgoing, add_sending_account
from tests.support.browser import SharedChromium
from tests.support.dovecot import DovecotServer, dovecot
from tests.support.jobs import bring_due
from tests.support.serve import ServeProcess, open_world_services
from tests.support.smtp import SmtpServer, smtp_server

__all__ = ["dovecot", "smtp_server"]

pytestmark = pytest.mark.browser

PASSWORD = "correct horse"
ROUNDS = 20  # the "20 times in a row"
AUTOSAVE_DELAY_MS = 2000  # the "2 s after typing stops"


@dataclass
class World:
    out: Outgoing
    server: ServeProcess
    browser: Browser
    state: Any

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def services(self) -> Services:
        return self.out.services

    async def page(self, asked: list[str] | None = None, **context: Any) -> Page:
        """A signed-in page whose questions (confirm) are answered yes, and noted in `asked`."""
        # These tests hold requests back with page.route, which a service worker's fetches would slip past.
        made = await self.browser.new_context(storage_state=self.state, service_workers="block", **context)
        page = await made.new_page()

        async def answer(dialog: Any) -> None:
            if asked is not None:
                asked.append(dialog.message)
            await dialog.accept()

        page.on("dialog", lambda dialog: asyncio.ensure_future(answer(dialog)))
        return page

    async def drafts_here(self) -> list[str]:
        rows = await self.services.db.fetch(
            "SELECT rfc_message_id FROM message WHERE account_id = $1 AND (flags ? '$draft' OR flags ? '\\Draft')",
            self.out.account_id)
        return [r["rfc_message_id"] for r in rows]

    async def no_draft_anywhere(self, timeout: float = 30.0) -> None:
        """plmail's workers bring Dovecot in step: wait until neither holds a draft, then a sync brings none."""
        deadline = time.monotonic() + timeout
        while True:
            here, there = await self.drafts_here(), self.out.folder("Drafts")
            if not here and not there:
                break
            if time.monotonic() > deadline:
                raise AssertionError(f"drafts left: plmail {here}, Dovecot {there}")
            await asyncio.sleep(0.2)
        await self.out.sync()
        assert await self.drafts_here() == []


def plain_text(message: Message) -> str:
    part = next(p for p in message.walk() if p.get_content_type() == "text/plain")
    payload = part.get_payload(decode=True)
    assert isinstance(payload, bytes)
    return payload.decode(part.get_content_charset() or "utf-8")


@pytest.fixture(scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory, module_database: str, shared_chromium: SharedChromium,
                dovecot: DovecotServer, smtp_server: SmtpServer) -> AsyncIterator[World]:
    root = tmp_path_factory.mktemp("draft-lifecycle")
    lifecycle_database = module_database
    data = root / "data"
    services = await open_world_services(data, lifecycle_database)
    server: ServeProcess | None = None
    try:
        user = await services.users.create_user("owner@example.org", PASSWORD, time_zone="Europe/Berlin")
        mailbox = dovecot.add_user()
        smtp_server.reset()
        account_id = await add_sending_account(services, user, mailbox, smtp_server)
        out = Outgoing(services, user, mailbox, smtp_server, account_id)
        out.mail.append([
            incoming(out.address, sender="Bea Berg <bea@example.net>", subject="Plans for Saturday",
                     message_id="plans@example.net", attachment=True),
            incoming(out.address, sender="Carl Clausen <carl@example.com>", subject="Hi", message_id="hi@example.com"),
        ])
        await out.sync()
        await services.outbox.set_undo_delay(user.id, 0)
        server = ServeProcess(data, database_url=lifecycle_database).start()
        server.wait_healthy()
        browser = await shared_chromium.get()
        context = await browser.new_context()
        page = await context.new_page()
        await page.goto(server.url + "/login")
        await page.get_by_label("Email address").fill("owner@example.org")
        await page.get_by_label("Password").fill(PASSWORD)
        await page.get_by_role("button", name="Sign in").click()
        await expect(page.get_by_role("heading", name="Inbox")).to_be_visible()
        state = await context.storage_state()
        await context.close()
        yield World(out, server, browser, state)
    finally:
        if server is not None:
            server.terminate()
        await services.close()


@pytest.fixture
def fresh(world: World) -> World:
    world.out.smtp.reset()
    return world


def slowed_autosaves(delay: float) -> Callable[[Route], Any]:
    """The autosave's request held `delay` seconds before it reaches the server: in flight when Send is pressed."""
    async def handle(route: Route) -> None:
        request = route.request
        if request.method == "POST" and b'name="autosave"' in (request.post_data_buffer or b""):
            await asyncio.sleep(delay)
        await route.continue_()
    return handle


async def test_send_while_an_autosave_is_in_flight_twenty_times_leaves_no_draft(fresh: World) -> None:
    page = await fresh.page()
    await page.route("**/compose", slowed_autosaves(0.6))
    # The page's clock runs on as usual but can be moved on: each round skips the two quiet seconds autosave waits
    # for (the composer's own delay, not what this test is about) instead of sitting through them twenty times.
    await page.clock.install()
    for round_ in range(ROUNDS):
        await page.goto(fresh.url + "/compose")
        await page.locator("input[name=to]").fill("bea@example.net")
        await page.locator("input[name=subject]").fill(f"Race {round_}")
        await page.locator("trix-editor").click()
        await page.keyboard.type(f"Words of round {round_}.")
        # The editor has taken in the last key (its form field holds the text) before the clock moves on; a change
        # coming after the jump would start the two seconds again, and the round would only wait as it used to.
        await expect(page.locator("input[name=html]")).to_have_value(re.compile(f"Words of round {round_}\\."))
        await page.clock.fast_forward(AUTOSAVE_DELAY_MS)
        await expect(page.locator("[data-save-status]")).to_have_text("Saving…", timeout=10_000)
        await page.keyboard.press("Control+Enter")  # the autosave is still on its way
        await expect(page.get_by_role("heading", name="Inbox")).to_be_visible(timeout=20_000)  # back at the list
        await expect(page.locator(".toast")).to_be_visible(timeout=20_000)  # submitted; on to the next
    received = fresh.out.smtp.wait_for(ROUNDS, timeout=30)
    assert sorted(r.message["Subject"] for r in received) == sorted(f"Race {i}" for i in range(ROUNDS))
    await fresh.no_draft_anywhere()
    # The Sent copy is filed by its own job after delivery: wait for the last one to land.
    wanted = {r.message["Message-ID"].strip()[1:-1] for r in received}
    deadline = time.monotonic() + 30
    while not wanted <= (sent := fresh.out.folder("Sent")) and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert wanted <= sent, f"not filed in Sent: {wanted - sent}"


async def test_send_after_undo_and_a_scheduled_send_leave_no_draft(fresh: World) -> None:
    await fresh.services.outbox.set_undo_delay(fresh.out.user.id, 4)
    try:
        page = await fresh.page()
        await page.goto(fresh.url + "/compose")
        await page.locator("input[name=to]").fill("bea@example.net")
        await page.locator("input[name=subject]").fill("Second thoughts")
        await page.locator("trix-editor").click()
        await page.keyboard.type("Maybe not.")
        await page.get_by_role("button", name="Send", exact=True).click()
        await page.locator(".toast").get_by_role("button", name="Undo").click()
        await expect(page.locator("trix-editor")).to_contain_text("Maybe not.")  # a draft again
        await page.locator("trix-editor").click()
        await page.keyboard.press("Control+End")
        await page.keyboard.type(" Yes, after all.")
        await page.get_by_role("button", name="Send", exact=True).click()
        await expect(page.locator(".toast")).to_contain_text("Sent", timeout=20_000)
    finally:
        await fresh.services.outbox.set_undo_delay(fresh.out.user.id, 0)
    [received] = fresh.out.smtp.wait_for(1, timeout=10)
    assert "Yes, after all." in plain_text(received.message)
    await fresh.no_draft_anywhere()

    await page.goto(fresh.url + "/compose")
    await page.locator("input[name=to]").fill("bea@example.net")
    await page.locator("input[name=subject]").fill("Later")
    await page.locator("trix-editor").click()
    await page.keyboard.type("Scheduled words.")
    await expect(page.locator("[data-save-status]")).to_have_text("Saved", timeout=10_000)
    await page.locator(".schedule-menu summary").click()
    later = (datetime.now(ZoneInfo("Europe/Berlin")) + timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M")
    await page.get_by_label("Pick a time").fill(later)
    await page.get_by_role("button", name="Schedule", exact=True).click()
    await expect(page.locator(".toast")).to_contain_text("Scheduled for")
    await fresh.services.db.execute("UPDATE submission SET send_at = now() WHERE state = 'pending'")
    assert await bring_due(fresh.services, ["send_submission"]) == 1
    scheduled = fresh.out.smtp.wait_for(2, timeout=20)
    assert scheduled[1].message["Subject"] == "Later"
    await fresh.no_draft_anywhere()


async def test_a_send_from_a_second_window_leaves_no_draft_and_the_first_window_says_why(fresh: World) -> None:
    page = await fresh.page()
    await page.goto(fresh.url + "/compose")
    await page.locator("input[name=to]").fill("carl@example.com")
    await page.locator("input[name=subject]").fill("Two windows")
    await page.locator("trix-editor").click()
    await page.keyboard.type("Started here.")
    await expect(page.locator("[data-save-status]")).to_have_text("Saved", timeout=10_000)
    await expect(page).to_have_url(re.compile(r"/compose\?draft=\d+$"))
    other = await page.context.new_page()
    await other.goto(page.url)  # the composition's address: the same draft, in a second window
    await expect(other.locator("trix-editor")).to_contain_text("Started here.")
    await other.locator("trix-editor").click()
    await other.keyboard.press("Control+End")
    await other.keyboard.type(" Finished there.")
    await other.keyboard.press("Control+Enter")
    await expect(other.locator(".toast")).to_contain_text("Sent", timeout=20_000)
    await page.locator("trix-editor").click()
    await page.keyboard.type(" More here.")  # the first window's next autosave is refused
    await expect(page.locator("[data-save-status]")).to_contain_text("another window", timeout=10_000)
    [received] = fresh.out.smtp.wait_for(1, timeout=10)
    assert "Finished there." in plain_text(received.message)
    await fresh.no_draft_anywhere()


async def test_opening_composers_without_typing_creates_nothing(fresh: World) -> None:
    services, user = fresh.services, fresh.out.user
    identity = await fresh.out.identity()
    await services.identities.update(user.id, identity.id, text_signature="Owner Example\nplmail")
    before = await services.db.fetchval("SELECT count(*) FROM message")
    page = await fresh.page()
    await page.clock.install()
    await page.goto(fresh.url + "/compose")  # the signature is inserted; nothing typed
    await expect(page.locator("trix-editor")).to_contain_text("Owner Example")
    await page.clock.run_for(10_000)  # well past the autosave's two seconds
    other = await fresh.out.verified_alias("team@example.org", name="Team")
    await page.reload()
    await page.locator("select[name=identity_id]").select_option(str(other.id))  # a chosen identity: not input
    await page.clock.run_for(10_000)
    await page.goto(fresh.url + "/")  # leaving: nothing to keep
    await page.get_by_role("link", name="Plans for Saturday").first.click()
    await expect(page.get_by_role("heading", name="Plans for Saturday")).to_be_visible()
    await page.wait_for_load_state("load")  # the page's scripts, which the shortcuts need
    await page.keyboard.press("f")  # a forward with the original's file, inline
    await expect(page.locator(".composer-shell.inline [data-files] li", has_text="agenda.pdf")).to_be_visible()
    await page.clock.run_for(10_000)
    await page.keyboard.press("Escape")
    await page.goto(fresh.url + "/compose?answer="
                    + str(await services.db.fetchval("SELECT id FROM message WHERE rfc_message_id = 'hi@example.com'"))
                    + "&mode=reply")  # a link to an answer, opened as a page
    await page.clock.run_for(10_000)
    await page.goto(fresh.url + "/")
    assert await services.db.fetchval("SELECT count(*) FROM message") == before
    assert await services.db.fetchval("SELECT count(*) FROM draft_version") == 0 or await fresh.drafts_here() == []
    assert fresh.out.folder("Drafts") == set()
    assert fresh.out.smtp.received == []
    await services.identities.update(user.id, identity.id, text_signature="")


async def test_a_reload_keeps_what_was_typed(fresh: World) -> None:
    page = await fresh.page()

    async def saved(text: str) -> None:  # the composer's last successful save held this text
        await page.wait_for_function(
            "text => (document.querySelector('[data-composer]').plmailComposer.lastSaved || '').includes(text)",
            arg=text, timeout=15_000)

    await page.goto(fresh.url + "/compose")
    await page.locator("input[name=to]").fill("bea@example.net")
    await page.locator("trix-editor").click()
    await page.keyboard.type("Notes I must not lose")
    await saved("Notes I must not lose")
    assert "/compose?draft=" in page.url
    await page.locator("trix-editor").click()
    await page.keyboard.press("Control+End")
    await page.keyboard.type(", and more of them")
    await saved("and more of them")
    first_url = page.url
    await page.reload()
    await expect(page.locator("trix-editor")).to_contain_text("Notes I must not lose, and more of them")
    assert page.url == first_url  # the composition's address did not change with the second save
    await page.get_by_role("button", name="Discard").click()
    await expect(page.get_by_role("heading", name="Inbox")).to_be_visible()
    await fresh.no_draft_anywhere()


async def test_typing_starts_above_a_forward_the_signature_delimiter_is_once_and_no_subject_asks_once(
    fresh: World,
) -> None:
    services, user = fresh.services, fresh.out.user
    identity = await fresh.out.identity()
    await services.identities.update(user.id, identity.id, text_signature="-- \nOwner Example")  # brings its own
    try:
        asked: list[str] = []
        page = await fresh.page(asked)
        await page.goto(fresh.url + "/")
        await page.get_by_role("link", name=re.compile(r"\bHi\b")).first.click()
        await expect(page.get_by_role("heading", name="Hi", exact=True)).to_be_visible()
        await page.wait_for_load_state("load")  # the page's scripts, which the shortcuts need
        await page.keyboard.press("f")
        composer = page.locator(".composer-shell.inline")
        await expect(composer).to_be_visible()
        await composer.locator("input[name=to]").fill("bea@example.net")
        await composer.locator("trix-editor").click()
        await page.keyboard.press("Control+Home")
        await page.keyboard.type("Have a look, Bea.")
        await page.keyboard.press("Control+Enter")
        await expect(page.locator(".toast")).to_contain_text("Sent", timeout=20_000)
        [forward] = fresh.out.smtp.wait_for(1, timeout=10)
        text = plain_text(forward.message)
        lines = text.splitlines()
        assert lines[0] == "Have a look, Bea."
        assert any(line.startswith("---------- Forwarded message") or "Forwarded message" in line
                   for line in lines[1:])
        assert not any("Have a look" in line and "Forwarded" in line for line in lines)
        assert lines.count("-- ") == 1 and "--" not in [line for line in lines if line != "-- "][:3]

        assert asked == []  # a subject of its own: no question
        await page.goto(fresh.url + "/compose")
        await page.locator("input[name=to]").fill("carl@example.com")
        await page.locator("trix-editor").click()
        await page.keyboard.type("No subject on this one.")
        await page.get_by_role("button", name="Send", exact=True).click()
        await expect(page.locator(".toast")).to_contain_text("Sent", timeout=20_000)
        assert asked == ["Send this message without a subject?"]  # once
        received = fresh.out.smtp.wait_for(2, timeout=10)
        assert (received[1].message["Subject"] or "") == ""
    finally:
        await services.identities.update(user.id, identity.id, text_signature="")
    await fresh.no_draft_anywhere()


async def test_after_send_the_person_is_back_where_they_came_from_with_the_toast(fresh: World) -> None:
    page = await fresh.page(viewport={"width": 1366, "height": 800})
    await page.goto(fresh.url + "/")
    await page.keyboard.press("c")  # the composer in place of the inbox
    await expect(page.get_by_role("heading", name="New message")).to_be_visible()
    await page.locator("input[name=to]").fill("bea@example.net")
    await page.locator("input[name=subject]").fill("From the inbox")
    await page.locator("trix-editor").click()
    await page.keyboard.type("Back to the list after this.")
    await page.keyboard.press("Control+Enter")
    await expect(page.get_by_role("heading", name="Inbox")).to_be_visible()  # the list, not "New message"
    assert page.url == fresh.url + "/"
    await expect(page.locator(".toast")).to_contain_text("Sent", timeout=20_000)
    OUTPUT.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=OUTPUT / "sent-toast-inbox-1366.png")
    await page.set_viewport_size({"width": 390, "height": 844})

    await page.get_by_role("link", name=re.compile(r"\bHi\b")).first.click()
    thread_url = page.url
    await page.goto(fresh.url + "/compose", referer=thread_url)  # a page of its own, opened from the thread
    await page.locator("input[name=to]").fill("carl@example.com")
    await page.locator("input[name=subject]").fill("From the thread")
    await page.locator("trix-editor").click()
    await page.keyboard.type("Back to the thread after this.")
    await page.get_by_role("button", name="Send", exact=True).click()
    await expect(page).to_have_url(thread_url)
    await expect(page.locator(".toast")).to_contain_text("Sent", timeout=20_000)
    await page.screenshot(path=OUTPUT / "sent-toast-thread-390.png")
    received = fresh.out.smtp.wait_for(2, timeout=10)
    assert [r.message["Subject"] for r in received] == ["From the inbox", "From the thread"]
    await fresh.no_draft_anywhere()
