"""Email/set create against RFC 8621 §4.6, property by property (issue 35): header fields in every parsed form,
text and HTML by blobId, attachments by partId, a part's cid, language and header fields kept, and what the RFC
says MUST NOT be given refused with invalidProperties. The raw message the server wrote is read back through
Email/get's header forms and the blob download, as a client would."""

from __future__ import annotations

from email import message_from_bytes, policy
from email.message import EmailMessage
from typing import Any

from plmail.domain.enums import LabelRole
from tests.integration.jmap.conftest import JmapBox


async def _upload(box: JmapBox, data: bytes, content_type: str) -> str:
    uploaded = await box.http.post(f"/jmap/upload/{box.account}", content=data,
                                   headers={**box.headers, "Content-Type": content_type})
    assert uploaded.status_code == 201, uploaded.text
    return str(uploaded.json()["blobId"])


async def _create(box: JmapBox, **emails: dict[str, Any]) -> dict[str, Any]:
    drafts = await box.mailbox_id(LabelRole.DRAFTS)
    base = {"mailboxIds": {drafts: True}, "keywords": {"$draft": True}}
    return await box.call("Email/set", {"create": {k: {**base, **v} for k, v in emails.items()}})


async def _raw(box: JmapBox, email_id: str) -> EmailMessage:
    response = await box.http.get(f"/jmap/download/{box.account}/m-{email_id}/m.eml", headers=box.headers)
    assert response.status_code == 200
    parsed = message_from_bytes(response.content, policy=policy.default)
    assert isinstance(parsed, EmailMessage)
    return parsed


async def test_header_properties_in_every_parsed_form(box: JmapBox) -> None:
    """RFC 8621 §4.6: "Header fields MUST NOT be specified in parsed forms that are forbidden for that particular
    field" — so every form that is allowed may be given, :all included (§4.1.2 "header:{header-field-name}
    [:{form}][:all]"); the convenience properties are the same fields (sentAt is header:Date:asDate)."""
    result = await _create(box, d={
        "header:From:asAddresses": [{"name": "Phone User", "email": box.user.email}],
        "header:To": " Bea <bea@example.net>",
        "header:Subject:asText": "Parsed forms",
        "header:Date:asDate": "2026-03-04T05:06:07Z",
        "header:Message-ID:asMessageIds": ["forms@example.org"],
        "header:References:asMessageIds": ["a@example.org", "b@example.org"],
        "header:List-Unsubscribe:asURLs": ["mailto:leave@example.org", "https://example.org/leave"],
        "header:Comments:asText": "Written from a phone",
        "header:X-Tag:asText:all": ["first", "second"],
        "header:X-Reviewers:asAddresses": [{"name": "Rev", "email": "rev@example.org"}],
        "textBody": [{"partId": "t", "type": "text/plain"}], "bodyValues": {"t": {"value": "Body."}},
        "receivedAt": "2026-03-04T06:00:00Z",
    })
    assert result["notCreated"] is None, result["notCreated"]
    email = result["created"]["d"]["id"]
    got = (await box.call("Email/get", {"ids": [email], "properties": [
        "receivedAt", "from", "to", "subject", "sentAt", "messageId", "references", "header:List-Unsubscribe:asURLs",
        "header:Comments:asText", "header:X-Tag:asText:all", "header:X-Reviewers:asAddresses"]}))["list"][0]
    assert got["receivedAt"] == "2026-03-04T06:00:00Z"  # §4.1.1 receivedAt, settable on create
    assert got["from"] == [{"name": "Phone User", "email": box.user.email}]
    assert got["to"] == [{"name": "Bea", "email": "bea@example.net"}]
    assert (got["subject"], got["sentAt"]) == ("Parsed forms", "2026-03-04T05:06:07Z")
    assert got["messageId"] == ["forms@example.org"] and got["references"] == ["a@example.org", "b@example.org"]
    assert got["header:List-Unsubscribe:asURLs"] == ["mailto:leave@example.org", "https://example.org/leave"]
    assert got["header:Comments:asText"] == "Written from a phone"
    assert got["header:X-Tag:asText:all"] == ["first", "second"]
    assert got["header:X-Reviewers:asAddresses"] == [{"name": "Rev", "email": "rev@example.org"}]


