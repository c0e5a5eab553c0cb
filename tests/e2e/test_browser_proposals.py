"""A proposal in a real browser: the dashed card quoting the sentence, "Add to calendar", the calendar shows it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from playwright.async_api import Browser, expect

from plmail.domain.enums import LabelRole, ProviderKind
from plmail.jobs.calendar import propose_events
from plmail.jobs.context import SERVICES_KEY
from plmail.mail.ingest import parse_message
from plmail.services import Services
from tests.support.mail import make_message
from tests.support.repos import account_rows
from tests.support.serve import ServeProcess

pytestmark = pytest.mark.browser


async def test_accepting_a_proposal_puts_it_on_the_calendar(serve: ServeProcess, services: Services,
                                                            browser: Browser) -> None:
    user = await services.users.create_user("eve@example.org", "correct horse", time_zone="Europe/Berlin")
    account = await account_rows(services).create(user_id=user.id, provider_kind=ProviderKind.LOCAL, name="Home",
                                             email="eve@example.org")
    inbox = (await services.labels.role_ids(user.id))[LabelRole.INBOX]
    sent = datetime.now(UTC) - timedelta(hours=1)
    day = (sent + timedelta(days=10)).date()
    sentence = f"Can we meet on {day:%B} {day.day}, {day.year} at 3pm?"
    raw = make_message(subject="Garden planning", sender="Anna <anna@example.org>", to=["eve@example.org"],
                       date=sent, body=f"Hi Eve,\n\n{sentence}\n\nAnna\n")
    result = await services.pipeline.ingest([parse_message(raw, account_id=account, label_ids=(inbox,))])
    (message,) = result.messages
    # The job the step queued, run here so the card is there before the page opens (the worker may run it too).
    await propose_events({SERVICES_KEY: services}, user_id=user.id, message_ids=[message.id])

    page = await browser.new_page()
    await page.goto(serve.url + "/login")
    await page.get_by_label("Email address").fill("eve@example.org")
    await page.get_by_label("Password").fill("correct horse")
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("heading", name="Inbox")).to_be_visible()

    await page.goto(f"{serve.url}/thread/{message.thread_id}")
    card = page.get_by_role("complementary", name="Suggested event")
    await expect(card).to_be_visible()
    await expect(card.locator("blockquote")).to_have_text(sentence)
    assert await card.evaluate("node => getComputedStyle(node).borderTopStyle") == "dashed"
    await card.get_by_role("button", name="Add to calendar").click()
    await expect(card.get_by_text("Added to your calendar")).to_be_visible()

    await page.goto(f"{serve.url}/calendar?view=week&day={day.isoformat()}")
    entry = page.locator(f'section[data-day="{day.isoformat()}"]').get_by_text("Garden planning")
    await expect(entry).to_be_visible()
    await expect(page.locator(f'section[data-day="{day.isoformat()}"]')).to_contain_text("15:00–16:00")
