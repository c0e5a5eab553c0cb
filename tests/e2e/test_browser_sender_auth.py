"""The unverified-sender warning in a real browser (issue 30): a forged "bank" mail is marked in the thread view
and stays out of the tab the user's filter files the real bank mail into; "Why is this here?" says why."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from playwright.async_api import Browser, expect

from plmail.domain.enums import LabelRole, ProviderKind
from plmail.mail.ingest import parse_message
from plmail.mail.rules.model import RuleDraft
from plmail.services import Services
from tests.support.mail import make_message
from tests.support.repos import account_rows
from tests.support.serve import ServeProcess

pytestmark = pytest.mark.browser

WARNING = "plmail could not verify that this message came from bank.example."


async def _seed(services: Services) -> None:
    user = await services.users.create_user("eve@example.org", "correct horse", time_zone="Europe/Berlin")
    account = await account_rows(services).create(
        user_id=user.id, provider_kind=ProviderKind.LOCAL, name="Home", email="eve@example.org",
        settings={"authserv_ids": ["mx.home.example"]})  # the receiving server the account believes
    inbox = (await services.labels.role_ids(user.id))[LabelRole.INBOX]
    labels = {r["id"] for r in await services.db.fetch("SELECT id FROM label")}
    await services.rules.save(user.id, None, RuleDraft("bank", None, {"from": "bank.example"},
                                                       [{"type": "fileIntoCategory", "category": "updates"}]),
                              labels, {account})
    now = datetime.now(UTC)
    real = make_message(message_id="real@bank.example", subject="Your monthly statement", date=now,
                        sender="Bank <alerts@bank.example>", to=["eve@example.org"],
                        headers={"Authentication-Results": "mx.home.example; dkim=pass header.d=bank.example; "
                                                           "dmarc=pass header.from=bank.example"})
    # The forger signed with his own domain; the account's server says DMARC failed for bank.example.
    forged = make_message(message_id="forged@bank.example", subject="Verify your account now",
                          date=now - timedelta(minutes=5), sender="Bank <alerts@bank.example>", to=["eve@example.org"],
                          body="Your account is locked. Sign in at the link below.\n",
                          headers={"Authentication-Results": "mx.home.example; dkim=pass header.d=evil.example; "
                                                             "spf=pass smtp.mailfrom=x@evil.example; dmarc=fail "
                                                             "(p=reject) header.from=bank.example"})
    await services.pipeline.ingest([parse_message(raw, account_id=account, label_ids=(inbox,))
                                    for raw in (real, forged)])


async def test_a_forged_sender_is_marked_and_not_filed(serve: ServeProcess, services: Services,
                                                       browser: Browser) -> None:
    await _seed(services)
    page = await browser.new_page(viewport={"width": 1366, "height": 900})
    await page.goto(serve.url + "/login")
    await page.get_by_label("Email address").fill("eve@example.org")
    await page.get_by_label("Password").fill("correct horse")
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("heading", name="Inbox")).to_be_visible()
    threads = page.locator("li.thread")
    await expect(threads).to_have_count(1)  # General: only the forgery; the real statement went to Updates
    await expect(threads).to_contain_text("Verify your account now")

    await page.get_by_role("link", name=re.compile("Verify your account now")).click()
    warning = page.locator("[data-sender-unverified]")
    await expect(warning).to_be_visible()
    await expect(warning).to_contain_text(WARNING)
    await expect(warning).to_contain_text("DMARC check did not pass")
    await page.get_by_text("Why is this here?").click()
    await expect(page.locator("details.why")).to_contain_text(
        "A filter would file it under Updates, but plmail could not verify that it came from bank.example")
    await page.screenshot(path=str(serve.data_dir.parent / "sender-warning-1366.png"), full_page=True)
    await page.set_viewport_size({"width": 390, "height": 844})
    await expect(warning).to_be_visible()
    box = await warning.bounding_box()
    assert box is not None and box["width"] <= 390  # the warning fits the phone's width
    await page.screenshot(path=str(serve.data_dir.parent / "sender-warning-390.png"), full_page=True)

    await page.set_viewport_size({"width": 1366, "height": 900})
    await page.goto(serve.url + "/?tab=updates")
    await page.get_by_role("link", name=re.compile("Your monthly statement")).click()
    await expect(page.get_by_role("heading", name="Your monthly statement")).to_be_visible()
    await expect(page.locator("[data-sender-unverified]")).to_have_count(0)
    await page.get_by_text("Why is this here?").click()
    await expect(page.locator("details.why")).to_contain_text(
        "A filter filed it under Updates: plmail verified that it came from bank.example (DMARC passed).")
