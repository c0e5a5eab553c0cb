"""The sender verdict stored with each message (issue 30): judged at ingest from the account's trusted receiver,
read by "file into category", shown by the thread view and "Why is this here?"; an IMAP account's receiver is
learned from its Inbox and set by the user."""

from __future__ import annotations

import html
import json
from datetime import timedelta

import httpx
import pytest

from plmail.config import Settings
from plmail.domain.enums import ProviderKind
from plmail.domain.errors import NotFoundError, ValidationError
from plmail.domain.ingest import IngestedMessage
from plmail.mail.rules.model import RuleDraft
from tests.integration.imap_sync.test_cli import _run
from tests.integration.mail.conftest import Mailbox
from tests.support.mail import BASE_DATE
from tests.support.repos import account_rows
from tests.support.web import post_form, sign_in

GENUINE_PASS = "mx.example.net; dkim=pass header.d=bank.example; dmarc=pass header.from=bank.example"


def _raw(message_id: str, subject: str, sender: str, *results: str) -> bytes:
    """A message with Authentication-Results headers in this order, top first."""
    head = "".join(f"Authentication-Results: {r}\r\n" for r in results)
    return (f"{head}From: {sender}\r\nTo: reader@example.org\r\nSubject: {subject}\r\nMessage-ID: <{message_id}>\r\n"
            f"Date: Tue, 01 Dec 2026 10:00:00 +0000\r\nContent-Type: text/plain\r\n\r\nYour statement.\r\n").encode()


async def _stored(mailbox: Mailbox, rfc_id: str) -> dict[str, object]:
    value = await mailbox.services.db.fetchval("SELECT sender_auth FROM message WHERE rfc_message_id = $1", rfc_id)
    return dict(json.loads(value) if isinstance(value, str) else value)


async def _bank_rule(mailbox: Mailbox) -> None:
    labels = {r["id"] for r in await mailbox.services.db.fetch("SELECT id FROM label")}
    await mailbox.services.rules.save(mailbox.user.id, None, RuleDraft(
        "bank", None, {"from": "bank.example"}, [{"type": "fileIntoCategory", "category": "updates"}]),
        labels, {mailbox.account_id})


async def test_a_forged_bank_mail_is_not_filed_and_is_marked_while_the_real_one_is_filed(
    client: httpx.AsyncClient, mailbox: Mailbox,
) -> None:
    services = mailbox.services
    await _bank_rule(mailbox)
    real = _raw("real@bank.example", "Your statement", "Bank <alerts@bank.example>", GENUINE_PASS)
    # The attacker's relay wrote a pass on top; the account's own receiver, below it, failed DMARC.
    forged = _raw("forged@bank.example", "Verify your account", "Bank <alerts@bank.example>",
                  "relay.evil.example; dkim=pass header.d=bank.example; dmarc=pass header.from=bank.example",
                  "mx.example.net; dkim=pass header.d=evil.example; spf=pass smtp.mailfrom=x@evil.example; "
                  "dmarc=fail header.from=bank.example")
    result = await services.pipeline.ingest([mailbox.message(real), mailbox.message(forged)])
    assert len(result.messages) == 2
    assert await _stored(mailbox, "real@bank.example") == {
        "pass": True, "reason": "dmarc-pass", "domain": "bank.example", "receiver": "mx.example.net",
        "detail": "dmarc=pass header.from=bank.example"}
    forged_verdict = await _stored(mailbox, "forged@bank.example")
    assert forged_verdict["pass"] is False and forged_verdict["reason"] == "dmarc-failed"
    assert forged_verdict["withheld"] == "updates"  # the filter wanted it; the verdict said no

    rows = {r["rfc_message_id"]: r for r in await services.db.fetch(
        "SELECT rfc_message_id, rule_category, thread_id FROM message")}
    assert rows["real@bank.example"]["rule_category"] == "updates"
    assert rows["forged@bank.example"]["rule_category"] is None

    assert (await sign_in(client, mailbox.user.email, "correct horse")).status_code == 200
    forged_page = html.unescape((await client.get(f"/thread/{rows['forged@bank.example']['thread_id']}")).text)
    assert "plmail could not verify that this message came from bank.example." in forged_page
    assert "data-sender-unverified" in forged_page
    assert ("A filter would file it under Updates, but plmail could not verify that it came from bank.example, so "
            "it was not filed.") in forged_page
    real_page = html.unescape((await client.get(f"/thread/{rows['real@bank.example']['thread_id']}")).text)
    assert "data-sender-unverified" not in real_page
    assert "A filter filed it under Updates: plmail verified that it came from bank.example (DMARC passed)." in \
        real_page


