"""The "file into category" action moves the conversation into that tab, on the web and over JMAP.

The seed: the verdict lives in the message's rule category, the conversation resolves it newest-wins like the
built-in category, a message is filed only when its sender authentication passed, and the user's instruction
outranks the provider's categories.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import httpx

from plmail.domain.enums import Category
from plmail.mail.rules.model import RuleDraft
from tests.integration.mail.conftest import Mailbox
from tests.support.mail import BASE_DATE, make_message
from tests.support.web import sign_in

DMARC_PASS = "mx.example.net; dkim=pass header.d=bank.example; spf=pass smtp.mailfrom=bank.example; dmarc=pass"
DMARC_FAIL = "mx.example.net; dkim=fail; spf=softfail; dmarc=fail"
CATEGORIES = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail", "urn:plmail:params:jmap:categories"]


def _subjects(page: httpx.Response) -> list[str]:
    return re.findall(r'<span class="subject">([^<]+)</span>', page.text)


async def _jmap(client: httpx.AsyncClient, token: str, account: int, name: str, arguments: dict[str, Any]
                ) -> dict[str, Any]:
    response = await client.post("/jmap/api", headers={"Authorization": f"Bearer {token}"}, json={
        "using": CATEGORIES, "methodCalls": [[name, {"accountId": str(account), **arguments}, "c0"]]})
    assert response.status_code == 200, response.text
    result_name, result, _ = response.json()["methodResponses"][0]
    assert result_name == name, result
    return dict(result)


async def test_a_filed_conversation_shows_in_the_rules_tab_on_the_web_and_over_jmap(
    client: httpx.AsyncClient, mailbox: Mailbox,
) -> None:
    services = mailbox.services
    labels = {r["id"] for r in await services.db.fetch("SELECT id FROM label")}
    await services.rules.save(mailbox.user.id, None, RuleDraft(
        "bank", None, {"from": "bank.example"}, [{"type": "fileIntoCategory", "category": "updates"}]),
        labels, {mailbox.account_id})
    statement = make_message(message_id="s1@bank.example", subject="Statement", sender="alerts@bank.example",
                             headers={"Authentication-Results": DMARC_PASS}, date=BASE_DATE)
    # Gmail put this one under Promotions; the user's rule outranks the provider's categories.
    offer = make_message(message_id="o1@bank.example", subject="Card offer", sender="offers@bank.example",
                         headers={"Authentication-Results": DMARC_PASS}, date=BASE_DATE + timedelta(minutes=1))
    forged = make_message(message_id="f1@bank.example", subject="Verify now", sender="alerts@bank.example",
                          headers={"Authentication-Results": DMARC_FAIL}, date=BASE_DATE + timedelta(minutes=2))
    await services.pipeline.ingest([
        mailbox.message(statement), mailbox.message(offer, provider_labels=("INBOX", "CATEGORY_PROMOTIONS")),
        mailbox.message(forged)])
    # An older message of the statement's conversation, synced later and not filed, does not drag it back:
    # the newest message decides, whatever the order of arrival.
    earlier = make_message(message_id="s0@bank.example", subject="Re: Statement", sender="me@reader.example",
                           in_reply_to="s1@bank.example", references=["s1@bank.example"],
                           date=BASE_DATE - timedelta(days=1))
    await services.pipeline.ingest([mailbox.message(earlier)])

    assert (await sign_in(client, mailbox.user.email, "correct horse")).status_code == 200
    updates = await client.get("/?tab=updates")
    assert sorted(_subjects(updates)) == ["Card offer", "Statement"]
    assert _subjects(await client.get("/?tab=primary")) == ["Verify now"]  # authentication failed: not filed
    assert _subjects(await client.get("/?tab=promotions")) == []
    tabs = updates.text.split('aria-label="Inbox tabs"')[1].split("</nav>")[0]
    assert re.search(r'Updates <span class="count">2</span>', tabs)

    token = (await services.app_passwords.create(mailbox.user.id, "Phone")).token
    ids = {r["subject"]: str(r["id"]) for r in await services.db.fetch("SELECT id, subject FROM message")}
    query = await _jmap(client, token, mailbox.account_id, "Email/query",
                        {"filter": {"threadCategory": "updates"}, "collapseThreads": True})
    assert sorted(query["ids"]) == sorted([ids["Card offer"], ids["Statement"]])
    primary = await _jmap(client, token, mailbox.account_id, "Email/query", {"filter": {"threadCategory": "primary"}})
    assert primary["ids"] == [ids["Verify now"]]
    emails = await _jmap(client, token, mailbox.account_id, "Email/get",
                         {"ids": [ids["Statement"], ids["Verify now"]], "properties": ["threadId", "category"]})
    by_id = {e["id"]: e for e in emails["list"]}
    assert (by_id[ids["Statement"]]["category"], by_id[ids["Verify now"]]["category"]) == ("updates", "primary")
    threads = await _jmap(client, token, mailbox.account_id, "Thread/get",
                          {"ids": [by_id[ids["Statement"]]["threadId"]], "properties": ["category"]})
    assert threads["list"][0]["category"] == "updates"


async def test_a_newer_unfiled_message_takes_the_conversation_out_of_the_tab(mailbox: Mailbox) -> None:
    """Newest wins, as for the built-in category: the reply of a friend is General, and so is the conversation."""
    services, db = mailbox.services, mailbox.services.db
    labels = {r["id"] for r in await db.fetch("SELECT id FROM label")}
    await services.rules.save(mailbox.user.id, None, RuleDraft(
        "bank", None, {"from": "bank.example"}, [{"type": "fileIntoCategory", "category": "updates"}]),
        labels, {mailbox.account_id})
    first = await services.pipeline.ingest([mailbox.message(make_message(
        message_id="n1@bank.example", subject="Statement", sender="alerts@bank.example",
        headers={"Authentication-Results": DMARC_PASS}))])
    thread_id = first.messages[0].thread_id

    async def tabs() -> list[str]:
        return [tab.value for tab in (Category.GENERAL, Category.UPDATES)
                if any(t.id == thread_id for t in (await services.reader.inbox(mailbox.user.id, tab)).threads)]

    assert await tabs() == ["updates"]
    await services.pipeline.ingest([mailbox.message(make_message(
        message_id="n2@x", subject="Re: Statement", sender="friend@example.org", in_reply_to="n1@bank.example",
        references=["n1@bank.example"], date=BASE_DATE + timedelta(hours=1)))])
    assert await tabs() == ["primary"]
    changes = [c for c in await mailbox.changes("Thread") if c[1] == str(thread_id)]
    assert len(changes) == 2  # announced when filed and again when it moved
