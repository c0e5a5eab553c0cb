"""The app under its Content-Security-Policy in Chromium: every behaviour that was inline script works from
static/pages.js, htmx runs without eval, mail bodies keep their inline styles, and nothing is refused."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import TypeVar

import pytest
from playwright.async_api import Browser, ConsoleMessage, Page, Response, expect

from plmail.domain.enums import LabelRole, ProviderKind
from plmail.mail.ingest import parse_message
from plmail.services import Services
from tests.support.mail import make_message
from tests.support.repos import account_rows
from tests.support.serve import ServeProcess

pytestmark = pytest.mark.browser
T = TypeVar("T")


async def _seed(services: Services) -> None:
    user = await services.users.create_user("eve@example.org", "correct horse", time_zone="Europe/Berlin")
    account = await account_rows(services).create(user_id=user.id, provider_kind=ProviderKind.LOCAL, name="Home",
                                                  email=user.email)
    inbox = (await services.labels.role_ids(user.id))[LabelRole.INBOX]
    now = datetime.now(UTC)
    styled = '<p class="x" style="color: rgb(200, 0, 0)">Red letters</p>' + "<p>line</p>" * 40
    await services.pipeline.ingest([
        parse_message(make_message(message_id=f"c{i}@x", subject=subject, date=now - timedelta(hours=i),
                                   to=[user.email], html=styled if i == 0 else None),
                      account_id=account, label_ids=(inbox,))
        for i, subject in enumerate(["Styled news", "Tax return", "Train tickets"])
    ])
    projects = await services.labels.create(user.id, "Projects")
    await services.labels.create(user.id, "Apollo", parent_id=projects)


async def _frame_height(page: Page) -> float:
    return float(await page.locator("iframe.body").evaluate("f => f.getBoundingClientRect().height"))


def _value(values: dict[str, str], key: str) -> Callable[[], Awaitable[str]]:
    async def read() -> str:
        return values.get(key, "")

    return read


async def _eventually(read: Callable[[], Awaitable[T]], check: Callable[[T], bool], what: str,
                      timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check(value := await read()):
        assert time.monotonic() < deadline, f"not within {timeout} s: {what} (last: {value!r})"
        await asyncio.sleep(0.1)


async def test_pages_work_under_the_policy_with_nothing_refused(serve: ServeProcess, services: Services,
                                                                browser: Browser) -> None:
    await _seed(services)
    page: Page = await browser.new_page()
    refused: list[str] = []

    def console(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text or "Refused to" in message.text:
            refused.append(message.text)

    policies: dict[str, str] = {}

    async def response(answer: Response) -> None:
        if answer.url.endswith("/events"):
            policies["events"] = (await answer.all_headers()).get("content-security-policy", "")

    page.on("console", console)
    page.on("response", response)
    page.on("dialog", lambda dialog: dialog.accept())

    await page.goto(serve.url + "/login")
    await page.get_by_label("Email address").fill("eve@example.org")
    await page.get_by_label("Password").fill("correct horse")
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("heading", name="Inbox")).to_be_visible()

    # Select all on the page (was an inline script in the list).
    await page.locator("#select-page").check()
    await expect(page.locator("input[name=thread_ids]:checked")).to_have_count(3)
    await page.locator("#select-page").uncheck()
    await expect(page.locator("input[name=thread_ids]:checked")).to_have_count(0)
    # Nested labels are indented by class, not by a style attribute.
    apollo = page.locator("nav.sidebar li.depth-1", has_text="Apollo")
    await expect(apollo).to_have_count(1)

    # The conversation: the mail keeps its inline style inside its frame, the frame grows to fit.
    await page.get_by_role("link", name=re.compile("Styled news")).click()
    body = page.frame_locator("iframe.body").locator("p", has_text="Red letters")
    await expect(body).to_have_css("color", "rgb(200, 0, 0)")
    await _eventually(lambda: _frame_height(page), lambda height: height > 300, "the frame grows to its mail")
    # Archive goes back to the inbox (data-next, was an inline onclick).
    await page.get_by_role("toolbar", name="Conversation actions").get_by_role("button", name="Archive").click()
    await expect(page).to_have_url(serve.url + "/")
    await expect(page.locator("li.thread")).to_have_count(2)

    # A filter: "Add a condition" (was inline), and htmx's live preview without eval.
    await page.goto(serve.url + "/rules/new")
    await expect(page.locator("#conditions .condition")).to_have_count(1)
    await page.locator("#conditions .condition select").first.select_option("subject")
    await page.locator("#conditions .condition input").first.fill("tickets")
    await expect(page.locator(".rule-count")).to_have_text(re.compile(r"matches 1 "), timeout=10_000)
    await page.get_by_role("button", name="Add a condition").click()
    await expect(page.locator("#conditions .condition")).to_have_count(2)
    await expect(page.locator("#conditions .condition input").nth(1)).to_have_value("")

    # Deleting a label asks first (data-confirm, was an inline onsubmit); the dialog is accepted.
    await page.goto(serve.url + "/labels")
    row = page.locator("tr", has_text="Apollo")
    await row.get_by_role("button", name="Delete").click()
    await expect(page.locator("tr", has=page.locator('input[value="Apollo"]'))).to_have_count(0)

    # Two-factor enrolment shows its QR code, drawn as inline SVG.
    await page.goto(serve.url + "/settings/two-factor")
    await expect(page.locator(".qr svg")).to_be_visible()
    await page.goto(serve.url + "/admin")
    await page.goto(serve.url + "/calendar")
    # The composer: Trix's own default styles come in under the page's nonce, so its link dialog stays closed.
    await page.goto(serve.url + "/compose")
    await expect(page.locator("trix-editor")).to_be_visible()
    await expect(page.locator("trix-toolbar [data-trix-dialog=href]")).to_be_hidden()
    await page.goto(serve.url + "/")
    await _eventually(_value(policies, "events"), lambda policy: "frame-ancestors 'none'" in policy,
                      "the live list's event stream under the policy")

    assert refused == [], refused
