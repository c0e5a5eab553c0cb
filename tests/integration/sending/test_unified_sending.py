"""Sending from the unified account (issue 35): a user with an IMAP account and a local archive on the same
address sees one identity, drafts and imports land in the account that can send them, a client can import then
submit, the archive's address is refused at submission time, and undoStatus tells what the transport did."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from plmail.domain.enums import LabelRole, ProviderKind
from tests.integration.jmap.conftest import JmapBox
from tests.integration.sending.conftest import Outgoing
from tests.support.jobs import run_queued
from tests.support.mail import make_message
from tests.support.repos import account_rows

USING = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail", "urn:ietf:params:jmap:submission"]


@pytest.fixture
async def phone(outgoing: Outgoing, client: httpx.AsyncClient) -> JmapBox:
    """The IMAP account's owner, with a local archive on the very same address beside it."""
    archive = await account_rows(outgoing.services).create(
        user_id=outgoing.user.id, provider_kind=ProviderKind.LOCAL, name="Old mail", email=outgoing.address)
    token = (await outgoing.services.app_passwords.create(outgoing.user.id, "Phone")).token
    box = JmapBox(outgoing.services, client, outgoing.user, outgoing.account_id, token,
                  await outgoing.services.labels.role_ids(outgoing.user.id))
    box.archive_id = archive  # type: ignore[attr-defined]
    return box


async def _calls(phone: JmapBox, *invocations: list[Any]) -> list[list[Any]]:
    response = await phone.request(invocations, using=USING)
    assert response.status_code == 200, response.text
    return list(response.json()["methodResponses"])


