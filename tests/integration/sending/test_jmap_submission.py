"""Sending from a JMAP client (RFC 8621 §6–7), raw requests over the ASGI app: identities, a draft created
from JSON, EmailSubmission/set with its implicit Email/set, FUTURERELEASE and undo, the RFC's errors, and
the refusals the web gives too."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from plmail.domain.enums import LabelRole
from tests.integration.jmap.conftest import JmapBox
from tests.integration.sending.conftest import Outgoing, parsed
from tests.support.jobs import run_queued

CORE = "urn:ietf:params:jmap:core"
MAIL = "urn:ietf:params:jmap:mail"
SUBMISSION = "urn:ietf:params:jmap:submission"
USING = [CORE, MAIL, SUBMISSION]


@pytest.fixture
async def phone(outgoing: Outgoing, client: httpx.AsyncClient) -> JmapBox:
    token = (await outgoing.services.app_passwords.create(outgoing.user.id, "Phone")).token
    return JmapBox(outgoing.services, client, outgoing.user, outgoing.account_id, token,
                  await outgoing.services.labels.role_ids(outgoing.user.id))


async def calls(phone: JmapBox, *invocations: list[Any]) -> list[list[Any]]:
    response = await phone.request(invocations, using=USING)
    assert response.status_code == 200, response.text
    return list(response.json()["methodResponses"])


async def identity_id(phone: JmapBox) -> str:
    listed = await phone.call("Identity/get", {"ids": None}, using=USING)
    return str(listed["list"][0]["id"])


def draft(outgoing: Outgoing, drafts: str, **fields: Any) -> dict[str, Any]:
    values: dict[str, Any] = {
        "mailboxIds": {drafts: True}, "keywords": {"$draft": True, "$seen": True},
        "from": [{"name": "Owner", "email": outgoing.address}],
        "to": [{"name": "Bea", "email": "bea@example.net"}], "subject": "From my phone",
        "textBody": [{"partId": "t", "type": "text/plain"}], "bodyValues": {"t": {"value": "Sent on the go."}},
    }
    values.update(fields)
    return values


async def send_now(phone: JmapBox, outgoing: Outgoing) -> list[str]:
    return await run_queued(phone.services, ("send_submission", "push_draft", "file_sent_copy"))


async def test_identities_are_listed_changed_and_added(phone: JmapBox, outgoing: Outgoing) -> None:
    listed = await phone.call("Identity/get", {"ids": None}, using=USING)
    [own] = listed["list"]
    assert own["email"] == outgoing.address and own["mayDelete"] is False
    state = listed["state"]
    [[name, result, _]] = await calls(phone, ["Identity/set", {"accountId": phone.account, "create": {
        "a": {"email": f"alias.{outgoing.address}", "name": "Alias"}}, "update": {
        own["id"]: {"textSignature": "-- \nOwner", "replyTo": [{"name": "", "email": "replies@example.org"}]}}}, "0"])
    assert name == "Identity/set" and set(result["created"]) == {"a"} and own["id"] in result["updated"]
    changes = await phone.call("Identity/changes", {"sinceState": state}, using=USING)
    assert set(changes["created"]) == {result["created"]["a"]["id"]} and changes["updated"] == [own["id"]]
    again = await phone.call("Identity/get", {"ids": [own["id"]]}, using=USING)
    assert again["list"][0]["textSignature"] == "-- \nOwner"
    assert again["list"][0]["replyTo"] == [{"name": "", "email": "replies@example.org"}]
    [[_, gone, _]] = await calls(phone, ["Identity/set", {"accountId": phone.account,
                                                          "destroy": [result["created"]["a"]["id"], own["id"]]}, "0"])
    assert gone["destroyed"] == [result["created"]["a"]["id"]]
    assert gone["notDestroyed"][own["id"]]["type"] == "forbidden"  # the account's own address stays


async def test_a_draft_is_sent_and_filed_as_sent(phone: JmapBox, outgoing: Outgoing) -> None:
    session = (await phone.http.get("/jmap/session", headers=phone.headers)).json()
    capability = session["accounts"][phone.account]["accountCapabilities"][SUBMISSION]
    assert capability["maxDelayedSend"] == 30 * 24 * 3600  # the 30 days
    drafts, sent = await phone.mailbox_id(LabelRole.DRAFTS), await phone.mailbox_id(LabelRole.SENT)
    uploaded = await phone.http.post(f"/jmap/upload/{phone.account}", content=b"%PDF-1.4 plan",
                                     headers={**phone.headers, "Content-Type": "application/pdf"})
    blob = uploaded.json()["blobId"]
    sender = await identity_id(phone)
    before = (await phone.call("EmailSubmission/get", {"ids": []}, using=USING))["state"]
    responses = await calls(
        phone,
        ["Email/set", {"accountId": phone.account, "create": {"d": draft(
            outgoing, drafts, bcc=[{"email": "secret@example.com"}],
            attachments=[{"blobId": blob, "type": "application/pdf", "name": "plan.pdf"}])}}, "0"],
        ["EmailSubmission/set", {"accountId": phone.account, "create": {"s": {"identityId": sender,
                                                                              "emailId": "#d"}},
                                 "onSuccessUpdateEmail": {"#s": {f"mailboxIds/{drafts}": None,
                                                                 f"mailboxIds/{sent}": True,
                                                                 "keywords/$draft": None}}}, "1"])
    names = [r[0] for r in responses]
    assert names == ["Email/set", "EmailSubmission/set", "Email/set"]  # the implicit Email/set follows
    email_id = responses[0][1]["created"]["d"]["id"]
    assert responses[1][1]["created"], responses[1][1]["notCreated"]
    created = responses[1][1]["created"]["s"]
    assert created["undoStatus"] == "pending" and responses[1][2] == responses[2][2] == "1"
    assert email_id in responses[2][1]["updated"]
    shown = await phone.call("Email/get", {"ids": [email_id], "properties": ["mailboxIds", "keywords"]},
                             using=USING)
    assert shown["list"][0]["mailboxIds"] == {sent: True} and "$draft" not in shown["list"][0]["keywords"]
    await send_now(phone, outgoing)
    [received] = outgoing.smtp.wait_for(1)
    message = received.message
    assert message["Subject"] == "From my phone" and message["Bcc"] is None
    assert "secret@example.com" in received.rcpt_to
    assert [p.get_filename() for p in message.walk() if p.get_filename()] == ["plan.pdf"]
    got = await phone.call("EmailSubmission/get", {"ids": [created["id"]]}, using=USING)
    submission = got["list"][0]
    assert submission["undoStatus"] == "final" and submission["emailId"] == email_id
    assert submission["deliveryStatus"]["bea@example.net"]["delivered"] == "queued"
    assert got["state"] != before
    changes = await phone.call("EmailSubmission/changes", {"sinceState": before}, using=USING)
    assert created["id"] in changes["created"]
    rfc_id = message["Message-ID"].strip()[1:-1]
    assert rfc_id in outgoing.folder("Sent") and rfc_id not in outgoing.folder("Drafts")
    assert "secret@example.com" in (parsed(outgoing.raw_in("Sent", rfc_id))["Bcc"] or "")
    [[_, late, _]] = await calls(phone, ["EmailSubmission/set", {"accountId": phone.account, "update": {
        created["id"]: {"undoStatus": "canceled"}}}, "0"])
    assert late["notUpdated"][created["id"]]["type"] == "cannotUnsend"


async def test_a_held_send_can_be_canceled_and_returns_to_drafts(phone: JmapBox, outgoing: Outgoing) -> None:
    drafts, sent = await phone.mailbox_id(LabelRole.DRAFTS), await phone.mailbox_id(LabelRole.SENT)
    sender = await identity_id(phone)
    responses = await calls(
        phone,
        ["Email/set", {"accountId": phone.account, "create": {"d": draft(outgoing, drafts)}}, "0"],
        ["EmailSubmission/set", {"accountId": phone.account, "create": {"s": {
            "identityId": sender, "emailId": "#d", "envelope": {
                "mailFrom": {"email": outgoing.address, "parameters": {"HOLDFOR": "600"}},
                "rcptTo": [{"email": "bea@example.net", "parameters": None}]}}},
            "onSuccessUpdateEmail": {"#s": {f"mailboxIds/{drafts}": None, f"mailboxIds/{sent}": True,
                                            "keywords/$draft": None}}}, "1"])
    created = responses[1][1]["created"]["s"]
    send_at = datetime.fromisoformat(created["sendAt"].replace("Z", "+00:00"))
    assert timedelta(seconds=590) < send_at - datetime.now(UTC) <= timedelta(seconds=600)
    pending = await phone.call("EmailSubmission/query", {"filter": {"undoStatus": "pending"}}, using=USING)
    assert pending["ids"] == [created["id"]]
    [[_, canceled, _]] = await calls(phone, ["EmailSubmission/set", {"accountId": phone.account, "update": {
        created["id"]: {"undoStatus": "canceled"}}}, "0"])
    assert created["id"] in canceled["updated"]
    email_id = responses[0][1]["created"]["d"]["id"]
    back = await phone.call("Email/get", {"ids": [email_id], "properties": ["mailboxIds", "keywords"]},
                            using=USING)
    assert back["list"][0]["mailboxIds"] == {drafts: True} and back["list"][0]["keywords"].get("$draft")
    await phone.services.db.execute("UPDATE submission SET send_at = now()")  # its time comes
    await send_now(phone, outgoing)
    assert outgoing.smtp.received == []
    assert (await phone.call("EmailSubmission/query", {"filter": {"undoStatus": "canceled"}},
                             using=USING))["ids"] == [created["id"]]


async def test_the_rfc_errors(phone: JmapBox, outgoing: Outgoing) -> None:
    drafts = await phone.mailbox_id(LabelRole.DRAFTS)
    sender = await identity_id(phone)
    responses = await calls(phone, ["Email/set", {"accountId": phone.account, "create": {
        "stranger": draft(outgoing, drafts, **{"from": [{"email": "ceo@bank.example"}]}),
        "nobody": draft(outgoing, drafts, to=None),
        "crowd": draft(outgoing, drafts, to=[{"email": f"r{i}@example.net"} for i in range(100)]),
        "injected": draft(outgoing, drafts, subject="hi\r\nBcc: x@evil"),
        "not_drafts": draft(outgoing, await phone.mailbox_id(LabelRole.INBOX), keywords={}),
    }}, "0"])
    result = responses[0][1]
    assert result["notCreated"]["injected"]["type"] == "invalidProperties"
    assert result["notCreated"]["injected"]["properties"] == ["subject"]
    assert result["notCreated"]["not_drafts"]["type"] == "forbidden"  # a provider account keeps only drafts
    created = {k: v["id"] for k, v in result["created"].items()}
    assert set(created) == {"stranger", "nobody", "crowd"}
    submitted = await calls(phone, ["EmailSubmission/set", {"accountId": phone.account, "create": {
        "s1": {"identityId": sender, "emailId": created["stranger"]},
        "s2": {"identityId": sender, "emailId": created["nobody"]},
        "s3": {"identityId": sender, "emailId": created["crowd"], "envelope": {
            "mailFrom": {"email": outgoing.address}, "rcptTo": [{"email": f"r{i}@example.net"} for i in range(101)]}},
        "s4": {"identityId": sender, "emailId": created["crowd"], "envelope": {
            "mailFrom": {"email": outgoing.address}, "rcptTo": [{"email": "not an address"}]}},
        "s5": {"identityId": "999999", "emailId": created["crowd"]},
        "s6": {"identityId": sender, "emailId": created["crowd"], "envelope": {
            "mailFrom": {"email": "ceo@bank.example"}, "rcptTo": [{"email": "bea@example.net"}]}},
    }}, "0"])
    refused = submitted[0][1]["notCreated"]
    assert refused["s1"]["type"] == "forbiddenFrom"  # From is no identity of the user
    assert refused["s2"]["type"] == "noRecipients"
    assert refused["s3"]["type"] == "tooManyRecipients"
    assert refused["s4"]["type"] == "invalidRecipients" and refused["s4"]["invalidRecipients"] == ["not an address"]
    assert refused["s5"]["type"] == "forbiddenFrom"
    assert refused["s6"]["type"] == "forbiddenMailFrom"
    await send_now(phone, outgoing)
    assert outgoing.smtp.received == []


async def test_a_reply_from_the_phone_marks_the_original_answered(phone: JmapBox, outgoing: Outgoing) -> None:
    outgoing.mail.append([(
        "From: Bea <bea@example.net>\r\nTo: " + outgoing.address + "\r\nSubject: Lunch?\r\n"
        "Message-ID: <lunch@example.net>\r\nDate: Mon, 30 Nov 2026 11:00:00 +0000\r\n\r\nToday?\r\n").encode()])
    await outgoing.sync()
    drafts = await phone.mailbox_id(LabelRole.DRAFTS)
    sender = await identity_id(phone)
    await calls(phone,
                ["Email/set", {"accountId": phone.account, "create": {"d": draft(
                    outgoing, drafts, subject="Re: Lunch?", inReplyTo=["lunch@example.net"],
                    references=["lunch@example.net"])}}, "0"],
                ["EmailSubmission/set", {"accountId": phone.account, "create": {"s": {"identityId": sender,
                                                                                      "emailId": "#d"}},
                                         "onSuccessDestroyEmail": ["#s"]}, "1"])
    await send_now(phone, outgoing)
    [received] = outgoing.smtp.wait_for(1)
    assert received.message["In-Reply-To"].strip() == "<lunch@example.net>"
    await outgoing.services.propagation.run(outgoing.account_id)
    assert "\\Answered" in outgoing.flags_of("INBOX", "lunch@example.net")
    # onSuccessDestroyEmail: the draft went from plmail; the Sent copy on the server comes back by sync.
    rfc_id = received.message["Message-ID"].strip()[1:-1]
    assert rfc_id in outgoing.folder("Sent") and rfc_id not in outgoing.folder("Drafts")
    await outgoing.sync()
    assert await outgoing.services.db.fetchval(
        "SELECT count(*) FROM message WHERE account_id = $1 AND rfc_message_id = $2", outgoing.account_id,
        rfc_id) == 1
