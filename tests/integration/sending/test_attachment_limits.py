"""Issue 39, rule 5, as the attack: the composer promised 25 MB attachments, yet anything over the 10 MB request
limit failed with "Something went wrong"; JMAP uploads had no per-user total (8 × 45 MB accepted, kept 7 days).
Now a 12 MB attachment sends, a larger one gets a clear message, and the pending uploads have a quota
(RFC 8620 6.1) shown as a Quota object (RFC 9425), answered with 413 when full, and expire after 24 hours."""

from __future__ import annotations

import hashlib
import os

import httpx
import pytest

from tests.integration.jmap.conftest import JmapBox
from tests.integration.sending.conftest import Outgoing
from tests.support.jobs import run_queued
from tests.support.web import csrf_token, sign_in

MB = 1024 * 1024
QUOTA_USING = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:quota"]


@pytest.fixture
async def browser(outgoing: Outgoing, client: httpx.AsyncClient) -> httpx.AsyncClient:
    assert (await sign_in(client, outgoing.user.email, "correct horse")).status_code == 200
    return client


async def compose(http: httpx.AsyncClient, identity: int, subject: str, attachment: bytes) -> httpx.Response:
    token = await csrf_token(http, "/compose")
    return await http.post("/compose", data={"identity_id": str(identity), "to": "bea@example.net",
                                             "subject": subject, "text": "The file.", "action": "send",
                                             "_csrf_token": token},
                           files=[("attachments", ("scan.pdf", attachment, "application/pdf"))])


async def test_a_12_mb_attachment_sends_through_the_composer(browser: httpx.AsyncClient, outgoing: Outgoing) -> None:
    scan = os.urandom(12 * MB)
    sent = await compose(browser, (await outgoing.identity()).id, "Scan", scan)
    assert sent.status_code == 200 and "/compose/outbox" in str(sent.url), sent.text[-1500:]
    await outgoing.services.db.execute("UPDATE submission SET send_at = now()")
    await run_queued(outgoing.services, ("send_submission",))
    [received] = outgoing.smtp.wait_for(1, timeout=60)
    [part] = [p for p in received.message.walk() if p.get_filename() == "scan.pdf"]
    assert hashlib.sha256(part.get_payload(decode=True)).digest() == hashlib.sha256(scan).digest()


async def test_attachments_over_the_limit_get_a_clear_message(browser: httpx.AsyncClient, outgoing: Outgoing
                                                              ) -> None:
    identity = (await outgoing.identity()).id
    too_big = await compose(browser, identity, "Too big", os.urandom(28 * MB))  # past the 25 MB the page promises
    assert too_big.status_code == 413
    assert "larger than 25 MB" in too_big.text and "Something went wrong" not in too_big.text
    # Inside the request, but 20 MB in base64 is over 25 MB on the wire: the account's own limit says so.
    encoded_too_big = await compose(browser, identity, "Encoded too big", os.urandom(20 * MB))
    assert encoded_too_big.status_code == 400
    assert "larger than this account allows (25 MB)" in encoded_too_big.text
    assert outgoing.smtp.received == []


@pytest.fixture
async def phone(outgoing: Outgoing, client: httpx.AsyncClient) -> JmapBox:
    token = (await outgoing.services.app_passwords.create(outgoing.user.id, "Phone")).token
    return JmapBox(outgoing.services, client, outgoing.user, outgoing.account_id, token,
                   await outgoing.services.labels.role_ids(outgoing.user.id))


async def test_jmap_uploads_stop_at_the_users_quota_with_413_and_expire_within_a_day(phone: JmapBox) -> None:
    db = phone.services.db
    # Uploads already pending, as a client that uploaded 499 MB this morning would have left them.
    await db.execute("INSERT INTO jmap_upload (user_id, account_id, sha256, content_type, size, created_at) "
                     "VALUES ($1, NULL, $2, 'application/octet-stream', $3, now() - interval '1 hour')",
                     phone.user.id, "ab" * 32, 499 * MB)
    response = await phone.request([["Quota/get", {"accountId": f"u{phone.user.id}", "ids": None}, "q"]],
                                   using=QUOTA_USING)
    listed = {q["id"]: q for q in response.json()["methodResponses"][0][1]["list"]}
    assert listed["uploads"]["used"] == 499 * MB and listed["uploads"]["hardLimit"] == 500 * MB  # the 500 MB

    upload = await phone.http.post(f"/jmap/upload/{phone.account}", content=os.urandom(2 * MB),
                                   headers={**phone.headers, "Content-Type": "application/octet-stream"})
    assert upload.status_code == 413
    assert upload.json()["type"] == "urn:ietf:params:jmap:error:overQuota"
    assert "24 hours" in upload.json()["detail"]

    await db.execute("UPDATE jmap_upload SET created_at = now() - interval '25 hours' WHERE user_id = $1",
                     phone.user.id)
    again = await phone.http.post(f"/jmap/upload/{phone.account}", content=os.urandom(2 * MB),
                                  headers={**phone.headers, "Content-Type": "application/octet-stream"})
    assert again.status_code == 201  # yesterday's uploads no longer count: they expired
