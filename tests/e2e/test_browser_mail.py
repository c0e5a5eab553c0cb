"""The mail flows in a real browser: the tab a rule filed into, list toolbar, conversation actions, snooze, labels,
filter preview."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from playwright.async_api import Browser, Page, expect

from plmail.domain.enums import LabelRole, ProviderKind
from plmail.mail.ingest import parse_message
from plmail.mail.rules.model import RuleDraft
from plmail.services import Services
from tests.support.mail import make_message
from tests.support.repos import account_rows
from tests.support.serve import ServeProcess

pytestmark = pytest.mark.browser


async def _seed(services: Services) -> None:
    user = await services.users.create_user("eve@example.org", "correct horse", time_zone="Europe/Berlin")
    account = await account_rows(services).create(user_id=user.id, provider_kind=ProviderKind.LOCAL, name="Home",
                                             email="eve@example.org", settings={"authserv_ids": ["mx.example.net"]})
    inbox = (await services.labels.role_ids(user.id))[LabelRole.INBOX]
    now = datetime.now(UTC)
    await services.pipeline.ingest([
        parse_message(make_message(message_id=f"b{i}@x", subject=subject, date=now - timedelta(hours=i),
                                   to=["eve@example.org"]), account_id=account, label_ids=(inbox,))
        for i, subject in enumerate(["Garden party", "Tax return", "Train tickets"])
    ])
    # A "file into category" rule and a message it files (its sender's authentication passed)
    labels = {r["id"] for r in await services.db.fetch("SELECT id FROM label")}
    await services.rules.save(user.id, None, RuleDraft("bank", None, {"from": "bank.example"},
                                                       [{"type": "fileIntoCategory", "category": "updates"}]),
                              labels, {account})
    passed = "mx.example.net; dkim=pass header.d=bank.example; spf=pass smtp.mailfrom=bank.example; dmarc=pass"
    await services.pipeline.ingest([parse_message(make_message(
        message_id="st@bank.example", subject="Monthly statement", sender="Bank <alerts@bank.example>",
        to=["eve@example.org"], date=now, headers={"Authentication-Results": passed}),
        account_id=account, label_ids=(inbox,))])


async def _sign_in(page: Page, base: str) -> None:
    await page.goto(base + "/login")
    await page.get_by_label("Email address").fill("eve@example.org")
    await page.get_by_label("Password").fill("correct horse")
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("heading", name="Inbox")).to_be_visible()


async def test_toolbar_conversation_snooze_labels_and_filter_preview(serve: ServeProcess, services: Services,
                                                                     browser: Browser) -> None:
    await _seed(services)
    page = await browser.new_page()
    await _sign_in(page, serve.url)
    threads = page.locator("li.thread")
    await expect(threads).to_have_count(3)
    tabs = page.get_by_role("navigation", name="Inbox tabs")
    await tabs.get_by_role("link", name=re.compile("^Updates")).click()  # where the rule filed the statement
    await expect(threads).to_have_count(1)
    await expect(threads).to_contain_text("Monthly statement")
    await tabs.get_by_role("link", name=re.compile("^General")).click()
    await expect(threads).to_have_count(3)

    await page.get_by_role("checkbox", name=re.compile("Select Tax return")).check()
    await page.get_by_role("toolbar").get_by_role("button", name="Archive").click()
    await expect(threads).to_have_count(2)
    await expect(page.get_by_text("Tax return")).to_have_count(0)

    await page.get_by_role("link", name=re.compile("Garden party")).click()
    await expect(page.get_by_role("heading", name="Garden party")).to_be_visible()
    actions = page.get_by_role("toolbar", name="Conversation actions")
    await actions.get_by_role("button", name="Star", exact=True).click()
    await expect(actions.get_by_role("button", name="Unstar")).to_be_visible()
    await actions.locator("summary", has_text="Snooze").click()  # the snooze menu (issue 32)
    await actions.get_by_role("button", name=re.compile("^Tomorrow")).click()
    await expect(page.get_by_role("heading", name="Inbox")).to_be_visible()
    await expect(threads).to_have_count(1)
    await page.get_by_role("navigation", name="Main navigation").get_by_role("link", name="Snoozed").first.click()
    await expect(page.get_by_text("Garden party")).to_be_visible()

    await page.goto(serve.url + "/labels")
    await page.get_by_placeholder("Name").fill("Travel")
    await page.get_by_role("button", name="Create").click()
    await expect(page.locator("input[name=name][value=Travel]")).to_have_count(1)

    await page.goto(serve.url + "/rules/new")
    await page.get_by_label("Name").fill("Trains")
    await page.get_by_label("Field").select_option("subject")
    await page.get_by_label("Value").fill("train")
    await page.get_by_label("Archive it").check()
    preview = page.locator("#rule-preview")
    await expect(preview).to_contain_text("matches 1 message", timeout=10_000)
    await expect(preview).to_contain_text("If the subject contains “train”, then archive it.")
    await page.get_by_role("button", name="Save filter").click()
    await expect(page.get_by_role("heading", name="Filters")).to_be_visible()
    await expect(page.get_by_text("If the subject contains “train”, then archive it.")).to_be_visible()

