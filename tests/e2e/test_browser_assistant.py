"""An open inbox follows the assistant: held mail appears in the tab the model chose, without a reload."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from playwright.async_api import Browser, expect

from plmail.domain.enums import LabelRole, ProviderKind
from plmail.mail.ingest import parse_message
from plmail.services import Services
from tests.support.fakes.model import Behaviour, ModelFake
from tests.support.fakes.server import FakeServer
from tests.support.mail import make_message
from tests.support.repos import account_rows
from tests.support.serve import ServeProcess

pytestmark = pytest.mark.browser


async def test_held_mail_arrives_in_the_models_tab_on_an_open_page(serve: ServeProcess, services: Services,
                                                                   browser: Browser) -> None:
    async with FakeServer(ModelFake(default=Behaviour.answer("promotions", "a sale", delay_ms=1500))) as model:
        await services.assistant_settings.save(kind="openai", url=model.url, model="gpt-4o-mini", api_key=None,
                                               hold_enabled=True, hold_max_seconds=60)
        user = await services.users.create_user("eve@example.org", "correct horse")
        account = await account_rows(services).create(user_id=user.id, provider_kind=ProviderKind.IMAP, name="Home",
                                                 email="eve@example.org")
        await services.db.execute(
            """INSERT INTO mailbox (account_id, name, full_path, uid_validity, last_seen_uid, import_floor_uid,
                                    is_sync_enabled, is_idle_enabled, created_at, updated_at)
               VALUES ($1, 'INBOX', 'INBOX', 1, 10, 1, true, false, now(), now())""",
            account,
        )
        inbox = (await services.labels.role_ids(user.id))[LabelRole.INBOX]

        page = await browser.new_page()
        await page.goto(serve.url + "/login")
        await page.get_by_label("Email address").fill("eve@example.org")
        await page.get_by_label("Password").fill("correct horse")
        await page.get_by_role("button", name="Sign in").click()
        await page.goto(serve.url + "/?tab=promotions")
        await expect(page.get_by_text("No conversations here.")).to_be_visible()

        raw = make_message(subject="Summer sandals, 30% off", sender="Sunny <hi@sunny.example>",
                           to=["eve@example.org"], date=datetime.now(UTC))
        result = await services.pipeline.ingest([parse_message(raw, account_id=account, label_ids=(inbox,))])
        assert result.messages[0].held

        # The model answers after 1.5 s; the open page shows the thread in Promotions without a reload.
        await expect(page.get_by_text("Summer sandals, 30% off")).to_be_visible(timeout=10_000)
        await expect(page.get_by_role("link", name="Promotions 1")).to_be_visible()
        await page.reload()
        await expect(page.get_by_text("Summer sandals, 30% off")).to_be_visible()
