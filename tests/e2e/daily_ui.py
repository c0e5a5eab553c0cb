"""The daily-UI browser tests' world: one `plmail serve`, one seeded database and one browser per test module
(tests/e2e/test_browser_daily_ui.py and test_browser_shortcuts.py), signed in as Eve (English) and Dora (German)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect

from plmail.domain.enums import LabelRole, Locale, ProviderKind
from plmail.mail.ingest import parse_message
from plmail.services import Services
from tests.support.browser import SharedChromium
from tests.support.mail import make_message
from tests.support.repos import account_rows
from tests.support.serve import ServeProcess, open_world_services

ROOT = Path(__file__).resolve().parents[2]
OUTPUT = Path(os.environ.get("PLMAIL_TEST_OUTPUT", ROOT / "test-output")) / "ui"
AXE = ROOT / ".cache" / "npm" / "node_modules" / "axe-core" / "axe.min.js"
WIDTHS = (320, 390, 768, 1366, 1920)  # the widths: two phones, a tablet, a laptop, a desktop
PASSWORD = "correct horse"


@dataclass
class World:
    services: Services
    server: ServeProcess
    browser: Browser
    account_id: int
    inbox: int
    travel: int
    trains: int
    long_thread: int
    quoted_thread: int
    states: dict[str, Any]
    counter: int = 0

    @property
    def base(self) -> str:
        return self.server.url

    async def page(self, who: str = "eve", *, width: int = 1366, height: int = 800, dark: bool = False,
                   browser: Browser | None = None) -> Page:
        context = await (browser or self.browser).new_context(viewport={"width": width, "height": height},
                                                 color_scheme="dark" if dark else "light",
                                                 storage_state=self.states[who])
        return await context.new_page()

    async def fresh_thread(self, subject: str) -> int:
        """A new unread conversation on top of the inbox (the newest arrival)."""
        self.counter += 1
        now = datetime.now(UTC) + timedelta(seconds=self.counter)
        raw = make_message(message_id=f"fresh{self.counter}@x", subject=subject, date=now,
                           to=["eve@example.org"], body=f"About {subject}.\n")
        result = await self.services.pipeline.ingest([parse_message(raw, account_id=self.account_id,
                                                                    label_ids=(self.inbox,), received_at=now)])
        return result.messages[0].thread_id or 0


async def seed(services: Services) -> dict[str, int]:
    eve = await services.users.create_user("eve@example.org", PASSWORD, time_zone="Europe/Berlin", is_admin=True)
    await services.users.create_user("dora@example.org", PASSWORD, time_zone="Europe/Berlin", locale=Locale.DE,
                                     is_admin=True)
    account = await account_rows(services).create(
        user_id=eve.id, provider_kind=ProviderKind.LOCAL, name="Home", email="eve@example.org",
        settings={"authserv_ids": ["mx.example.org"]})  # the receiving server whose verdicts "Show original" shows
    roles = await services.labels.role_ids(eve.id)
    inbox = roles[LabelRole.INBOX]
    travel = await services.labels.create(eve.id, "Travel", color="blue")
    trains = await services.labels.create(eve.id, "Trains", parent_id=travel, color="green")
    base = datetime.now(UTC) - timedelta(days=3)
    singles = [parse_message(make_message(message_id=f"s{i}@x", subject=f"Note number {i}", date=base,
                                          to=["eve@example.org"]), account_id=account, label_ids=(inbox,),
                             received_at=base + timedelta(minutes=i), seen=i % 2 == 0)
               for i in range(8)]
    await services.pipeline.ingest(singles)
    labelled = await services.pipeline.ingest([parse_message(
        make_message(message_id="trip@x", subject="Train tickets to Hamburg", date=base, to=["eve@example.org"]),
        account_id=account, label_ids=(inbox, travel, trains), received_at=base + timedelta(hours=1))])
    # The case: six messages, the last two unread.
    ids = [f"long{i}@x" for i in range(6)]
    long_messages = [parse_message(make_message(
        message_id=ids[i], subject="Garden party" if i == 0 else "Re: Garden party", date=base,
        in_reply_to=ids[i - 1] if i else None, references=ids[:i], to=["eve@example.org"],
        sender=f"Friend {i} <friend{i}@example.org>", body=f"Message {i} about the garden.\n"),
        account_id=account, label_ids=(inbox,), received_at=base + timedelta(hours=2, minutes=i), seen=i < 4)
        for i in range(6)]
    long_result = await services.pipeline.ingest(long_messages)
    quoted = await services.pipeline.ingest([parse_message(make_message(
        message_id="quoted@x", subject="Quarterly numbers", date=base, to=["eve@example.org"],
        body="Here they are.\n\nOn Monday, Bob wrote:\n> Can you send the numbers?\n> Thanks\n\n-- \nAlice\n"
             "Head of numbers\n",
        headers={"Authentication-Results": "mx.example.org; spf=pass smtp.mailfrom=example.org; "
                                           "dkim=pass header.d=example.org; dmarc=pass header.from=example.org"}),
        account_id=account, label_ids=(inbox,), received_at=base + timedelta(hours=3))])
    await services.pipeline.ingest([parse_message(make_message(
        message_id="htmlquote@x", subject="Menu for Friday", date=base, to=["eve@example.org"], body="Soup.\n",
        html="<p>Soup and bread.</p><div class=gmail_quote>On Tuesday Bob wrote:<blockquote>What do we eat?"
             "</blockquote></div>"),
        account_id=account, label_ids=(inbox,), received_at=base + timedelta(hours=4))])
    assert labelled.messages and quoted.messages
    await services.search_index.catch_up()  # an archive's search vectors, index_search's work
    return {"account": account, "inbox": inbox, "travel": travel, "trains": trains,
            "long": long_result.messages[0].thread_id or 0, "quoted": quoted.messages[0].thread_id or 0}


@pytest.fixture(scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory, module_database: str,
                shared_chromium: SharedChromium) -> AsyncIterator[World]:
    root = tmp_path_factory.mktemp("daily-ui")
    ui_database = module_database
    services = await open_world_services(root / "data", ui_database)
    server: ServeProcess | None = None
    try:
        seeded = await seed(services)
        server = ServeProcess(root / "serve", database_url=ui_database).start()
        server.wait_healthy()
        browser = await shared_chromium.get()
        states: dict[str, Any] = {}
        for who in ("eve", "dora"):
            context = await browser.new_context()
            page = await context.new_page()
            await page.goto(server.url + "/login")
            await page.locator("input[name=email]").fill(f"{who}@example.org")
            await page.locator("input[name=password]").fill(PASSWORD)
            await page.locator("form button[type=submit]").click()
            await expect(page.locator("h1")).to_have_count(1)
            states[who] = await context.storage_state()
            await context.close()
        yield World(services, server, browser, seeded["account"], seeded["inbox"], seeded["travel"],
                    seeded["trains"], seeded["long"], seeded["quoted"], states)
    finally:
        if server is not None:
            server.terminate()
        await services.close()


async def inbox_with(world: World, subject: str) -> Page:
    """A signed-in page on the inbox with a new conversation of that subject on top."""
    await world.fresh_thread(subject)
    page = await world.page()
    await page.goto(world.base + "/")
    await expect(page.locator("li.thread").first).to_contain_text(subject)
    return page
