"""A copy of mail sent elsewhere kept in a provider account's Sent (issue 35): Email/import and Email/set create
into an IMAP account's Sent, by the account's own mailbox id and through the unified account, land in plmail's
Sent and, by the filing job, once in the server's Sent folder (APPEND with \\Seen); the next sync adopts the
server's copy instead of storing it twice. A server that cannot be reached loses nothing: the copy stays in
plmail, the account says why, and the job files it when it runs again."""

from __future__ import annotations

import socket
from typing import Any

import httpx
import pytest

from plmail.domain.enums import LabelRole, ProviderKind
from plmail.providers.imap import ImapConnectionError
from tests.integration.jmap.conftest import JmapBox
from tests.integration.sending.conftest import Outgoing
from tests.support.jobs import queued, run_queued
from tests.support.mail import make_message
from tests.support.repos import account_rows

FILING = ("file_kept_copy",)


@pytest.fixture
async def phone(outgoing: Outgoing, client: httpx.AsyncClient) -> JmapBox:
    """The IMAP account's owner on a JMAP client, with a local archive on the very same address beside it (so the
    unified account has two places it could keep a copy and must choose the one that sends as the From)."""
    archive = await account_rows(outgoing.services).create(
        user_id=outgoing.user.id, provider_kind=ProviderKind.LOCAL, name="Old mail", email=outgoing.address)
    token = (await outgoing.services.app_passwords.create(outgoing.user.id, "Phone")).token
    box = JmapBox(outgoing.services, client, outgoing.user, outgoing.account_id, token,
                  await outgoing.services.labels.role_ids(outgoing.user.id))
    box.archive_id = archive  # type: ignore[attr-defined]
    return box


