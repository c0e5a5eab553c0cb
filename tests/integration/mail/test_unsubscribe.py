"""Unsubscribe (RFC 2369, RFC 8058) and Not spam on a conversation's page, over HTTP through the real app.

A loopback HTTP server stands in for the list's one-click endpoint; plmail may reach it only because the tests-only
PLMAIL_TEST_FETCH_ALLOW names loopback (without it the same request is refused, shown below)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest

from plmail.config import Settings
from plmail.domain.enums import LabelRole, ProviderKind
from plmail.mail.ingest import parse_message
from plmail.mail.unsubscribe import mailto_parts, unsubscribe_offer
from plmail.providers.network import BlockedAddress, GuardedOneClick
from plmail.services import Services
from tests.support.fakes.provider_site import ProviderSite
from tests.support.fakes.server import FakeServer
from tests.support.mail import make_message
from tests.support.repos import account_rows
from tests.support.web import csrf_token, sign_in

PASSWORD = "correct horse"


@pytest.fixture(scope="module")
def site() -> Iterator[FakeServer[ProviderSite]]:
    with FakeServer(ProviderSite()) as server:
        yield server


@pytest.fixture
def settings(settings: Settings) -> Settings:
    env = {"PLMAIL_DATA_DIR": str(settings.data_dir), "PLMAIL_DATABASE_URL": settings.database_url or "",
           "PLMAIL_TEST_FETCH_ALLOW": "127.0.0.1/32"}
    return dataclasses.replace(Settings.from_env(env), shutdown_grace_seconds=2)


async def _mailbox(services: Services, client: httpx.AsyncClient, headers: dict[str, str], *,
                   spam: bool = False) -> tuple[int, int]:
    """Eve signed in, with one list message in her inbox (or Spam); its (thread id, message id)."""
    user = await services.users.create_user("eve@example.org", PASSWORD)
    account = await account_rows(services).create(user_id=user.id, provider_kind=ProviderKind.LOCAL, name="Home",
                                                  email="eve@example.org")
    roles = await services.labels.role_ids(user.id)
    label = roles[LabelRole.SPAM if spam else LabelRole.INBOX]
    raw = make_message(message_id="news1@lists.example", subject="Weekly news", sender="News <news@lists.example>",
                       to=["eve@example.org"], headers=headers)
    result = await services.pipeline.ingest([parse_message(raw, account_id=account, label_ids=(label,),
                                                           received_at=datetime.now(UTC))])
    await sign_in(client, "eve@example.org", PASSWORD)
    message = result.messages[0]
    return message.thread_id or 0, message.id


async def test_one_click_posts_once_with_rfc_8058_body_and_the_button_then_says_unsubscribed(
    client: httpx.AsyncClient, services: Services, site: FakeServer[ProviderSite],
) -> None:
    url = f"{site.url}/unsubscribe/t-one"
    thread_id, message_id = await _mailbox(services, client, {
        "List-Id": "Weekly news <news.lists.example>",
        "List-Unsubscribe": f"<mailto:leave@lists.example?subject=stop>, <{url}>",
        "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"})
    page = await client.get(f"/thread/{thread_id}")
    assert f'action="/message/{message_id}/unsubscribe"' in page.text and ">Unsubscribe</button>" in page.text
    token = await csrf_token(client, f"/thread/{thread_id}")
    for _click in range(2):  # asked once: a second click (another tab) must not post again
        done = await client.post(f"/message/{message_id}/unsubscribe", data={"_csrf_token": token})
        assert done.status_code == 200 and "Unsubscribed" in done.text
        assert ">Unsubscribe</button>" not in done.text
    mine = [p for p in site.app.posts if p.path == "/unsubscribe/t-one"]
    assert len(mine) == 1
    # RFC 8058 §3.1: "the POST body MUST contain ... List-Unsubscribe=One-Click"
    assert mine[0].body == b"List-Unsubscribe=One-Click"
    assert mine[0].content_type == "application/x-www-form-urlencoded"


async def test_a_refused_one_click_is_not_recorded_and_says_so(
    client: httpx.AsyncClient, services: Services, site: FakeServer[ProviderSite],
) -> None:
    thread_id, message_id = await _mailbox(services, client, {
        "List-Unsubscribe": f"<{site.url}/no-such-endpoint>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"})
    token = await csrf_token(client, f"/thread/{thread_id}")
    failed = await client.post(f"/message/{message_id}/unsubscribe", data={"_csrf_token": token})
    assert "did not take the unsubscribe request" in failed.text
    assert ">Unsubscribe</button>" in failed.text  # not recorded: the person can try again


async def test_the_guard_refuses_loopback_without_the_test_allowance(site: FakeServer[ProviderSite]) -> None:
    before = len(site.app.posts)
    with pytest.raises(BlockedAddress):
        await GuardedOneClick().post_one_click(f"https://127.0.0.1:{site.port}/unsubscribe/t-guard")
    with pytest.raises(BlockedAddress):
        await GuardedOneClick().post_one_click("https://localhost/unsubscribe/t-guard")
    assert len(site.app.posts) == before


def test_the_way_chosen_follows_the_rfcs() -> None:
    both = {"List-Unsubscribe": "<mailto:l@x.example>, <https://x.example/u>",
            "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}
    assert unsubscribe_offer(both, "a@x.example").method == "one_click"  # type: ignore[union-attr]
    no_post = {"List-Unsubscribe": "<https://x.example/u>, <mailto:l@x.example>"}
    offer = unsubscribe_offer(no_post, "a@x.example")
    assert offer is not None and (offer.method, offer.target) == ("mailto", "mailto:l@x.example")
    only_web = {"List-Unsubscribe": "<https://x.example/u>", "List-Unsubscribe-Post": "something else"}
    assert unsubscribe_offer(only_web, "a@x.example").method == "link"  # type: ignore[union-attr]
    # RFC 8058 §3.1: one-click needs an https URI; plain http is only a page to open
    plain = {"List-Unsubscribe": "<http://x.example/u>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}
    assert unsubscribe_offer(plain, "a@x.example").method == "link"  # type: ignore[union-attr]
    assert unsubscribe_offer({"List-Unsubscribe": "<ftp://x.example/u>"}, "a@x.example") is None
    assert unsubscribe_offer({}, "a@x.example") is None
    # RFC 6068: hfields; the subject defaults to "unsubscribe"
    assert mailto_parts("mailto:leave%2Bme@x.example?subject=stop%20it&body=now") == ("leave+me@x.example",
                                                                                       "stop it", "now")
    assert mailto_parts("mailto:l@x.example")[1] == "unsubscribe"


async def test_a_conversation_in_spam_offers_not_spam_and_it_goes_back_to_the_inbox(
    client: httpx.AsyncClient, services: Services,
) -> None:
    thread_id, _message_id = await _mailbox(services, client, {"List-Unsubscribe": "<mailto:l@lists.example>"},
                                            spam=True)
    page = await client.get(f"/thread/{thread_id}")
    assert 'value="not_spam"' in page.text and "Not spam" in page.text
    assert ">Unsubscribe</button>" not in page.text  # never confirm an address to a spammer
    token = await csrf_token(client, f"/thread/{thread_id}")
    moved = await client.post("/actions", data={"_csrf_token": token, "action": "not_spam",
                                                "thread_ids": str(thread_id), "next": f"/thread/{thread_id}"})
    assert moved.status_code == 200 and 'value="not_spam"' not in moved.text
    inbox = await client.get("/search", params={"q": "in:inbox"})  # a list's mail sorts into a tab of its own
    assert "Weekly news" in inbox.text
    assert "Weekly news" not in (await client.get("/search", params={"q": "in:spam"})).text