async def _unified(phone: JmapBox, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    [[answered, result, _]] = await _calls(phone, [name, {"accountId": phone.primary, **arguments}, "0"])
    assert answered == name, result
    return dict(result)


async def _unified_mailbox(phone: JmapBox, role: str) -> str:
    listed = await _unified(phone, "Mailbox/get", {"ids": None})
    return str(next(m["id"] for m in listed["list"] if m["role"] == role))


async def test_one_identity_per_address_routed_to_the_account_that_sends(phone: JmapBox, outgoing: Outgoing) -> None:
    """RFC 8621 §6: an Identity "stores information about an email address or domain the user may send from";
    the archive cannot send, so of the two identical addresses one Identity remains, the IMAP account's (its id the
    stored row's, the same after a restart)."""
    listed = await _unified(phone, "Identity/get", {"ids": None})
    imap_identity = await outgoing.identity()
    assert [(i["id"], i["email"]) for i in listed["list"]] == [(str(imap_identity.id), outgoing.address)]
    again = await _unified(phone, "Identity/get", {"ids": None})
    assert again["list"] == listed["list"]


async def test_the_archive_identity_is_refused_at_submission_not_later(phone: JmapBox, outgoing: Outgoing) -> None:
    """RFC 8621 §7.5 forbiddenFrom: "The server does not permit the user to send a message with the From header
    field of the message to be sent." An address whose account has no mail server is refused when the client
    submits, so the client is told, instead of a submission that is accepted and never goes."""
    archive = str(phone.archive_id)  # type: ignore[attr-defined]
    [[_, identities, _]] = await _calls(phone, ["Identity/get", {"accountId": archive, "ids": None}, "0"])
    [own] = [i for i in identities["list"] if i["email"] == outgoing.address]
    [[_, mailboxes, _]] = await _calls(phone, ["Mailbox/get", {"accountId": archive, "ids": None}, "0"])
    drafts = next(m["id"] for m in mailboxes["list"] if m["role"] == "drafts")
    responses = await _calls(phone, ["Email/set", {"accountId": archive, "create": {"d": {
        "mailboxIds": {drafts: True}, "keywords": {"$draft": True}, "from": [{"email": outgoing.address}],
        "to": [{"email": "bea@example.net"}], "subject": "From the archive",
        "textBody": [{"partId": "t"}], "bodyValues": {"t": {"value": "x"}}}}}, "0"],
        ["EmailSubmission/set", {"accountId": archive, "create": {"s": {"identityId": own["id"], "emailId": "#d"}}},
         "1"])
    submission = responses[1][1]
    assert submission["created"] is None
    assert submission["notCreated"]["s"]["type"] == "forbiddenFrom"
    assert "cannot send" in submission["notCreated"]["s"]["description"]
    assert await phone.services.db.fetchval("SELECT count(*) FROM submission") == 0


async def test_import_then_submit_in_the_unified_account(phone: JmapBox, outgoing: Outgoing) -> None:
    """RFC 8621 §4.8 Email/import then §7.5 EmailSubmission/set, both in the unified account: the imported draft is
    kept by the account that sends as its From (the IMAP account, its provider's Drafts too), so the submission with
    the listed identity goes through that account's SMTP server. undoStatus (§7): "pending: It may be possible to
    cancel this submission"; "final: The message has been relayed to at least one recipient in a manner that cannot
    be recalled"."""
    raw = make_message(message_id="imported-draft@example.org", subject="Imported, then sent",
                       sender=f"Owner <{outgoing.address}>", to=["Bea <bea@example.net>"], body="Written offline.\n")
    uploaded = await phone.http.post(f"/jmap/upload/{phone.primary}", content=raw,
                                     headers={**phone.headers, "Content-Type": "message/rfc822"})
    assert uploaded.status_code == 201, uploaded.text
    drafts, sent = await _unified_mailbox(phone, "drafts"), await _unified_mailbox(phone, "sent")
    [identity] = (await _unified(phone, "Identity/get", {"ids": None}))["list"]
    [[_, imports, _]] = await _calls(phone, ["Email/import", {"accountId": phone.primary, "emails": {"k": {
        "blobId": uploaded.json()["blobId"], "mailboxIds": {drafts: True}, "keywords": {"$draft": True}}}}, "0"])
    imported = imports["created"]["k"]
    owner = await phone.services.db.fetchval("SELECT account_id FROM message WHERE id = $1", int(imported["id"]))
    assert owner == outgoing.account_id
    await run_queued(phone.services, ("push_draft",))
    assert "imported-draft@example.org" in outgoing.folder("Drafts")  # the provider keeps the draft meanwhile
    responses = await _calls(phone, ["EmailSubmission/set", {
        "accountId": phone.primary, "create": {"s": {"identityId": identity["id"], "emailId": imported["id"]}},
        "onSuccessUpdateEmail": {"#s": {f"mailboxIds/{drafts}": None, f"mailboxIds/{sent}": True,
                                        "keywords/$draft": None}}}, "1"])
    created = responses[0][1]["created"]["s"]
    assert created["undoStatus"] == "pending"
    await run_queued(phone.services, ("send_submission", "push_draft", "file_sent_copy"))
    [received] = outgoing.smtp.wait_for(1)
    assert received.message["Subject"] == "Imported, then sent"
    got = await _unified(phone, "EmailSubmission/get", {"ids": [created["id"]]})
    assert got["list"][0]["undoStatus"] == "final"


async def test_a_failed_send_is_canceled_reported_in_changes_and_back_in_drafts(
        phone: JmapBox, outgoing: Outgoing) -> None:
    """RFC 8621 §7 undoStatus "canceled: The submission was canceled and will not be delivered to any recipient";
    RFC 8620 §5.2: the submission whose state moved is in EmailSubmission/changes' updated; deliveryStatus carries
    the server's reply (smtpReply) and delivered "no"; the message is a draft in Drafts again."""
    outgoing.smtp.faults.rejected.add("nobody@example.net")
    drafts = await _unified_mailbox(phone, "drafts")
    [identity] = (await _unified(phone, "Identity/get", {"ids": None}))["list"]
    responses = await _calls(
        phone,
        ["Email/set", {"accountId": phone.primary, "create": {"d": {
            "mailboxIds": {drafts: True}, "keywords": {"$draft": True, "$seen": True},
            "from": [{"email": outgoing.address}], "to": [{"email": "nobody@example.net"}], "subject": "Bounces",
            "textBody": [{"partId": "t"}], "bodyValues": {"t": {"value": "x"}}}}}, "0"],
        ["EmailSubmission/set", {"accountId": phone.primary, "create": {"s": {"identityId": identity["id"],
                                                                             "emailId": "#d"}}}, "1"])
    email_id = responses[0][1]["created"]["d"]["id"]
    submission = responses[1][1]["created"]["s"]
    state = responses[1][1]["newState"]
    await run_queued(phone.services, ("send_submission", "push_draft", "file_sent_copy"))
    changes = await _unified(phone, "EmailSubmission/changes", {"sinceState": state})
    assert submission["id"] in changes["updated"]
    got = (await _unified(phone, "EmailSubmission/get", {"ids": [submission["id"]]}))["list"][0]
    assert got["undoStatus"] == "canceled"
    status = got["deliveryStatus"]["nobody@example.net"]
    assert status["delivered"] == "no" and "550" in status["smtpReply"]
    email = (await _unified(phone, "Email/get", {"ids": [email_id], "properties": ["mailboxIds", "keywords"]}))
    assert email["list"][0]["mailboxIds"] == {drafts: True} and email["list"][0]["keywords"].get("$draft") is True
    assert LabelRole.DRAFTS in phone.roles


async def test_an_import_that_is_no_draft_goes_to_the_archive(phone: JmapBox, outgoing: Outgoing) -> None:
    """RFC 8621 §4.8 Email/import "adds messages to the set of Emails in an account": in the unified account a
    received message imported into the Inbox is kept by the account that can keep it, the local archive (a
    provider's account keeps drafts only; its server would never see anything else)."""
    raw = make_message(message_id="old-letter@example.net", subject="An old letter", sender="Ann <ann@example.net>",
                       to=[outgoing.address])
    uploaded = await phone.http.post(f"/jmap/upload/{phone.primary}", content=raw,
                                     headers={**phone.headers, "Content-Type": "message/rfc822"})
    inbox = await _unified_mailbox(phone, "inbox")
    result = await _unified(phone, "Email/import", {"emails": {"k": {"blobId": uploaded.json()["blobId"],
                                                                      "mailboxIds": {inbox: True}}}})
    assert result["notCreated"] is None, result["notCreated"]
    owner = await phone.services.db.fetchval("SELECT account_id FROM message WHERE id = $1",
                                             int(result["created"]["k"]["id"]))
    assert owner == phone.archive_id  # type: ignore[attr-defined]


async def test_identity_changes_in_the_unified_account_name_only_listed_identities(
        phone: JmapBox, outgoing: Outgoing) -> None:
    """RFC 8620 §5.2 created: "ids for records that have been created since the old state" — records of this
    account: an alias of the archive is no Identity of the unified account, one of the IMAP account is."""
    state = (await _unified(phone, "Identity/get", {"ids": []}))["state"]
    services, user_id = phone.services, phone.user.id
    await services.identities.add_alias(user_id, phone.archive_id, "old.alias@example.org",  # type: ignore[attr-defined]
                                        confirm_base="http://plmail.test/")
    sending = await outgoing.verified_alias("new.alias@example.org")
    changes = await _unified(phone, "Identity/changes", {"sinceState": state})
    assert changes["created"] == [str(sending.id)] and changes["updated"] == []
