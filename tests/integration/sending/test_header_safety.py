"""Issue 39, rule 6, as the attack: a Unicode line or paragraph separator (or any control character) in a
header value on every path that writes one — web composer, JMAP Email/set, VacationResponse/set, Identity/set
and the web identity form — is a clear error naming the field, never an HTTP 500 or serverFail; and an
identity display name of 99 characters with a comma sends (it used to fail every send: "The message is from
Dr., not from the identity …")."""

from __future__ import annotations

import email.header
from typing import Any

import httpx
import pytest

from plmail.domain.enums import LabelRole
from plmail.domain.messages import Address
from plmail.mail.compose import check_header
from tests.integration.jmap.conftest import JmapBox
from tests.integration.sending.conftest import Outgoing
from tests.support.web import csrf_token, sign_in

USING = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail", "urn:ietf:params:jmap:submission",
         "urn:ietf:params:jmap:vacationresponse"]
# Every line break Unicode knows (UAX #14: BK, CR, LF, NL) and the other controls an attacker would try.
BREAKS = {"U+2028": "\u2028", "U+2029": "\u2029", "U+0085": "\u0085", "VT": "\x0b", "FF": "\x0c", "CR": "\r",
          "LF": "\n", "NUL": "\x00", "ESC": "\x1b", "DEL": "\x7f"}
LONG_NAME = "Dr. Annabel Example-Longname, Head of the Department of Interdisciplinary Research Studies, Ltd. UK"


@pytest.mark.parametrize("name", BREAKS)
def test_every_line_break_and_control_character_is_refused_naming_the_field(name: str) -> None:
    with pytest.raises(Exception, match="subject field may not contain line breaks") as refused:
        check_header(f"Hello{BREAKS[name]}Bcc: x@evil.example", "subject")
    assert getattr(refused.value, "field", None) == "subject"
    assert check_header("Tab\tand ünïcödé — fine", "subject") == "Tab\tand ünïcödé — fine"


@pytest.fixture
async def phone(outgoing: Outgoing, client: httpx.AsyncClient) -> JmapBox:
    token = (await outgoing.services.app_passwords.create(outgoing.user.id, "Phone")).token
    return JmapBox(outgoing.services, client, outgoing.user, outgoing.account_id, token,
                   await outgoing.services.labels.role_ids(outgoing.user.id))


async def one(phone: JmapBox, method: str, arguments: dict[str, Any]) -> dict[str, Any]:
    response = await phone.request([[method, arguments, "c"]], using=USING)
    assert response.status_code == 200, response.text
    [[name, result, _]] = response.json()["methodResponses"]
    assert name == method, result  # never an "error" (serverFail)
    return dict(result)


async def test_u2028_is_a_clear_error_on_every_path(phone: JmapBox, outgoing: Outgoing,
                                                    client: httpx.AsyncClient) -> None:
    bad = "Lunch\u2028Bcc: everyone@evil.example"
    drafts = await phone.mailbox_id(LabelRole.DRAFTS)
    created = await one(phone, "Email/set", {"accountId": phone.account, "create": {"d": {
        "mailboxIds": {drafts: True}, "keywords": {"$draft": True}, "from": [{"email": outgoing.address}],
        "to": [{"email": "bea@example.net"}], "subject": bad,
        "textBody": [{"partId": "t", "type": "text/plain"}], "bodyValues": {"t": {"value": "Hi"}}}}})
    assert created["notCreated"]["d"]["type"] == "invalidProperties"
    assert created["notCreated"]["d"]["properties"] == ["subject"]

    vacation = await one(phone, "VacationResponse/set", {"accountId": f"u{outgoing.user.id}", "update": {
        "singleton": {"isEnabled": True, "subject": "Away\r\nBcc: everyone@evil.example"}}})
    assert vacation["notUpdated"]["singleton"]["type"] == "invalidProperties"
    assert vacation["notUpdated"]["singleton"]["properties"] == ["subject"]

    identity = (await outgoing.identity()).id
    renamed = await one(phone, "Identity/set", {"accountId": phone.account, "update": {
        str(identity): {"name": "Owner\u2029Evil"}}})
    assert renamed["notUpdated"][str(identity)]["type"] == "invalidProperties"
    assert renamed["notUpdated"][str(identity)]["properties"] == ["name"]
    reply_to = await one(phone, "Identity/set", {"accountId": phone.account, "update": {
        str(identity): {"replyTo": [{"name": "Replies\u0085", "email": "r@example.org"}]}}})
    assert reply_to["notUpdated"][str(identity)]["properties"] == ["replyTo"]

    assert (await sign_in(client, outgoing.user.email, "correct horse")).status_code == 200
    token = await csrf_token(client, "/compose")
    page = await client.post("/compose", data={"identity_id": str(identity), "to": "bea@example.net", "subject": bad,
                                               "text": "my long careful text", "action": "send",
                                               "_csrf_token": token})
    assert page.status_code == 400
    assert "subject field may not contain line breaks" in page.text and "my long careful text" in page.text
    token = await csrf_token(client, "/settings/sending")
    form = await client.post(f"/settings/sending/identities/{identity}",
                             data={"name": "Owner\u2028Evil", "_csrf_token": token})
    assert form.status_code == 400 and "name field may not contain line breaks" in form.text

    kept = await outgoing.identity()
    assert kept.name != "Owner\u2029Evil" and kept.name != "Owner\u2028Evil" and kept.reply_to == ()
    assert (await outgoing.services.vacation.get(outgoing.user.id)).subject is None
    assert outgoing.smtp.received == []


async def test_a_long_display_name_with_a_comma_sends_and_reads_back_whole(outgoing: Outgoing) -> None:
    assert len(LONG_NAME) == 99 and "," in LONG_NAME
    identity = await outgoing.identity()
    await outgoing.services.identities.update(outgoing.user.id, identity.id, name=LONG_NAME)
    content = await outgoing.content(to=(Address("Berg, Bea (\"B\") Müller-Lüdenscheidt", "bea@example.net"),),
                                     cc=(Address("Smith, John", "john@example.net"),))
    submission = await outgoing.send(content)
    assert submission.state.value == "sent", submission
    [received] = outgoing.smtp.wait_for(1)
    assert received.mail_from == outgoing.address
    assert set(received.rcpt_to) == {"bea@example.net", "john@example.net"}
    sender = received.message["From"]
    assert email.utils.parseaddr(sender)[1] == outgoing.address
    phrase = str(sender).rsplit("<", 1)[0]
    assert str(email.header.make_header(email.header.decode_header(phrase))).strip().strip('"') == LONG_NAME
    assert [a for _, a in email.utils.getaddresses([received.message["To"], received.message["Cc"]])] == [
        "bea@example.net", "john@example.net"]