async def _call(phone: JmapBox, account: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    response = await phone.request([[name, {"accountId": account, **arguments}, "0"]])
    assert response.status_code == 200, response.text
    [[answered, result, _]] = response.json()["methodResponses"]
    assert answered == name, result
    return dict(result)


async def _mailbox(phone: JmapBox, account: str, role: str) -> str:
    listed = await _call(phone, account, "Mailbox/get", {"ids": None})
    return str(next(m["id"] for m in listed["list"] if m["role"] == role))


async def _upload(phone: JmapBox, account: str, raw: bytes) -> str:
    uploaded = await phone.http.post(f"/jmap/upload/{account}", content=raw,
                                     headers={**phone.headers, "Content-Type": "message/rfc822"})
    assert uploaded.status_code == 201, uploaded.text
    return str(uploaded.json()["blobId"])


def _copies_at_server(outgoing: Outgoing, folder: str, message_id: str) -> list[set[str]]:
    """The flags of each message in the server's folder that carries this Message-ID (a peer connection); \\Recent
    is the server's session flag, not one plmail sets."""
    found = []
    with outgoing.mail.peer() as peer:
        for uid in peer.uids(folder):
            if f"<{message_id}>".encode() in peer.raw(uid, folder).split(b"\r\n\r\n", 1)[0]:
                found.append(peer.flags(uid, folder) - {"\\Recent"})
    return found


async def _stored(phone: JmapBox, message_id: str) -> list[int]:
    rows = await phone.services.db.fetch("SELECT id FROM message WHERE rfc_message_id = $1 ORDER BY id", message_id)
    return [int(r["id"]) for r in rows]


async def _in_sent_after_sync(phone: JmapBox, outgoing: Outgoing, account: str, email_id: str,
                              since: str) -> None:
    """After the next sync: one message, in Sent, $seen, and Email/changes reported it once."""
    sent = await _mailbox(phone, account, "sent")
    await outgoing.sync()
    got = await _call(phone, account, "Email/get", {"ids": [email_id], "properties": ["mailboxIds", "keywords"]})
    assert got["notFound"] == [], got
    [email] = got["list"]
    assert email["mailboxIds"] == {sent: True}
    assert email["keywords"].get("$seen") is True and "$draft" not in email["keywords"]
    changes = await _call(phone, account, "Email/changes", {"sinceState": since})
    assert changes["created"] == [email_id], changes
    assert email_id not in changes["destroyed"]


async def test_import_into_the_imap_accounts_sent_files_it_at_the_server_once(
        phone: JmapBox, outgoing: Outgoing) -> None:
    """RFC 8621 §4.8 Email/import: "The Email/import method adds messages to the set of Emails in an account" and
    "mailboxIds: Id[Boolean] The ids of the Mailboxes to assign this Email to." Imported into the IMAP account's
    Sent (by that account's mailbox id), the email is in plmail's Sent and once in the server's Sent, read; after
    the next sync it is still one email in Sent, and Email/changes named it created once."""
    account = phone.account
    sent = await _mailbox(phone, account, "sent")
    since = (await _call(phone, account, "Email/get", {"ids": []}))["state"]
    raw = make_message(message_id="sent-elsewhere@example.org", subject="Sent from the laptop",
                       sender=f"Owner <{outgoing.address}>", to=["Bea <bea@example.net>"], body="Sent elsewhere.\n")
    blob = await _upload(phone, account, raw)
    imported = await _call(phone, account, "Email/import", {"emails": {"k": {
        "blobId": blob, "mailboxIds": {sent: True}, "keywords": {"$seen": True}}}})
    assert imported["notCreated"] is None, imported["notCreated"]
    email_id = imported["created"]["k"]["id"]
    assert await _stored(phone, "sent-elsewhere@example.org") == [int(email_id)]
    assert _copies_at_server(outgoing, "Sent", "sent-elsewhere@example.org") == []  # the job files it
    assert await run_queued(phone.services, FILING) == ["file_kept_copy"]
    assert _copies_at_server(outgoing, "Sent", "sent-elsewhere@example.org") == [{"\\Seen"}]
    await _in_sent_after_sync(phone, outgoing, account, email_id, since)
    assert await _stored(phone, "sent-elsewhere@example.org") == [int(email_id)]
    assert _copies_at_server(outgoing, "Sent", "sent-elsewhere@example.org") == [{"\\Seen"}]


async def test_create_in_the_unified_sent_goes_to_the_account_that_sends_as_its_from(
        phone: JmapBox, outgoing: Outgoing) -> None:
    """RFC 8621 §4.6 Email/set create: "The server MUST create the Email with the given properties" — "mailboxIds"
    naming the unified account's Sent. The From is the IMAP account's address (a local archive has it too), so
    the copy is kept by the IMAP account, whose server's Sent gets it once; after the sync it is one email."""
    account = phone.primary
    sent = await _mailbox(phone, account, "sent")
    since = (await _call(phone, account, "Email/get", {"ids": []}))["state"]
    created = await _call(phone, account, "Email/set", {"create": {"c": {
        "mailboxIds": {sent: True}, "keywords": {"$seen": True}, "messageId": ["written-elsewhere@example.org"],
        "from": [{"email": outgoing.address}], "to": [{"email": "bea@example.net"}], "subject": "Written elsewhere",
        "textBody": [{"partId": "t"}], "bodyValues": {"t": {"value": "Hello Bea.\n"}}}}})
    assert created["notCreated"] is None, created["notCreated"]
    email_id = created["created"]["c"]["id"]
    owner = await phone.services.db.fetchval("SELECT account_id FROM message WHERE id = $1", int(email_id))
    assert owner == outgoing.account_id
    await run_queued(phone.services, FILING)
    assert _copies_at_server(outgoing, "Sent", "written-elsewhere@example.org") == [{"\\Seen"}]
    await _in_sent_after_sync(phone, outgoing, account, email_id, since)
    assert await _stored(phone, "written-elsewhere@example.org") == [int(email_id)]


async def test_import_into_the_unified_sent_routes_by_from(phone: JmapBox, outgoing: Outgoing) -> None:
    """RFC 8621 §4.8 Email/import "adds messages to the set of Emails in an account", here the unified account's
    Sent: the message from the IMAP account's address is kept by that account and filed in its server's Sent."""
    account = phone.primary
    sent = await _mailbox(phone, account, "sent")
    raw = make_message(message_id="routed-copy@example.org", subject="Routed", sender=outgoing.address,
                       to=["bea@example.net"])
    imported = await _call(phone, account, "Email/import", {"emails": {"k": {
        "blobId": await _upload(phone, account, raw), "mailboxIds": {sent: True}}}})
    assert imported["notCreated"] is None, imported["notCreated"]
    email_id = int(imported["created"]["k"]["id"])
    assert await phone.services.db.fetchval("SELECT account_id FROM message WHERE id = $1", email_id) \
        == outgoing.account_id
    await run_queued(phone.services, FILING)
    assert _copies_at_server(outgoing, "Sent", "routed-copy@example.org") == [{"\\Seen"}]
    await outgoing.sync()
    assert await _stored(phone, "routed-copy@example.org") == [email_id]


async def test_a_server_that_cannot_be_reached_loses_nothing_and_the_filing_is_tried_again(
        phone: JmapBox, outgoing: Outgoing) -> None:
    """RFC 8621 §4.8 Email/import: "adds messages to the set of Emails in an account" — it is added even while the
    mail server cannot be reached: the email stays in plmail's Sent, the account says the server's copy is
    missing, and the queued job, run again once the server answers, files it once."""
    account = phone.account
    sent = await _mailbox(phone, account, "sent")
    raw = make_message(message_id="offline-copy@example.org", subject="While the server was away",
                       sender=outgoing.address, to=["bea@example.net"])
    services = phone.services
    with socket.socket() as closed:  # a port nothing listens on: every connection is refused
        closed.bind(("127.0.0.1", 0))
        dead_port = closed.getsockname()[1]
    real_port = await services.db.fetchval("SELECT (settings #>> '{imap,port}')::int FROM account WHERE id = $1",
                                           outgoing.account_id)
    await _point_imap_at(phone, outgoing.account_id, dead_port)
    imported = await _call(phone, account, "Email/import", {"emails": {"k": {
        "blobId": await _upload(phone, account, raw), "mailboxIds": {sent: True}}}})
    assert imported["notCreated"] is None, imported["notCreated"]
    email_id = int(imported["created"]["k"]["id"])
    [(_, job)] = await queued(services, FILING)
    with pytest.raises(ImapConnectionError) as failed:
        await run_queued(services, FILING)
    assert failed.value.retryable  # raised out of the job: the queue tries it again
    detail = await services.db.fetchval("SELECT status_detail FROM account WHERE id = $1", outgoing.account_id)
    assert "Sent" in detail and "tries again" in detail
    got = await _call(phone, account, "Email/get", {"ids": [str(email_id)], "properties": ["mailboxIds"]})
    assert got["list"][0]["mailboxIds"] == {sent: True}

    await _point_imap_at(phone, outgoing.account_id, real_port)
    await services.drafts.file_kept_copy(**job)  # the queue's next try
    await services.drafts.file_kept_copy(**job)  # a try after it succeeded files nothing twice
    assert _copies_at_server(outgoing, "Sent", "offline-copy@example.org") == [{"\\Seen"}]
    await outgoing.sync()
    assert await _stored(phone, "offline-copy@example.org") == [email_id]


async def _point_imap_at(phone: JmapBox, account_id: int, port: int) -> None:
    """The account's server settings changed (a parked connection of the old settings is not used again)."""
    await phone.services.db.execute(
        "UPDATE account SET settings = jsonb_set(settings, '{imap,port}', to_jsonb($2::int)), updated_at = now() "
        "WHERE id = $1", account_id, port)


async def test_other_folders_of_a_provider_account_still_refuse_a_non_draft(phone: JmapBox) -> None:
    """RFC 8621 §4.8: a server may refuse an import with "forbidden" (RFC 8620 §5.3 SetError: "the action would
    violate an ACL or other permissions policy"): the IMAP account's Inbox keeps no imported mail, since plmail files
    only Drafts and Sent copies at the server; Sent together with another mailbox is refused too."""
    account = phone.account
    inbox, sent = await _mailbox(phone, account, "inbox"), await _mailbox(phone, account, "sent")
    raw = make_message(message_id="not-kept@example.net", sender="ann@example.net")
    blob = await _upload(phone, account, raw)
    result = await _call(phone, account, "Email/import", {"emails": {
        "i": {"blobId": blob, "mailboxIds": {inbox: True}},
        "b": {"blobId": blob, "mailboxIds": {inbox: True, sent: True}}}})
    assert result["created"] is None
    assert {k: v["type"] for k, v in result["notCreated"].items()} == {"i": "forbidden", "b": "forbidden"}
    assert LabelRole.SENT in phone.roles
