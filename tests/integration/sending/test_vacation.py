"""VacationResponse (RFC 8621 §8) on the unified account, sent by the sending engine to the suite's SMTP server:
one reply per sender per 7 days, never to a list, bulk mail, a no-reply sender or the user's own address, only
between fromDate and toDate, marked Auto-Submitted: auto-replied (RFC 3834 §5). Also Quota/get (RFC 9425)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import pytest

from tests.integration.jmap.conftest import JmapBox
from tests.integration.sending.conftest import Outgoing
from tests.support.jobs import run_queued

USING = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail", "urn:ietf:params:jmap:vacationresponse"]
QUOTA = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:quota"]


@pytest.fixture
async def phone(outgoing: Outgoing, client: httpx.AsyncClient) -> JmapBox:
    token = (await outgoing.services.app_passwords.create(outgoing.user.id, "Phone")).token
    return JmapBox(outgoing.services, client, outgoing.user, outgoing.account_id, token,
                   await outgoing.services.labels.role_ids(outgoing.user.id))


def _mail(n: int, sender: str, *headers: str) -> bytes:
    extra = "".join(f"{h}\r\n" for h in headers)
    return (f"From: {sender}\r\nTo: owner@example.org\r\nSubject: Question {n}\r\nMessage-ID: <v{n}@example.net>\r\n"
            f"Date: Tue, 01 Dec 2026 10:00:00 +0000\r\n{extra}\r\nHello?\r\n").encode()


async def _call(phone: JmapBox, name: str, arguments: dict[str, object], using: list[str] = USING
                ) -> tuple[str, dict[str, object]]:
    response = await phone.request([[name, {"accountId": f"u{phone.user.id}", **arguments}, "c"]], using=using)
    assert response.status_code == 200, response.text
    result_name, result, _ = response.json()["methodResponses"][0]
    return result_name, result


async def test_vacation_response_answers_once_per_sender_and_never_lists(phone: JmapBox, outgoing: Outgoing) -> None:
    name, got = await _call(phone, "VacationResponse/get", {"ids": None})
    assert name == "VacationResponse/get"
    assert got["list"] == [{"id": "singleton", "isEnabled": False, "fromDate": None, "toDate": None, "subject": None,
                            "textBody": None, "htmlBody": None}]
    wrong = await phone.request([["VacationResponse/get", {"accountId": phone.account}, "c"]], using=USING)
    assert wrong.json()["methodResponses"][0][1]["type"] == "accountNotSupportedByMethod"  # the user's, not one box's

    now = datetime.now(UTC)
    _, refused = await _call(phone, "VacationResponse/set", {
        "create": {"x": {"isEnabled": True}}, "destroy": ["singleton"],
        "update": {"singleton": {"fromDate": "2026-08-10T00:00:00Z", "toDate": "2026-08-01T00:00:00Z"}}})
    assert refused["notCreated"]["x"]["type"] == "singleton" and refused["notDestroyed"]["singleton"]["type"] == \
        "singleton"
    assert refused["notUpdated"]["singleton"]["type"] == "invalidProperties"  # it would end before it starts
    before = refused["newState"]
    _, done = await _call(phone, "VacationResponse/set", {"ifInState": before, "update": {"singleton": {
        "isEnabled": True, "fromDate": (now - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "toDate": (now + timedelta(days=14)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "subject": "Away until the 15th", "textBody": "I am away and read your mail later."}}})
    assert done["updated"] == {"singleton": None} and done["newState"] != before
    _, shown = await _call(phone, "VacationResponse/get", {"ids": ["singleton", "other"]})
    assert shown["list"][0]["isEnabled"] is True and shown["list"][0]["subject"] == "Away until the 15th"
    assert shown["notFound"] == ["other"]

    outgoing.mail.deliver([
        _mail(1, "Carl <carl@example.net>"),
        _mail(2, "News <news@lists.example.net>", "List-Id: <news.lists.example.net>"),
        _mail(3, "Shop <no-reply@shop.example>"),
        _mail(4, "Bulk <offers@example.com>", "Precedence: bulk"),
        _mail(5, f"Me <{outgoing.address}>"),
        _mail(6, "Robot <robot@example.com>", "Auto-Submitted: auto-replied"),
    ])
    await outgoing.services.sync.run(outgoing.account_id)
    ran = await run_queued(outgoing.services, ("send_vacation_reply", "send_submission", "push_draft",
                                               "file_sent_copy"))
    assert "send_vacation_reply" in ran
    [reply] = outgoing.smtp.wait_for(1)
    assert reply.rcpt_to == ("carl@example.net",)
    message = reply.message
    assert message["Subject"] == "Away until the 15th" and message["Auto-Submitted"] == "auto-replied"
    assert message["In-Reply-To"] == "<v1@example.net>"
    assert "I am away" in message.get_payload(decode=True).decode()

    outgoing.mail.deliver([_mail(7, "Carl <carl@example.net>")])  # the same sender within the week
    await outgoing.services.sync.run(outgoing.account_id)
    await run_queued(outgoing.services, ("send_vacation_reply", "send_submission", "push_draft", "file_sent_copy"))
    assert len(outgoing.smtp.received) == 1
    answered = await outgoing.services.db.fetchval(
        "SELECT count(*) FROM message WHERE rfc_message_id = 'v1@example.net' AND flags ? '$answered'")
    assert answered == 0  # an automatic reply is not the user's answer


async def test_no_reply_outside_the_dates(phone: JmapBox, outgoing: Outgoing) -> None:
    later = datetime.now(UTC) + timedelta(days=3)
    await _call(phone, "VacationResponse/set", {"update": {"singleton": {
        "isEnabled": True, "fromDate": later.strftime("%Y-%m-%dT%H:%M:%SZ"), "textBody": "Away."}}})
    outgoing.mail.deliver([_mail(8, "Dora <dora@example.net>")])
    await outgoing.services.sync.run(outgoing.account_id)
    await run_queued(outgoing.services, ("send_vacation_reply", "send_submission", "push_draft", "file_sent_copy"))
    assert outgoing.smtp.received == []


async def test_quota_reports_the_space_the_users_mail_takes(phone: JmapBox, outgoing: Outgoing) -> None:
    name, empty = await _call(phone, "Quota/get", {"ids": None}, using=QUOTA)
    assert name == "Quota/get", empty
    quota = next(q for q in empty["list"] if q["id"] == "mail")  # beside it: the pending uploads' (issue 39)
    assert quota["resourceType"] == "octets" and quota["scope"] == "account"
    assert quota["types"] == ["Mail"] and (quota["hardLimit"] is None or quota["hardLimit"] > quota["used"])
    start = int(quota["used"])
    outgoing.mail.deliver([_mail(10 + n, "Eve <eve@example.net>", "X-Pad: " + "x" * 900) for n in range(21)])
    await outgoing.services.sync.run(outgoing.account_id)
    _, after = await _call(phone, "Quota/get", {"ids": None}, using=QUOTA)
    assert int(next(q for q in after["list"] if q["id"] == "mail")["used"]) > start  # 21 more messages take more room
    assert after["state"] != empty["state"]  # the quota's state moves with the mail
