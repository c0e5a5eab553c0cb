"""Connecting Gmail and Microsoft 365 in a real browser against the fake providers: consent, first import by
the server's own workers, an archive that reaches the provider, and "Sync now" bringing new mail."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, expect

from plmail.services import Services
from tests.support.fakes import FakeServer, GmailFake, GraphFake, rfc822
from tests.support.serve import ServeProcess

pytestmark = pytest.mark.browser


async def _eventually(check: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.2)


async def _inbox_shows(page: Page, base: str, subject: str, timeout: float = 40) -> None:
    """The inbox as a user sees it after reloading: the server's workers import in the background."""
    deadline = time.monotonic() + timeout
    while True:
        await page.goto(base + "/")
        if await page.get_by_role("link", name=re.compile(subject)).count():
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{subject!r} never appeared in the inbox")
        await asyncio.sleep(0.5)


async def _sign_in_and_connect(page: Page, base: str, button: str, heading: str) -> None:
    await page.goto(base + "/login")
    await page.get_by_label("Email address").fill("eve@example.org")
    await page.get_by_label("Password").fill("correct horse")
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("heading", name="Inbox")).to_be_visible()
    await page.goto(base + "/accounts")
    await page.get_by_role("button", name=button).click()
    # the provider's consent screen sends the browser straight back to plmail's callback
    await expect(page).to_have_url(re.compile(r"/accounts/\d+$"))
    await expect(page.get_by_role("heading", name=heading)).to_be_visible()
    # nothing is counted before the first sync has listed the mailbox, and that is not "all mail is in"
    await expect(page.get_by_text("All mail is in: 0 messages")).to_have_count(0)


async def _archive_in_ui(page: Page, subject: str) -> None:
    await page.get_by_role("checkbox", name=re.compile(f"Select {subject}")).check()
    await page.get_by_role("toolbar").get_by_role("button", name="Archive").click()
    await expect(page.get_by_role("link", name=re.compile(subject))).to_have_count(0)


async def _sync_now(page: Page, base: str, account_name: str) -> None:
    await page.goto(base + "/accounts")
    await page.get_by_role("link", name=re.compile(account_name)).first.click()
    await page.get_by_role("button", name="Sync now").click()


async def test_connect_gmail_import_archive_and_sync_now(tmp_path: Path, database_url: str, services: Services,
                                                         browser: Browser) -> None:
    fake = GmailFake("eve.example@gmail.com")
    mailbox = fake.mailbox
    kept = mailbox.add_message(rfc822("Quarterly figures", to="eve.example@gmail.com"),
                               label_ids=("INBOX", "UNREAD", "CATEGORY_PERSONAL"))
    archived = mailbox.add_message(rfc822("Old newsletter", to="eve.example@gmail.com"),
                                   label_ids=("INBOX", "CATEGORY_PERSONAL"))
    mailbox.add_message(rfc822("Already archived", to="eve.example@gmail.com"), label_ids=("CATEGORY_PERSONAL",))
    await services.users.create_user("eve@example.org", "correct horse")

    async with FakeServer(fake) as google:
        serve = ServeProcess(tmp_path / "serve", database_url=database_url, extra_env={
            "PLMAIL_GOOGLE_BASE_URL": google.url, "PLMAIL_GOOGLE_CLIENT_ID": fake.client_id,
            "PLMAIL_GOOGLE_CLIENT_SECRET": fake.client_secret,
        }).start()
        try:
            serve.wait_healthy()
            page = await browser.new_page()
            await _sign_in_and_connect(page, serve.url, "Connect Gmail", "eve.example@gmail.com")
            assert [r.ok for r in fake.oauth.token_requests if r.grant_type == "authorization_code"] == [True]

            await _inbox_shows(page, serve.url, "Quarterly figures")
            await _inbox_shows(page, serve.url, "Old newsletter")
            await expect(page.get_by_role("link", name=re.compile("Already archived"))).to_have_count(0)

            await _archive_in_ui(page, "Old newsletter")
            await _eventually(lambda: "INBOX" not in mailbox.messages[archived.id].label_ids,
                              "the archive to reach Gmail")
            assert "INBOX" in mailbox.messages[kept.id].label_ids

            mailbox.add_message(rfc822("Fresh from Gmail", to="eve.example@gmail.com"),
                                label_ids=("INBOX", "UNREAD", "CATEGORY_PERSONAL"))
            await _sync_now(page, serve.url, "eve.example@gmail.com")
            await _inbox_shows(page, serve.url, "Fresh from Gmail", timeout=20)
        finally:
            serve.terminate()


async def test_connect_microsoft_365_import_archive_and_sync_now(tmp_path: Path, database_url: str,
                                                                services: Services, browser: Browser) -> None:
    fake = GraphFake("eve@contoso.example", display_name="Eve Example")
    mailbox = fake.mailbox
    kept = mailbox.add_message(rfc822("Budget review", to="eve@contoso.example"))
    archived = mailbox.add_message(rfc822("Canteen menu", to="eve@contoso.example"), is_read=True)
    mailbox.add_message(rfc822("Filed long ago", to="eve@contoso.example"), "archive")
    await services.users.create_user("eve@example.org", "correct horse")

    async with FakeServer(fake) as microsoft:
        serve = ServeProcess(tmp_path / "serve", database_url=database_url, extra_env={
            "PLMAIL_MICROSOFT_BASE_URL": microsoft.url, "PLMAIL_MICROSOFT_CLIENT_ID": fake.client_id,
            "PLMAIL_MICROSOFT_CLIENT_SECRET": fake.client_secret or "",
        }).start()
        try:
            serve.wait_healthy()
            page = await browser.new_page()
            await _sign_in_and_connect(page, serve.url, "Connect Microsoft 365 / Outlook", "Eve Example")

            await _inbox_shows(page, serve.url, "Budget review")
            await _inbox_shows(page, serve.url, "Canteen menu")
            await expect(page.get_by_role("link", name=re.compile("Filed long ago"))).to_have_count(0)

            await _archive_in_ui(page, "Canteen menu")
            archive_id = mailbox.folder("archive").id
            await _eventually(lambda: mailbox.message(archived.id).folder_id == archive_id,
                              "the archive to reach Microsoft 365")
            assert mailbox.message(kept.id).folder_id == mailbox.folder("inbox").id

            mailbox.add_message(rfc822("Fresh from Outlook", to="eve@contoso.example"))
            await _sync_now(page, serve.url, "Eve Example")
            await _inbox_shows(page, serve.url, "Fresh from Outlook", timeout=20)
        finally:
            serve.terminate()