async def test_file_into_category_reads_the_stored_verdict_and_judges_old_mail_once(mailbox: Mailbox) -> None:
    services, db = mailbox.services, mailbox.services.db
    await services.pipeline.ingest([mailbox.message(_raw("old@bank.example", "Old statement",
                                                         "alerts@bank.example", GENUINE_PASS))])
    # Mail stored before verdicts existed: the column is empty and the verdict is made on first use.
    await db.execute("UPDATE message SET sender_auth = NULL")
    await _bank_rule(mailbox)
    rule_id = (await services.rules.for_user(mailbox.user.id))[0].id
    assert await services.rules.apply_to_existing(mailbox.user.id, rule_id) == 1
    assert (await _stored(mailbox, "old@bank.example"))["reason"] == "dmarc-pass"
    assert await db.fetchval("SELECT rule_category FROM message") == "updates"

    # The stored verdict is the one every consumer reads: once it says "not verified", nothing files it again.
    await db.execute("UPDATE message SET rule_category = NULL, sender_auth = sender_auth || '{\"pass\": false}'")
    await services.rules.apply_to_existing(mailbox.user.id, rule_id)
    assert await db.fetchval("SELECT rule_category FROM message") is None


async def test_an_imap_accounts_receiver_is_learned_from_its_inbox_and_set_by_the_user(
    client: httpx.AsyncClient, mailbox: Mailbox,
) -> None:
    services = mailbox.services
    account = await account_rows(services).create(user_id=mailbox.user.id, provider_kind=ProviderKind.IMAP,
                                                  name="Home", email="reader@home.example")
    own = "mail.home.example; dkim=pass header.d={d}; dmarc=pass header.from={d}"
    batch = [mailbox.message(_raw(f"h{n}@x", f"Hello {n}", f"friend{n}@site{n}.example",
                                  own.format(d=f"site{n}.example"), "relay.other.example; spf=pass"),
                             account_id=account, received_at=BASE_DATE + timedelta(minutes=n))
             for n in range(3)]
    await services.pipeline.ingest(batch)
    settings = await services.sender_auth.receiver_settings(mailbox.user.id, account)
    assert settings.learned == frozenset({"mail.home.example"}) and settings.configured is None
    assert settings.awaiting_confirmation and not settings.fixed  # shown for the user to confirm
    assert (await _stored(mailbox, "h0@x"))["pass"] is True

    assert (await sign_in(client, mailbox.user.email, "correct horse")).status_code == 200
    page = html.unescape((await client.get(f"/accounts/{account}")).text)
    assert "Learned from the newest mail in your Inbox: mail.home.example. Is this your mail server?" in page
    confirmed = await post_form(client, f"/accounts/{account}/receivers", {"action": "confirm"},
                                token_from=f"/accounts/{account}")
    assert confirmed.status_code == 200  # followed the redirect back to the account
    assert (await services.sender_auth.receiver_settings(mailbox.user.id, account)).configured == frozenset(
        {"mail.home.example"})
    refused = await post_form(client, f"/accounts/{account}/receivers", {"authserv_ids": "mx.example.org; rm -rf"},
                              token_from=f"/accounts/{account}")
    assert refused.status_code == 400 and "A receiving server is named like mx.example.org." in refused.text

    await services.sender_auth.set_receivers(mailbox.user.id, account, ["relay.other.example"])
    verdicts = await services.sender_auth.verdicts([r["id"] for r in await services.db.fetch(
        "SELECT id FROM message WHERE account_id = $1", account)])
    assert {(v.passed, v.reason.value) for v in verdicts.values()} == {(False, "not-aligned")}  # judged again
    confirmed = await services.sender_auth.receiver_settings(mailbox.user.id, account)
    assert confirmed.configured == frozenset({"relay.other.example"}) and not confirmed.awaiting_confirmation


async def test_a_receiver_is_learned_across_batches_from_the_inbox_mail_already_stored(mailbox: Mailbox) -> None:
    services = mailbox.services
    account = await account_rows(services).create(user_id=mailbox.user.id, provider_kind=ProviderKind.IMAP,
                                                  name="Home", email="reader@home.example")
    own = "mail.home.example; dkim=pass header.d={d}; dmarc=pass header.from={d}"

    def arriving(n: int) -> IngestedMessage:
        return mailbox.message(_raw(f"b{n}@x", f"Batch {n}", f"friend{n}@site{n}.example",
                                    own.format(d=f"site{n}.example"), "relay.other.example; spf=pass"),
                               account_id=account, received_at=BASE_DATE + timedelta(minutes=n))

    await services.pipeline.ingest([arriving(0), arriving(1)])  # two agree: too few to learn from
    assert (await services.sender_auth.receiver_settings(mailbox.user.id, account)).learned == frozenset()
    await services.pipeline.ingest([arriving(2)])  # the third, with the two in the Inbox already
    assert (await services.sender_auth.receiver_settings(mailbox.user.id, account)).learned == frozenset(
        {"mail.home.example"})


