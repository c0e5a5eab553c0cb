"""The real Email body model (RFC 8621 §4.1.4) on corpus messages: bodyStructure is the MIME tree, and textBody /
htmlBody / attachments are what the RFC's parseStructure algorithm gives. Every expected part list below was
worked out by hand from the RFC's pseudo-code (walked step by step in the comments), not from plmail's code.
An attached message/rfc822 is read with Email/parse."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.integration.jmap.conftest import JmapBox
from tests.support.mail import CORPUS

THUNDERBIRD = CORPUS / "thunderbird-mailnews-testdata" / "mailnews" / "test" / "data"
BODY = ["partId", "type", "disposition", "cid", "name"]


async def _email(box: JmapBox, path: Path) -> tuple[str, dict[str, Any]]:
    if not path.exists():
        pytest.fail(f"corpus file missing: {path}")
    email = str((await box.ingest(path.read_bytes())).messages[0].id)
    got = await box.call("Email/get", {"ids": [email], "bodyProperties": BODY, "properties": [
        "bodyStructure", "textBody", "htmlBody", "attachments", "hasAttachment"]})
    return email, got["list"][0]


def _ids(parts: list[dict[str, Any]]) -> list[str]:
    return [p["partId"] for p in parts]


def _tree(part: dict[str, Any]) -> Any:
    """(partId, type) with the children of a multipart."""
    if "subParts" in part:
        return (part["partId"], part["type"], [_tree(p) for p in part["subParts"]])
    return (part["partId"], part["type"])


async def test_alternative_inside_mixed_with_a_related_html_and_an_attachment(box: JmapBox) -> None:
    # mixed[ alternative[ 1.1 text/plain, related[ 1.2.1 text/html, 1.2.2 image/png inline cid ] ],
    #        2 image/png attachment ]
    # alternative: 1.1 is inline (first) -> textBody. related (inAlternative): 1.2.1 is first, inline; text/html
    # inside an alternative sets textBody to null for this multipart -> htmlBody only. 1.2.2 is not first in a
    # related multipart -> not inline -> attachments. Back in mixed: 2 has disposition attachment -> attachments.
    _, got = await _email(box, THUNDERBIRD / "10-plaintext+(HTML+embedded-image)+attachment.eml")
    assert _tree(got["bodyStructure"]) == (None, "multipart/mixed", [
        (None, "multipart/alternative", [("1.1", "text/plain"), (None, "multipart/related", [
            ("1.2.1", "text/html"), ("1.2.2", "image/png")])]),
        ("2", "image/png")])
    assert _ids(got["textBody"]) == ["1.1"]
    assert _ids(got["htmlBody"]) == ["1.2.1"]
    assert _ids(got["attachments"]) == ["1.2.2", "2"]
    inline, attached = got["attachments"]
    assert inline["disposition"] == "inline" and inline["cid"] == "part1.8C5E6A81.D0C1B91A@jorgk.com"
    assert inline["name"] == "kigaaldcbanejcbi.png"
    assert attached["disposition"] == "attachment" and attached["name"] == "attach2.png"
    assert got["hasAttachment"] is True


async def test_multipart_related_html_with_its_embedded_image(box: JmapBox) -> None:
    # related[ 1 text/html, 2 image/png inline ]: 1 is first -> both lists (no alternative around it);
    # 2 is not first in a related multipart -> attachments.
    _, got = await _email(box, THUNDERBIRD / "05-HTML+embedded-image.eml")
    assert _tree(got["bodyStructure"]) == (None, "multipart/related", [("1", "text/html"), ("2", "image/png")])
    assert _ids(got["textBody"]) == ["1"] and _ids(got["htmlBody"]) == ["1"]
    assert _ids(got["attachments"]) == ["2"]


async def test_mixed_with_an_inline_image_between_texts(box: JmapBox) -> None:
    # mixed[ 1 text/plain, 2 image/jpeg inline name=photo.JPG, 3 text/plain ] (as an iPhone sends it):
    # 1 is first -> both lists. 2: not "attachment", an inline media type, and outside related a named media
    # part may be inline -> both lists; both lists exist, so it is not also an attachment. 3: text without a
    # name -> both lists.
    _, got = await _email(box, CORPUS / "flanker-fixtures" / "messages" / "iphone.eml")
    assert _tree(got["bodyStructure"]) == (None, "multipart/mixed", [
        ("1", "text/plain"), ("2", "image/jpeg"), ("3", "text/plain")])
    assert _ids(got["textBody"]) == ["1", "2", "3"]
    assert _ids(got["htmlBody"]) == ["1", "2", "3"]
    assert got["attachments"] == []


async def test_nested_message_is_an_attachment_and_parses_as_an_email(box: JmapBox) -> None:
    # mixed[ 1 text/plain, 2 message/rfc822 ]: 1 -> both lists; message/rfc822 is no body type -> attachments.
    email, got = await _email(box, CORPUS / "mimekit-testdata" / "messages" / "simple-embedded-message.eml")
    assert _tree(got["bodyStructure"]) == (None, "multipart/mixed", [("1", "text/plain"), ("2", "message/rfc822")])
    assert _ids(got["textBody"]) == ["1"] and _ids(got["htmlBody"]) == ["1"]
    assert _ids(got["attachments"]) == ["2"]
    attached = await box.call("Email/get", {"ids": [email], "properties": ["attachments"],
                                            "bodyProperties": ["partId", "blobId", "type"]})
    blob = attached["list"][0]["attachments"][0]["blobId"]
    parsed = await box.call("Email/parse", {"blobIds": [blob, "m-999999999", "u-" + "0" * 64],
                                            "properties": ["subject", "textBody", "id", "keywords"],
                                            "fetchTextBodyValues": True})
    inner = parsed["parsed"][blob]
    assert inner["subject"] == "embedded message"
    assert inner["id"] is None and inner["keywords"] is None  # a parsed message is stored nowhere
    assert [p["type"] for p in inner["textBody"]] == ["text/plain"]
    assert sorted(parsed["notFound"]) == sorted(["m-999999999", "u-" + "0" * 64])
    # the top message's text part is no message: not parsable
    text_blob = (await box.call("Email/get", {"ids": [email], "properties": ["textBody"],
                                              "bodyProperties": ["blobId"]}))["list"][0]["textBody"][0]["blobId"]
    assert (await box.call("Email/parse", {"blobIds": [text_blob]}))["notParsable"] == [text_blob]
