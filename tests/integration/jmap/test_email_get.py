"""Email/get: every RFC 8621 property we hold, header forms, body parts and values, keywords, mailboxes."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from plmail.domain.enums import LabelRole
from tests.integration.jmap.conftest import JmapBox
from tests.support.mail import BASE_DATE, make_message

HTML = '<p>Hello <b>there</b></p><script>alert("x")</script><img src="https://tracker.example/t.gif">'


async def _one(box: JmapBox, raw: bytes, **facts: object) -> str:
    result = await box.ingest(raw, **facts)
    return str(result.messages[0].id)


async def test_default_properties_of_a_plain_message(box: JmapBox) -> None:
    email = await _one(box, make_message(
        message_id="one@x", subject="Quarterly numbers", sender="Alice Smith <alice@example.org>",
        to=("Bob <bob@example.net>", "carol@example.net"), cc=("Dan <dan@example.net>",),
        in_reply_to="zero@x", references=["root@x", "zero@x"], body="The numbers are in.\n",
        headers={"Reply-To": "Team <team@example.org>", "Sender": "Bot <bot@example.org>"}))
    got = (await box.call("Email/get", {"ids": [email]}))["list"][0]
    assert got["id"] == email and got["blobId"] == f"m-{email}"
    assert got["threadId"].isdigit()
    assert got["mailboxIds"] == {await box.mailbox_id(LabelRole.INBOX): True}
    assert got["keywords"] == {}
    assert got["receivedAt"] == "2026-03-02T09:00:00Z" and got["sentAt"] == "2026-03-02T09:00:00Z"
    assert got["messageId"] == ["one@x"] and got["inReplyTo"] == ["zero@x"]
    assert got["references"] == ["root@x", "zero@x"]
    assert got["from"] == [{"name": "Alice Smith", "email": "alice@example.org"}]
    assert got["to"] == [{"name": "Bob", "email": "bob@example.net"}, {"name": None, "email": "carol@example.net"}]
    assert got["cc"] == [{"name": "Dan", "email": "dan@example.net"}] and got["bcc"] is None
    assert got["replyTo"] == [{"name": "Team", "email": "team@example.org"}]
    assert got["sender"] == [{"name": "Bot", "email": "bot@example.org"}]
    assert got["subject"] == "Quarterly numbers" and got["preview"] == "The numbers are in."
    assert got["hasAttachment"] is False and got["size"] > 0
    # a single-part message is its own part 1 (IMAP's section numbers, RFC 8621 §4.1.4)
    assert got["textBody"][0]["partId"] == "1" and got["textBody"][0]["type"] == "text/plain"
    assert got["textBody"][0]["blobId"] == f"m-{email}x1" and got["textBody"][0]["charset"] == "utf-8"
    assert got["htmlBody"] == got["textBody"] and got["attachments"] == [] and got["bodyValues"] == {}
    assert "headers" not in got and "bodyStructure" not in got


async def test_header_forms(box: JmapBox) -> None:
    raw = make_message(message_id="h@x", subject="=?utf-8?q?Gr=C3=BC=C3=9Fe?=", headers={
        "List-Unsubscribe": "<mailto:u@lists.example>, <https://lists.example/u?x=1>",
        "X-Multi": "first", "X-Tag": "=?utf-8?q?caf=C3=A9?=", "X-Folded": "one\r\n two"})
    email = await _one(box, raw.replace(b"X-Multi: first\r\n", b"X-Multi: first\r\nX-Other: 1\r\nX-Multi: second\r\n"))
    props = ["header:Subject:asText", "header:subject", "header:From:asAddresses", "header:From:asGroupedAddresses",
             "header:Message-ID:asMessageIds", "header:Date:asDate", "header:List-Unsubscribe:asURLs",
             "header:X-Multi:all", "header:X-Multi", "header:X-Tag:asText", "header:X-Missing", "header:X-Missing:all",
             "header:X-Folded", "header:X-Folded:asText", "headers"]
    got = (await box.call("Email/get", {"ids": [email], "properties": props}))["list"][0]
    assert got["header:Subject:asText"] == "Grüße"
    assert got["header:subject"] == " =?utf-8?q?Gr=C3=BC=C3=9Fe?="
    assert got["header:From:asAddresses"] == [{"name": "Alice", "email": "alice@example.org"}]
    assert got["header:From:asGroupedAddresses"] == [{"name": None, "addresses": got["header:From:asAddresses"]}]
    assert got["header:Message-ID:asMessageIds"] == ["h@x"]
    assert got["header:Date:asDate"] == "2026-03-02T09:00:00Z"
    assert got["header:List-Unsubscribe:asURLs"] == ["mailto:u@lists.example", "https://lists.example/u?x=1"]
    assert got["header:X-Multi:all"] == [" first", " second"] and got["header:X-Multi"] == " second"
    assert got["header:X-Tag:asText"] == "café"
    assert got["header:X-Missing"] is None and got["header:X-Missing:all"] == []
    assert got["header:X-Folded"] == " one\r\n two" and got["header:X-Folded:asText"] == "one two"
    names = [h["name"] for h in got["headers"]]
    assert names[:3] == ["From", "To", "Subject"]  # the original's order, not the stored JSON's
    assert names[names.index("X-Multi"):names.index("X-Multi") + 3] == ["X-Multi", "X-Other", "X-Multi"]


async def test_html_is_always_the_sanitised_copy_with_structure_and_values(box: JmapBox) -> None:
    email = await _one(box, make_message(message_id="html@x", subject="Styled", html=HTML, body="Hello there\n"))
    got = (await box.call("Email/get", {
        "ids": [email], "properties": ["bodyStructure", "textBody", "htmlBody", "bodyValues"],
        "fetchAllBodyValues": True}))["list"][0]
    assert got["bodyStructure"]["type"] == "multipart/alternative" and got["bodyStructure"]["partId"] is None
    assert [p["partId"] for p in got["bodyStructure"]["subParts"]] == ["1", "2"]
    assert got["htmlBody"][0]["partId"] == "2" and got["textBody"][0]["partId"] == "1"
    html = got["bodyValues"]["2"]["value"]
    assert "<b>there</b>" in html and "<script" not in html and "tracker.example" not in html
    assert got["bodyValues"]["1"] == {"value": "Hello there\n", "isEncodingProblem": False,
                                      "isTruncated": False}
    downloaded = await box.http.get(f"/jmap/download/{box.account}/{got['htmlBody'][0]['blobId']}/b.html",
                                    headers=box.headers)
    assert b"<b>there</b>" in downloaded.content and b"<script" not in downloaded.content
    raw_html = await box.services.db.fetchval("SELECT body_html FROM message WHERE id = $1", int(email))
    assert "<script" in raw_html  # the raw copy is kept for extraction, never served
    html_only = (await box.call("Email/get", {"ids": [email], "properties": ["bodyValues"],
                                              "fetchHTMLBodyValues": True}))["list"][0]
    assert list(html_only["bodyValues"]) == ["2"]


async def test_max_body_value_bytes_truncates_on_character_and_tag_boundaries(box: JmapBox) -> None:
    email = await _one(box, make_message(message_id="t@x", body="Grüße aus Köln\n",
                                         html="<p>Grüße <b>aus</b> Köln</p>"))
    for size, text_value in [(3, "Gr"), (4, "Grü"), (100, "Grüße aus Köln\n")]:
        got = (await box.call("Email/get", {"ids": [email], "properties": ["bodyValues"],
                                            "fetchTextBodyValues": True, "maxBodyValueBytes": size}))["list"][0]
        assert got["bodyValues"]["1"]["value"] == text_value
        assert got["bodyValues"]["1"]["isTruncated"] is (size < 100)
    html = (await box.call("Email/get", {"ids": [email], "properties": ["bodyValues"], "fetchHTMLBodyValues": True,
                                         "maxBodyValueBytes": 12}))["list"][0]["bodyValues"]["2"]
    assert html["isTruncated"] and "<" not in html["value"].replace("<p>", "")


async def test_attachments_and_body_properties(box: JmapBox) -> None:
    raw = (b"From: Alice <alice@example.org>\r\nTo: bob@example.net\r\nSubject: Files\r\n"
           b"Message-ID: <att@x>\r\nDate: Mon, 02 Mar 2026 09:00:00 +0000\r\nMIME-Version: 1.0\r\n"
           b'Content-Type: multipart/mixed; boundary="b"\r\n\r\n'
           b"--b\r\nContent-Type: text/plain\r\n\r\nSee attached.\r\n"
           b"--b\r\nContent-Type: text/csv; charset=utf-8\r\n"
           b'Content-Disposition: attachment; filename="n.csv"\r\n\r\n'
           b"a,b\r\n1,2\r\n--b\r\nContent-Type: image/png\r\nContent-ID: <logo@x>\r\n"
           b"Content-Disposition: inline\r\nContent-Transfer-Encoding: base64\r\n\r\niVBORw0KGgo=\r\n--b--\r\n")
    email = await _one(box, raw)
    got = (await box.call("Email/get", {
        "ids": [email], "properties": ["attachments", "hasAttachment", "bodyStructure", "bodyValues", "textBody",
                                       "htmlBody"],
        "bodyProperties": ["partId", "blobId", "type", "name", "disposition", "cid", "size", "headers",
                           "header:Content-Type:asRaw"],
        "fetchAllBodyValues": True}))["list"][0]
    assert got["hasAttachment"] is True
    # RFC 8621 §4.1.4: the inline image of a multipart/mixed is shown in the body, in both lists; the CSV is an
    # attachment (disposition attachment)
    [csv] = got["attachments"]
    text, png = got["textBody"]
    assert got["htmlBody"] == got["textBody"]
    assert (text["partId"], png["partId"], csv["partId"]) == ("1", "3", "2")
    assert (csv["type"], csv["name"], csv["disposition"]) == ("text/csv", "n.csv", "attachment")
    assert csv["blobId"].startswith("p-") and csv["size"] == len(b"a,b\r\n1,2")
    assert (png["type"], png["cid"], png["disposition"]) == ("image/png", "logo@x", "inline")
    assert csv["header:Content-Type:asRaw"].startswith(" text/csv")
    assert csv["headers"] == [{"name": "Content-Type", "value": " text/csv; charset=utf-8"},
                              {"name": "Content-Disposition", "value": ' attachment; filename="n.csv"'}]
    assert got["bodyStructure"]["type"] == "multipart/mixed" and len(got["bodyStructure"]["subParts"]) == 3
    assert {"name": "Subject", "value": " Files"} in got["bodyStructure"]["headers"]  # the top part: the message
    # RFC 8621 §4.1.4: a body value is the text "with any CRLF replaced with a single LF"
    assert got["bodyValues"][csv["partId"]]["value"] == "a,b\n1,2"


async def test_keywords_from_columns_and_flags(box: JmapBox) -> None:
    email = await _one(box, make_message(message_id="k@x"), seen=True, starred=True, flags=("\\Answered", "$draft"))
    got = (await box.call("Email/get", {"ids": [email], "properties": ["keywords"]}))["list"][0]
    assert got == {"id": email, "keywords": {"$answered": True, "$draft": True, "$flagged": True, "$seen": True}}


async def test_mailbox_ids_are_the_messages_own_labels_not_the_threads(box: JmapBox) -> None:
    first = await _one(box, make_message(message_id="p1@x", subject="Plan"))
    second = await _one(box, make_message(message_id="p2@x", subject="Re: Plan", in_reply_to="p1@x",
                                          references=["p1@x"], date=BASE_DATE + timedelta(hours=1)),
                        role=LabelRole.SENT)
    got = {e["id"]: e for e in (await box.call("Email/get", {"ids": [first, second],
                                                             "properties": ["mailboxIds", "threadId"]}))["list"]}
    assert got[first]["threadId"] == got[second]["threadId"]
    assert got[first]["mailboxIds"] == {await box.mailbox_id(LabelRole.INBOX): True}
    assert got[second]["mailboxIds"] == {await box.mailbox_id(LabelRole.SENT): True}


async def test_not_found_order_and_vendor_category(box: JmapBox) -> None:
    a = await _one(box, make_message(message_id="o1@x"))
    b = await _one(box, make_message(message_id="o2@x"))
    got = await box.call("Email/get", {"ids": [b, "x", a, "424242"], "properties": ["subject"]})
    assert [e["id"] for e in got["list"]] == [b, a] and got["notFound"] == ["x", "424242"]
    with_category = await box.call("Email/get", {"ids": [a], "properties": ["category"]},
                                   using=["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail",
                                          "urn:plmail:params:jmap:categories"])
    assert with_category["list"][0]["category"] == "primary"
    refused = await box.error("Email/get", {"accountId": box.account, "ids": [a], "properties": ["category"]})
    assert refused["type"] == "invalidArguments"
    everything = await box.call("Email/get", {"ids": None, "properties": ["id"]})
    assert {e["id"] for e in everything["list"]} == {a, b}


async def test_headers_fall_back_to_the_stored_fields_without_an_original(box: JmapBox) -> None:
    parsed = box.message(make_message(message_id="lazy@x", subject="No original", headers={"X-Kind": "lazy"}))
    result = await box.services.pipeline.ingest([replace(parsed, raw=None)])
    email = str(result.messages[0].id)
    got = (await box.call("Email/get", {"ids": [email], "properties": ["header:X-Kind", "headers", "sender"]}
                          ))["list"][0]
    assert got["header:X-Kind"] == " lazy" and got["sender"] is None
    assert {"name": "Subject", "value": " No original"} in got["headers"]