async def test_pages_of_other_folders_between_do_not_keep_later_inbox_mail_from_teaching(mailbox: Mailbox) -> None:
    """A first import stores pages of every folder in turn; after an Inbox that taught nothing yet, pages without
    Inbox mail skip the lookup, and the next Inbox mail still teaches with what is stored."""
    services = mailbox.services
    account = await account_rows(services).create(user_id=mailbox.user.id, provider_kind=ProviderKind.IMAP,
                                                  name="Home", email="reader@home.example")
    own = "mail.home.example; dkim=pass header.d={d}; dmarc=pass header.from={d}"
    archive = await services.labels.find_or_create(mailbox.user.id, "Archive 2019")

    def arriving(n: int, *, in_inbox: bool = True) -> IngestedMessage:
        return mailbox.message(_raw(f"c{n}@x", f"Page {n}", f"friend{n}@site{n}.example",
                                    own.format(d=f"site{n}.example"), "relay.other.example; spf=pass"),
                               account_id=account, received_at=BASE_DATE + timedelta(minutes=n),
                               label_ids=(mailbox.inbox,) if in_inbox else (archive,))

    await services.pipeline.ingest([arriving(0), arriving(1)])  # two agree: too few to learn from
    for page in range(2, 5):  # the archive's pages: another folder, the same two in the Inbox
        await services.pipeline.ingest([arriving(page, in_inbox=False)])
        assert (await services.sender_auth.receiver_settings(mailbox.user.id, account)).learned == frozenset()
    await services.pipeline.ingest([arriving(5)])  # the third in the Inbox
    assert (await services.sender_auth.receiver_settings(mailbox.user.id, account)).learned == frozenset(
        {"mail.home.example"})


async def test_a_gmail_account_believes_only_google_and_a_stranger_cannot_read_the_settings(mailbox: Mailbox) -> None:
    services = mailbox.services
    account = await account_rows(services).create(user_id=mailbox.user.id, provider_kind=ProviderKind.GMAIL,
                                                  name="Gmail", email="reader@gmail.example")
    google = ("mx.google.com; dkim=pass header.i=@bank.example header.s=s1; spf=pass smtp.mailfrom=a@bank.example; "
              "dmarc=pass (p=REJECT sp=REJECT dis=NONE) header.from=bank.example")
    await services.pipeline.ingest([
        mailbox.message(_raw("g1@bank.example", "Statement", "alerts@bank.example", google), account_id=account),
        mailbox.message(_raw("g2@bank.example", "Statement", "alerts@bank.example", GENUINE_PASS),
                        account_id=account)])
    assert (await _stored(mailbox, "g1@bank.example"))["receiver"] == "mx.google.com"
    assert (await _stored(mailbox, "g2@bank.example"))["reason"] == "no-trusted-header"
    settings = await services.sender_auth.receiver_settings(mailbox.user.id, account)
    assert settings.fixed and settings.believed == frozenset({"mx.google.com"})
    stranger = await services.users.create_user("stranger@example.org", "correct horse")
    with pytest.raises(NotFoundError):
        await services.sender_auth.receiver_settings(stranger.id, account)
    with pytest.raises(ValidationError):  # Google's server is known; there is nothing to set
        await services.sender_auth.set_receivers(mailbox.user.id, account, ["mx.evil.example"])


async def test_the_administrator_sets_an_accounts_receiving_servers_from_the_command_line(
    mailbox: Mailbox, settings: Settings, database_url: str,
) -> None:
    services = mailbox.services
    account = await account_rows(services).create(user_id=mailbox.user.id, provider_kind=ProviderKind.IMAP,
                                                  name="Home", email="reader@home.example")
    set_ = _run(settings, database_url, "account", "receivers", "--account", str(account), "--set",
                "MX1.home.example, mx2.home.example")
    assert set_.returncode == 0, set_.stderr
    assert "believes: mx1.home.example, mx2.home.example (set)" in set_.stdout
    assert (await services.sender_auth.receiver_settings(mailbox.user.id, account)).configured == frozenset(
        {"mx1.home.example", "mx2.home.example"})
    bad = _run(settings, database_url, "account", "receivers", "--account", str(account), "--set", "mx;evil")
    assert bad.returncode != 0 and "A receiving server is named like mx.example.org." in bad.stderr
    learn = _run(settings, database_url, "account", "receivers", "--account", str(account), "--learn")
    assert learn.returncode == 0 and learn.stdout.strip() == f"account {account} believes: none yet (not known)"
    gmail = await account_rows(services).create(user_id=mailbox.user.id, provider_kind=ProviderKind.GMAIL,
                                                name="Gmail", email="reader@gmail.example")
    fixed = _run(settings, database_url, "account", "receivers", "--account", str(gmail), "--set", "mx.example.org")
    assert fixed.returncode != 0 and "there is nothing to set" in fixed.stderr