async def test_header_properties_that_must_not_be_given_are_refused(box: JmapBox) -> None:
    """RFC 8621 §4.6: "The headers property MUST NOT be given on either the top-level Email or an EmailBodyPart";
    "There MUST NOT be two properties that represent the same header field (e.g., header:from and from)";
    forbidden parsed forms; "Header fields beginning with Content- MUST NOT be specified on the Email object"."""
    body = {"textBody": [{"partId": "t"}], "bodyValues": {"t": {"value": "x"}}}
    result = await _create(
        box,
        headers={**body, "headers": [{"name": "X-A", "value": "1"}]},
        twice={**body, "from": [{"email": box.user.email}], "header:From:asAddresses": [{"email": box.user.email}]},
        twice_raw={**body, "header:X-A": "1", "header:x-a:asText": "2"},
        wrong_form={**body, "header:Subject:asAddresses": [{"email": "a@example.org"}]},
        content={**body, "header:Content-Type": "text/plain"},
    )
    refused = result["notCreated"]
    assert set(refused) == {"headers", "twice", "twice_raw", "wrong_form", "content"}
    assert all(e["type"] == "invalidProperties" for e in refused.values()), refused
    assert refused["headers"]["properties"] == ["headers"]
    assert set(refused["twice"]["properties"]) == {"from", "header:From:asAddresses"}
    assert refused["content"]["properties"] == ["header:Content-Type"]


async def test_text_and_html_bodies_by_blob_id(box: JmapBox) -> None:
    """RFC 8621 §4.6, within an EmailBodyPart: "The client may specify a partId OR a blobId, but not both" — a
    textBody or htmlBody part given by the blob the client uploaded is its content."""
    text = await _upload(box, "Grüße aus dem Blob.\n".encode(), "text/plain")
    html = await _upload(box, b"<p>From a <b>blob</b></p>", "text/html")
    result = await _create(box, d={"subject": "Blobs", "textBody": [{"blobId": text, "type": "text/plain"}],
                                   "htmlBody": [{"blobId": html, "type": "text/html"}]})
    assert result["notCreated"] is None, result["notCreated"]
    raw = await _raw(box, result["created"]["d"]["id"])
    plain, rich = raw.get_body(("plain",)), raw.get_body(("html",))
    assert plain is not None and rich is not None
    assert plain.get_content().replace("\r\n", "\n") == "Grüße aus dem Blob.\n"
    assert "<b>blob</b>" in rich.get_content()
    missing = await _create(box, d={"textBody": [{"blobId": "u-" + "0" * 64, "type": "text/plain"}]})
    assert missing["notCreated"]["d"]["type"] == "blobNotFound"


async def test_attachment_by_part_id_and_a_parts_cid_language_and_headers_are_kept(box: JmapBox) -> None:
    """RFC 8621 §4.6: a partId "MUST be present in the bodyValues property", for an attachment as for the text;
    a part's cid is its Content-ID, language its Content-Language (§4.1.4), and its header:* properties are its
    header fields."""
    image = await _upload(box, b"\x89PNG\r\n\x1a\nfake", "image/png")
    result = await _create(box, d={
        "subject": "Parts", "textBody": [{"partId": "t", "type": "text/plain", "language": ["en"]}],
        "attachments": [
            {"partId": "csv", "type": "text/csv", "name": "numbers.csv"},
            {"blobId": image, "type": "image/png", "name": "chart.png", "disposition": "attachment",
             "cid": "chart@example.org", "language": ["de", "en"], "header:X-Note:asText": "kept"}],
        "bodyValues": {"t": {"value": "See attached."}, "csv": {"value": "a,b\n1,2\n"}}})
    assert result["notCreated"] is None, result["notCreated"]
    email = result["created"]["d"]["id"]
    got = (await box.call("Email/get", {"ids": [email], "properties": ["attachments", "textBody"],
                                        "bodyProperties": ["type", "name", "cid", "language", "disposition",
                                                           "header:X-Note:asText", "blobId"]}))["list"][0]
    csv, png = got["attachments"]
    assert (csv["type"], csv["name"]) == ("text/csv", "numbers.csv")
    data = await box.http.get(f"/jmap/download/{box.account}/{csv['blobId']}/n.csv", headers=box.headers)
    assert data.content.replace(b"\r\n", b"\n") == b"a,b\n1,2\n"
    assert (png["cid"], png["language"], png["disposition"]) == ("chart@example.org", ["de", "en"], "attachment")
    assert png["header:X-Note:asText"] == "kept"
    assert got["textBody"][0]["language"] == ["en"]


