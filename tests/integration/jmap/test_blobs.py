"""Downloads (m-, p-, t-, h-, u-), uploads with their limit, and Email/import through the pipeline."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from plmail.domain.enums import LabelRole, ProviderKind
from tests.integration.jmap.conftest import JmapBox
from tests.support.mail import make_message
from tests.support.repos import account_rows

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
RAW_WITH_PARTS = (
    b"From: Alice <alice@example.org>\r\nTo: bob@example.net\r\nSubject: Files\r\nMessage-ID: <files@x>\r\n"
    b"Date: Mon, 02 Mar 2026 09:00:00 +0000\r\nMIME-Version: 1.0\r\n"
    b'Content-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nSee attached.\r\n'
    b'--b\r\nContent-Type: text/html\r\nContent-Disposition: attachment; filename="page.html"\r\n\r\n'
    b"<script>alert(1)</script>\r\n--b\r\nContent-Type: image/png\r\n"
    b'Content-Disposition: attachment; filename="p.png"\r\nContent-Transfer-Encoding: base64\r\n\r\n'
    b"iVBORw0KGgoAAAAAAAAAAAAAAAAAAAA=\r\n--b--\r\n")


def _url(box: JmapBox, blob: str, name: str, accept: str = "") -> str:
    return f"/jmap/download/{box.account}/{blob}/{name}" + (f"?accept={accept}" if accept else "")


async def test_downloads_are_safe_and_only_images_inline(box: JmapBox) -> None:
    result = await box.ingest(RAW_WITH_PARTS)
    email = str(result.messages[0].id)
    got = (await box.call("Email/get", {"ids": [email], "properties": ["attachments", "blobId", "textBody"]}))
    attachments = {a["name"]: a for a in got["list"][0]["attachments"]}

    raw = await box.http.get(_url(box, f"m-{email}", "files.eml"), headers=box.headers)
    assert raw.status_code == 200 and raw.content == RAW_WITH_PARTS
    assert raw.headers["content-disposition"] == "attachment; filename*=UTF-8''files.eml"
    assert raw.headers["x-content-type-options"] == "nosniff"

    page = await box.http.get(_url(box, attachments["page.html"]["blobId"], "page.html", "text/html"),
                              headers=box.headers)
    assert page.headers["content-disposition"].startswith("attachment;")
    assert page.headers["content-type"].startswith("text/html") and "sandbox" in page.headers["content-security-policy"]

    image = await box.http.get(_url(box, attachments["p.png"]["blobId"], "Ünïcode name.png", "image/png"),
                               headers=box.headers)
    assert image.headers["content-type"] == "image/png"
    assert image.headers["content-disposition"] == "inline; filename*=UTF-8''%C3%9Cn%C3%AFcode%20name.png"
    svg = await box.http.get(_url(box, attachments["p.png"]["blobId"], "x.svg", "image/svg%2Bxml"),
                             headers=box.headers)
    assert svg.headers["content-disposition"].startswith("attachment;")

    text = await box.http.get(_url(box, got["list"][0]["textBody"][0]["blobId"], "body.txt"), headers=box.headers)
    assert text.text.startswith("See attached.") and text.headers["content-type"].startswith("text/plain")
    for missing in (f"m-{int(email) + 100}", "p-999999", "u-" + "0" * 64, "zz", "m-abc"):
        response = await box.http.get(_url(box, missing, "x"), headers=box.headers)
        assert response.status_code == 404, missing
        assert response.headers["content-type"].startswith("application/problem+json")
    assert (await box.http.get(_url(box, f"m-{email}", "x"))).status_code == 401


async def test_html_body_blob_is_the_sanitised_copy(box: JmapBox) -> None:
    result = await box.ingest(make_message(message_id="h@x", html="<p>Hi</p><script>x()</script>", body="Hi"))
    email = str(result.messages[0].id)
    html = await box.http.get(_url(box, f"h-{email}", "body.html"), headers=box.headers)
    assert "<p>Hi</p>" in html.text and "<script" not in html.text
    assert html.headers["content-disposition"].startswith("attachment;")


async def test_upload_then_import_through_the_pipeline(box: JmapBox) -> None:
    raw = make_message(message_id="imported@x", subject="Imported by a phone", body="From far away.")
    uploaded = await box.http.post(f"/jmap/upload/{box.account}", content=raw,
                                   headers={**box.headers, "Content-Type": "message/rfc822"})
    assert uploaded.status_code == 201
    blob = uploaded.json()
    assert blob["accountId"] == box.account and blob["type"] == "message/rfc822" and blob["size"] == len(raw)
    assert blob["blobId"].startswith("u-")
    downloaded = await box.http.get(_url(box, blob["blobId"], "m.eml"), headers=box.headers)
    assert downloaded.content == raw

    inbox = await box.mailbox_id(LabelRole.INBOX)
    state = await box.state("Email")
    imported = await box.call("Email/import", {"ifInState": state, "emails": {
        "k1": {"blobId": blob["blobId"], "mailboxIds": {inbox: True}, "keywords": {"$seen": True},
               "receivedAt": "2026-04-01T10:00:00Z"},
        "k2": {"blobId": "u-" + "1" * 64, "mailboxIds": {inbox: True}},
        "k3": {"blobId": blob["blobId"], "mailboxIds": {}},
    }})
    created = imported["created"]["k1"]
    assert imported["notCreated"]["k2"]["properties"] == ["blobId"]
    assert imported["notCreated"]["k3"]["properties"] == ["mailboxIds"]
    assert created["blobId"] == f"m-{created['id']}" and created["size"] == len(raw) and created["threadId"]
    email = (await box.call("Email/get", {"ids": [created["id"]], "properties": [
        "subject", "keywords", "mailboxIds", "receivedAt"]}))["list"][0]
    assert email["subject"] == "Imported by a phone" and email["keywords"] == {"$seen": True}
    assert email["mailboxIds"] == {inbox: True} and email["receivedAt"] == "2026-04-01T10:00:00Z"
    changes = await box.call("Email/changes", {"sinceState": state})
    assert changes["created"] == [created["id"]]
    stale = await box.error("Email/import", {"accountId": box.account, "ifInState": state, "emails": {}})
    assert stale["type"] == "stateMismatch"


async def test_import_into_a_provider_account_is_refused(box: JmapBox) -> None:
    imap = await account_rows(box.services).create(user_id=box.user.id, provider_kind=ProviderKind.IMAP, name="Work",
                                              email="work@example.org")
    upload = (await box.http.post(f"/jmap/upload/{imap}", content=make_message(message_id="i@x"),
                                  headers={**box.headers, "Content-Type": "message/rfc822"})).json()
    mailboxes = await box.request([["Mailbox/get", {"accountId": str(imap)}, "m"]])
    inbox = next(m["id"] for m in mailboxes.json()["methodResponses"][0][1]["list"] if m["role"] == "inbox")
    response = (await box.request([["Email/import", {"accountId": str(imap), "emails": {
        "a": {"blobId": upload["blobId"], "mailboxIds": {inbox: True}}}}, "i"]])).json()
    assert response["methodResponses"][0][1]["notCreated"]["a"]["type"] == "forbidden"


async def test_upload_limit_is_413_problem_json(box: JmapBox) -> None:
    too_big = b"x" * (50_000_000 + 1)
    response = await box.http.post(f"/jmap/upload/{box.account}", content=too_big,
                                   headers={**box.headers, "Content-Type": "application/octet-stream"})
    assert response.status_code == 413
    assert response.json()["type"] == "urn:ietf:params:jmap:error:limit"
    assert response.json()["limit"] == "maxSizeUpload"
    assert (await box.http.post("/jmap/upload/999999", content=b"x", headers=box.headers)).status_code == 404


async def test_uploads_expire_within_a_day_and_unused_bytes_go(box: JmapBox) -> None:
    raw = b"only uploaded, never imported"
    blob = (await box.http.post(f"/jmap/upload/{box.account}", content=raw, headers=box.headers)).json()
    digest = blob["blobId"][2:]
    assert await box.services.blobs.exists(digest)
    blobs = await box.services.downloads.prune_expired_uploads(datetime.now(UTC) + timedelta(hours=23))
    assert blobs == 0 and await box.services.blobs.exists(digest)
    await box.services.downloads.prune_expired_uploads(datetime.now(UTC) + timedelta(hours=25))  # issue 39: 24 h
    assert not await box.services.blobs.exists(digest)
    assert (await box.http.get(_url(box, blob["blobId"], "x"), headers=box.headers)).status_code == 404
