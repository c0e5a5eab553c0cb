"""Issue 39 rule 4, as the attack: a user adds someone else's address (a bank's, another plmail user's) as an alias
and sends as it through their own SMTP account. An alias sends only once the confirmation link mailed to it was
opened; until then it is shown as not verified and every send is refused with a clear error, on the web and over
JMAP. Another plmail user's address is never taken."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from litestar import Litestar

from plmail.domain.enums import LabelRole
from plmail.services import Services
from tests.conftest import browser
from tests.integration.jmap.conftest import JmapBox
from tests.integration.sending.conftest import Outgoing, add_sending_account
from tests.support.dovecot import DovecotUser
from tests.support.jobs import run_queued
from tests.support.smtp import SmtpServer, confirmation_link
from tests.support.web import csrf_token, sign_in

BANK = "payments@bank.example"
USING = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail", "urn:ietf:params:jmap:submission"]
REFUSED = "You cannot send as this address yet: it is not verified."


@pytest.fixture
async def http(outgoing: Outgoing, client: httpx.AsyncClient) -> httpx.AsyncClient:
    assert (await sign_in(client, outgoing.user.email, "correct horse")).status_code == 200
    return client


async def _add_alias(http: httpx.AsyncClient, outgoing: Outgoing, address: str) -> httpx.Response:
    token = await csrf_token(http, "/settings/sending")
    return await http.post(f"/settings/sending/accounts/{outgoing.account_id}/aliases",
                           data={"email": address, "name": "Bank", "_csrf_token": token})


async def _send(http: httpx.AsyncClient, identity_id: int) -> httpx.Response:
    token = await csrf_token(http, "/compose")
    return await http.post("/compose", data={"identity_id": str(identity_id), "to": "victim@example.net",
                                             "subject": "Your account", "body_format": "plain",
                                             "text": "Please confirm your details.", "action": "send",
                                             "_csrf_token": token})


async def test_an_alias_nobody_confirmed_is_shown_unverified_and_refused_on_the_web(
        http: httpx.AsyncClient, outgoing: Outgoing, web_app: Litestar) -> None:
    added = await _add_alias(http, outgoing, BANK)
    assert added.status_code == 200 and f"A confirmation link went to {BANK}." in added.text
    card = added.text.split(f'aria-label="{BANK}"')[1].split("</article>")[0]
    assert "Not verified" in card and "Send the confirmation link again" in card
    # The confirmation went to the alias, from the account's own address, through the account's SMTP server.
    [mail] = await outgoing.smtp.arrival(1)
    assert mail.mail_from.lower() == outgoing.address.lower() and mail.rcpt_to == (BANK,)
    link = confirmation_link(mail, BANK)
    alias = next(i for i in await outgoing.services.identities.for_user(outgoing.user.id) if i.email == BANK)
    assert not alias.verified

    # Not offered in the composer's From, and a send as it (a forged form) is refused, saying why.
    assert BANK not in (await http.get("/compose")).text
    refused = await _send(http, alias.id)
    assert refused.status_code in (400, 409) and REFUSED in refused.text, refused.text[-2000:]
    await run_queued(outgoing.services, ("send_submission",))
    assert [m.rcpt_to for m in outgoing.smtp.received] == [(BANK,)]  # only the confirmation ever left

    # Opening the link only asks; a link preview or scanner confirms nothing.
    async with browser(web_app, "192.0.2.77") as reader:  # whoever reads that mailbox, not signed in
        path = link.split("plmail.test", 1)[1]
        asked = await reader.get(path)
        assert asked.status_code == 200 and f"{outgoing.address} asks to send mail as {BANK}" in asked.text
        assert not (await outgoing.services.identities.owned(outgoing.user.id, alias.id)).verified
        token = re.search(r'name="_csrf_token" value="([^"]+)"', asked.text)
        assert token is not None
        confirmed = await reader.post(path, data={"_csrf_token": token.group(1)})
        assert confirmed.status_code == 200 and f"mail can now be sent as {BANK}" in confirmed.text
        again = await reader.get(path)
        assert again.status_code == 404 and "not valid any more" in again.text  # a link works once

    sent = await _send(http, alias.id)
    assert sent.status_code == 200, sent.text[-2000:]
    await outgoing.services.db.execute("UPDATE submission SET send_at = now()")
    await run_queued(outgoing.services, ("send_submission",))
    assert outgoing.smtp.received[-1].mail_from == BANK


async def test_another_plmail_users_address_is_never_taken_as_an_alias(
        http: httpx.AsyncClient, outgoing: Outgoing) -> None:
    other = await outgoing.services.users.create_user("neighbour@example.org", "correct horse")
    refused = await _add_alias(http, outgoing, other.email)
    assert refused.status_code == 400 and "belongs to another plmail user" in refused.text
    assert other.email not in {i.email for i in await outgoing.services.identities.for_user(outgoing.user.id)}
    assert outgoing.smtp.received == []  # no confirmation went to them either


@pytest.fixture
async def phone(outgoing: Outgoing, client: httpx.AsyncClient) -> JmapBox:
    token = (await outgoing.services.app_passwords.create(outgoing.user.id, "Phone")).token
    return JmapBox(outgoing.services, client, outgoing.user, outgoing.account_id, token,
                   await outgoing.services.labels.role_ids(outgoing.user.id))


async def _calls(phone: JmapBox, *invocations: list[Any]) -> list[list[Any]]:
    response = await phone.request(invocations, using=USING)
    assert response.status_code == 200, response.text
    return response.json()["methodResponses"]  # type: ignore[no-any-return]


async def test_over_jmap_an_unverified_alias_is_refused_with_forbidden_from(phone: JmapBox, outgoing: Outgoing
                                                                            ) -> None:
    [[_, created, _]] = await _calls(phone, ["Identity/set", {"accountId": phone.account, "create": {
        "b": {"email": BANK, "name": "Bank"}}}, "0"])
    alias_id = created["created"]["b"]["id"]
    [mail] = await outgoing.smtp.arrival(1)
    assert mail.rcpt_to == (BANK,) and "/identities/confirm/" in confirmation_link(mail, BANK)
    [[_, neighbour, _]] = await _calls(phone, ["Identity/set", {"accountId": phone.account, "create": {
        "n": {"email": (await outgoing.services.users.create_user("n@example.org", "correct horse")).email}}}, "0"])
    assert neighbour["notCreated"]["n"]["type"] == "forbidden"
    assert "another plmail user" in neighbour["notCreated"]["n"]["description"]

    drafts = await phone.mailbox_id(LabelRole.DRAFTS)
    responses = await _calls(
        phone,
        ["Email/set", {"accountId": phone.account, "create": {"d": {
            "mailboxIds": {drafts: True}, "keywords": {"$draft": True}, "from": [{"email": BANK}],
            "to": [{"email": "victim@example.net"}], "subject": "Your account",
            "textBody": [{"partId": "t", "type": "text/plain"}], "bodyValues": {"t": {"value": "Confirm."}}}}},
         "0"],
        ["EmailSubmission/set", {"accountId": phone.account, "create": {"s": {"identityId": alias_id,
                                                                              "emailId": "#d"}}}, "1"])
    refusal = responses[1][1]["notCreated"]["s"]
    assert refusal["type"] == "forbiddenFrom" and REFUSED in refusal["description"]
    await run_queued(outgoing.services, ("send_submission",))
    assert [m.rcpt_to for m in outgoing.smtp.received] == [(BANK,)]


async def test_at_the_migration_the_accounts_own_address_stays_verified_and_typed_in_aliases_wait(
        outgoing: Outgoing) -> None:
    """Migration 2026-12-06T16:10 on identities as they were before verification existed (none marked)."""
    from plmail.db.migrations.plmail_2026_12_06t16_10_00_000000 import FORWARDS_SQL

    own = await outgoing.identity()
    typed = await outgoing.services.identities.add_alias(outgoing.user.id, outgoing.account_id, BANK,
                                                         confirm_base="http://plmail.test/")
    await outgoing.services.db.execute("UPDATE identity SET verified_at = NULL")
    for _ in range(2):  # safe to run twice
        await outgoing.services.db.execute(FORWARDS_SQL)
    assert (await outgoing.services.identities.owned(outgoing.user.id, own.id)).verified
    assert not (await outgoing.services.identities.owned(outgoing.user.id, typed.id)).verified


async def test_an_alias_added_before_anything_listed_the_accounts_identities_is_confirmed_from_its_own_address(
        services: Services, dovecot_user: DovecotUser, smtp: SmtpServer) -> None:
    """The first thing done with a new account is adding an alias: its own address still becomes its primary,
    verified identity, and the confirmation goes out from it (before, the alias stood in for the primary and no
    confirmation could be sent)."""
    user = await services.users.create_user("fresh@example.org", "correct horse")
    account_id = await add_sending_account(services, user, dovecot_user, smtp)
    alias = await services.identities.add_alias(user.id, account_id, BANK, confirm_base="http://plmail.test/")
    assert not alias.verified
    identities = await services.identities.for_account(user.id, account_id)
    own = f"{dovecot_user.name}@example.org"
    assert [(i.email, i.is_primary, i.verified) for i in identities if i.email == own] == [(own, True, True)]
    [mail] = await smtp.arrival(1)
    assert mail.mail_from.lower() == own and mail.rcpt_to == (BANK,) and confirmation_link(mail, BANK)