async def test_part_properties_that_must_not_be_given_are_refused(box: JmapBox) -> None:
    """RFC 8621 §4.6, within an EmailBodyPart: "The client may specify a partId OR a blobId, but not both"; "The
    charset property MUST be omitted if a partId is given"; "The size property MUST be omitted if a partId is
    given"; "A Content-Transfer-Encoding header field MUST NOT be given"; and no headers property. "If given,
    textBody MUST contain exactly one body part and it MUST be of type text/plain"."""
    blob = await _upload(box, b"x", "text/plain")
    values = {"t": {"value": "Text."}}

    def text(**part: Any) -> dict[str, Any]:
        return {"textBody": [{"partId": "t", "type": "text/plain", **part}], "bodyValues": values}

    result = await _create(
        box,
        cte=text(**{"header:Content-Transfer-Encoding": "base64"}),
        size=text(size=6),
        charset=text(charset="utf-8"),
        both=text(blobId=blob),
        part_headers=text(headers=[{"name": "X-A", "value": "1"}]),
        two_texts={"textBody": [{"partId": "t"}, {"partId": "t"}], "bodyValues": values},
        html_as_text={"textBody": [{"partId": "t", "type": "text/html"}], "bodyValues": values},
        attachment_cte={**text(), "attachments": [{"blobId": blob, "header:Content-Transfer-Encoding": "7bit"}]},
    )
    refused = result["notCreated"]
    assert set(refused) == {"cte", "size", "charset", "both", "part_headers", "two_texts", "html_as_text",
                            "attachment_cte"}, result
    assert all(e["type"] == "invalidProperties" for e in refused.values()), refused
    assert result["created"] is None


async def test_a_from_that_is_no_identity_is_created_not_forbidden_from(box: JmapBox) -> None:
    """RFC 8621 §7.5 lists forbiddenFrom among EmailSubmission/set's errors ("The server does not permit the user
    to send a message with the From header field of the message to be sent"); Email/set create (§4.6) names no
    such error: storing a draft with any From is allowed, sending it is what is refused."""
    for account in (box.primary, box.account):
        drafts = (await box.call("Mailbox/get", {"accountId": account, "ids": None}))["list"]
        drafts_id = next(m["id"] for m in drafts if m["role"] == "drafts")
        result = await box.call("Email/set", {"accountId": account, "create": {"d": {
            "mailboxIds": {drafts_id: True}, "keywords": {"$draft": True},
            "from": [{"name": "Someone Else", "email": "ceo@bank.example"}], "subject": "Not mine",
            "textBody": [{"partId": "t"}], "bodyValues": {"t": {"value": "x"}}}}})
        assert result["notCreated"] is None, result["notCreated"]
        got = (await box.call("Email/get", {"accountId": account, "ids": [result["created"]["d"]["id"]],
                                            "properties": ["from"]}))["list"][0]
        assert got["from"] == [{"name": "Someone Else", "email": "ceo@bank.example"}]


async def test_an_email_created_without_a_subject_has_no_subject_header(box: JmapBox) -> None:
    """RFC 8621 §4.1.3 "subject: String|null", read as header:Subject:asText, and §4.1.2: a header form "is null
    if there is no header field with the given name". An email created without a subject reads back with subject
    null (no Subject header written), not "" (an empty one)."""
    result = await _create(box, d={"from": [{"email": box.user.email}], "to": [{"email": "bea@example.net"}],
                                   "textBody": [{"partId": "t"}], "bodyValues": {"t": {"value": "No subject."}}})
    assert result["notCreated"] is None, result["notCreated"]
    email = result["created"]["d"]["id"]
    got = (await box.call("Email/get", {"ids": [email], "properties": ["subject", "header:Subject:all"]}))["list"]
    assert (got[0]["subject"], got[0]["header:Subject:all"]) == (None, [])
    assert "Subject" not in await _raw(box, email)
