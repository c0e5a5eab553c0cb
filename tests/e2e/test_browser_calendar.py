"""The calendar in a real browser: a double-click on a day opens the editor, an event is created, one occurrence
and then the whole series are edited, one occurrence and then the event are deleted; an accepted proposal links
back to its message and carries the place its sentence named. The pages run under the app's headers with
their behaviour in /static/calendar.js (no inline script)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from playwright.async_api import Browser, Page, expect

from plmail.domain.enums import LabelRole, ProviderKind
from plmail.jobs.calendar import propose_events
from plmail.jobs.context import SERVICES_KEY
from plmail.mail.ingest import parse_message
from plmail.services import Services
from tests.support.mail import make_message
from tests.support.repos import account_rows
from tests.support.serve import ServeProcess

pytestmark = pytest.mark.browser


async def sign_in(page: Page, url: str, email: str) -> None:
    await page.goto(url + "/login")
    await page.get_by_label("Email address").fill(email)
    await page.get_by_label("Password").fill("correct horse")
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("heading", name="Inbox")).to_be_visible()


def next_monday() -> date:
    today = datetime.now(UTC).date()
    return today + timedelta(days=7 - today.weekday())


async def test_create_edit_one_occurrence_and_the_series_then_delete(serve: ServeProcess, services: Services,
                                                                     browser: Browser) -> None:
    user = await services.users.create_user("ada@example.org", "correct horse", time_zone="Europe/Berlin")
    await account_rows(services).create(user_id=user.id, provider_kind=ProviderKind.LOCAL, name="Home",
                                        email="ada@example.org")
    page = await browser.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    await sign_in(page, serve.url, "ada@example.org")
    monday = next_monday()
    await page.goto(f"{serve.url}/calendar?view=week&day={monday.isoformat()}")
    await page.locator(f'section[data-day="{monday.isoformat()}"]').dblclick()
    await expect(page.get_by_role("heading", name="New event")).to_be_visible()
    assert await page.locator('input[name="start_date"]').input_value() == monday.isoformat()

    await page.get_by_label("Title").fill("Piano lesson")
    await page.locator('input[name="start_time"]').fill("17:00")
    await page.locator('input[name="end_time"]').fill("18:00")
    await page.get_by_label("Repeat").select_option("weekly")
    await page.get_by_label("Where").fill("Music school")
    await page.get_by_role("button", name="Save").click()
    await expect(page.get_by_role("heading", name="Piano lesson")).to_be_visible()

    # One occurrence: the second Monday's lesson moves to Tuesday.
    second = monday + timedelta(days=7)
    await page.goto(f"{serve.url}/calendar?view=week&day={second.isoformat()}")
    await page.locator(f'section[data-day="{second.isoformat()}"]').get_by_role("link", name="Piano lesson").click()
    await expect(page.get_by_text("Only this occurrence")).to_be_visible()
    tuesday = second + timedelta(days=1)
    await page.locator('input[name="start_date"]').fill(tuesday.isoformat())
    await page.locator('input[name="end_date"]').fill(tuesday.isoformat())
    await page.get_by_label("Title").fill("Piano lesson (moved)")
    await page.get_by_role("button", name="Save").click()
    await page.goto(f"{serve.url}/calendar?view=week&day={second.isoformat()}")
    await expect(page.locator(f'section[data-day="{tuesday.isoformat()}"]')).to_contain_text("Piano lesson (moved)")
    await expect(page.locator(f'section[data-day="{second.isoformat()}"]')).not_to_contain_text("Piano lesson")

    # The whole series: an hour later from now on, every week; the moved lesson keeps its own day.
    await page.goto(f"{serve.url}/calendar?view=week&day={monday.isoformat()}")
    await page.locator(f'section[data-day="{monday.isoformat()}"]').get_by_role("link", name="Piano lesson").click()
    await page.get_by_label("The whole series").check()
    await page.locator('input[name="start_time"]').fill("18:00")
    await page.locator('input[name="end_time"]').fill("19:00")
    await page.get_by_role("button", name="Save").click()
    third = monday + timedelta(days=14)
    await page.goto(f"{serve.url}/calendar?view=week&day={third.isoformat()}")
    await expect(page.locator(f'section[data-day="{third.isoformat()}"]')).to_contain_text("18:00–19:00")

    # Delete one occurrence, then the whole event.
    await page.locator(f'section[data-day="{third.isoformat()}"]').get_by_role("link", name="Piano lesson").click()
    await page.get_by_role("button", name="Delete this occurrence").click()
    await page.goto(f"{serve.url}/calendar?view=week&day={third.isoformat()}")
    await expect(page.locator(f'section[data-day="{third.isoformat()}"]')).not_to_contain_text("Piano lesson")
    await page.goto(f"{serve.url}/calendar?view=week&day={monday.isoformat()}")
    await page.locator(f'section[data-day="{monday.isoformat()}"]').get_by_role("link", name="Piano lesson").click()
    await page.get_by_role("button", name="Delete the whole series").click()
    await expect(page.get_by_role("heading", name="Calendar", exact=True)).to_be_visible()
    await page.goto(f"{serve.url}/calendar?view=week&day={tuesday.isoformat()}")
    await expect(page.locator(".calendar-view")).not_to_contain_text("Piano lesson")

    # All day hides the times it makes moot (calendar.js).
    await page.goto(f"{serve.url}/calendar/new?day={monday.isoformat()}")
    await page.get_by_label("All day").check()
    await expect(page.locator('input[name="start_time"]')).to_be_hidden()
    assert problems == []


async def test_an_accepted_proposal_links_back_and_carries_the_place(serve: ServeProcess, services: Services,
                                                                    browser: Browser) -> None:
    user = await services.users.create_user("eve@example.org", "correct horse", time_zone="Europe/Berlin")
    account = await account_rows(services).create(user_id=user.id, provider_kind=ProviderKind.LOCAL, name="Home",
                                                  email="eve@example.org")
    inbox = (await services.labels.role_ids(user.id))[LabelRole.INBOX]
    sent = datetime.now(UTC) - timedelta(hours=1)
    day = (sent + timedelta(days=10)).date()
    sentence = f"Shall we meet on {day:%B} {day.day}, {day.year} from 2-4pm at Cafe Lotte?"
    raw = make_message(subject="Coffee", sender="Anna <anna@example.org>", to=["eve@example.org"], date=sent,
                       body=f"Hi Eve,\n\n{sentence}\n\nAnna\n")
    result = await services.pipeline.ingest([parse_message(raw, account_id=account, label_ids=(inbox,))])
    (message,) = result.messages
    await propose_events({SERVICES_KEY: services}, user_id=user.id, message_ids=[message.id])

    page = await browser.new_page()
    await sign_in(page, serve.url, "eve@example.org")
    await page.goto(f"{serve.url}/thread/{message.thread_id}")
    card = page.get_by_role("complementary", name="Suggested event")
    await card.get_by_role("button", name="Add to calendar").click()
    await expect(card.get_by_text("Added to your calendar")).to_be_visible()
    await card.get_by_role("link", name="Shown on your calendar").click()

    await expect(page.locator("dd.where")).to_have_text("Cafe Lotte")
    await expect(page.locator("dd.when")).to_contain_text("14:00–16:00")
    provenance = page.locator("section.provenance")
    await expect(provenance).not_to_contain_text("No message is linked")
    await provenance.get_by_role("link", name="Coffee").click()
    await expect(page).to_have_url(f"{serve.url}/thread/{message.thread_id}#m{message.id}")
    accepted = page.get_by_role("complementary", name="Added to calendar")
    await expect(accepted).to_contain_text("Cafe Lotte")
