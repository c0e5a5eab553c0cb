"""The browser-free web path: the composer's form posted over HTTP through the ASGI app — a new message with
an attachment, a reply from the thread, undo from the outbox, and the refusals shown on the page with
everything typed still there."""

from __future__ import annotations

import re

import httpx
import pytest

from plmail.domain.enums import ProviderKind
from plmail.services import Services
from tests.integration.sending.conftest import Outgoing
from tests.support.jobs import run_queued
from tests.support.repos import account_rows
from tests.support.web import csrf_token, sign_in


@pytest.fixture
async def browser(outgoing: Outgoing, client: httpx.AsyncClient) -> httpx.AsyncClient:
    assert (await sign_in(client, outgoing.user.email, "correct horse")).status_code == 200
    return client


async def compose(http: httpx.AsyncClient, fields: dict[str, str], files: list[tuple[str, tuple[str, bytes, str]]]
                  | None = None, path: str = "/compose") -> httpx.Response:
    token = await csrf_token(http, path)
    return await http.post("/compose", data={**fields, "_csrf_token": token}, files=files or None)


async def test_a_new_message_with_an_attachment_is_sent_after_the_undo_delay(
    browser: httpx.AsyncClient, outgoing: Outgoing
) -> None:
    identity = (await outgoing.identity()).id
    page = await browser.get("/compose")
    assert page.status_code == 200 and outgoing.address in page.text
    sent = await compose(browser, {"identity_id": str(identity), "to": "Bea <bea@example.net>, carl@example.com",
                                   "subject": "Photos", "text": "Here they are.", "action": "send"},
                         files=[("attachments", ("beach.jpg", b"\xff\xd8\xff fake jpeg", "image/jpeg"))])
    assert sent.status_code == 200 and "/compose/outbox" in str(sent.url)
    assert "Undo" in sent.text  # the toast's Undo, for the undo delay
    await outgoing.services.db.execute("UPDATE submission SET send_at = now()")  # the delay passes
    await run_queued(outgoing.services, ("send_submission", "push_draft", "file_sent_copy"))
    [received] = outgoing.smtp.wait_for(1)
    assert set(received.rcpt_to) == {"bea@example.net", "carl@example.com"}
    assert [p.get_filename() for p in received.message.walk() if p.get_filename()] == ["beach.jpg"]
    assert received.message["Message-ID"].strip()[1:-1] in outgoing.folder("Sent")


async def test_undo_from_the_outbox_reopens_the_draft(browser: httpx.AsyncClient, outgoing: Outgoing) -> None:
    identity = (await outgoing.identity()).id
    sent = await compose(browser, {"identity_id": str(identity), "to": "bea@example.net", "subject": "Oops",
                                   "text": "Not yet.", "action": "send"})
    submission_id = re.search(r'data-submission-id="(\d+)"', sent.text)
    assert submission_id is not None
    token = await csrf_token(browser, "/compose/outbox")
    undone = await browser.post(f"/compose/outbox/{submission_id.group(1)}/cancel", data={"_csrf_token": token})
    assert undone.status_code == 200 and "/compose" in str(undone.url) and "Not yet." in undone.text
    await outgoing.services.db.execute("UPDATE submission SET send_at = now()")
    await run_queued(outgoing.services, ("send_submission",))
    assert outgoing.smtp.received == []


async def test_a_reply_from_the_thread_is_threaded(browser: httpx.AsyncClient, outgoing: Outgoing) -> None:
    outgoing.mail.append([(
        "From: Bea <bea@example.net>\r\nTo: " + outgoing.address + "\r\nSubject: Dinner\r\n"
        "Message-ID: <dinner@example.net>\r\nDate: Mon, 30 Nov 2026 18:00:00 +0000\r\n\r\nAt eight?\r\n").encode()])
    await outgoing.sync()
    original = await outgoing.services.db.fetchval("SELECT id FROM message WHERE rfc_message_id = 'dinner@example.net'")
    thread = await outgoing.services.db.fetchval("SELECT thread_id FROM message WHERE id = $1", original)
    page = await browser.get(f"/thread/{thread}")
    assert f"/compose?answer={original}&amp;mode=reply" in page.text
    form = await browser.get(f"/compose?answer={original}&mode=reply")
    assert "Re: Dinner" in form.text and "&gt; At eight?" in form.text
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form.text))
    identity = (await outgoing.identity()).id
    sent = await compose(browser, {**fields, "identity_id": str(identity), "to": "bea@example.net",
                                   "subject": "Re: Dinner", "text": "Eight is good.", "action": "send"})
    assert sent.status_code == 200
    await outgoing.services.db.execute("UPDATE submission SET send_at = now()")
    await run_queued(outgoing.services, ("send_submission", "push_draft", "file_sent_copy"))
    [received] = outgoing.smtp.wait_for(1)
    assert received.message["In-Reply-To"].strip() == "<dinner@example.net>"
    reply_thread = await outgoing.services.db.fetchval(
        "SELECT thread_id FROM message WHERE rfc_message_id = $1", received.message["Message-ID"].strip()[1:-1])
    assert reply_thread == thread


async def test_header_injection_and_a_foreign_from_are_refused_and_nothing_typed_is_lost(
    browser: httpx.AsyncClient, outgoing: Outgoing
) -> None:
    identity = (await outgoing.identity()).id
    injected = await compose(browser, {"identity_id": str(identity), "to": "bea@example.net",
                                       "subject": "hi\r\nBcc: x@evil", "text": "my long text", "action": "send"})
    assert injected.status_code == 400
    assert "line breaks" in injected.text and "my long text" in injected.text
    other = await outgoing.services.users.create_user("other@example.org", "correct horse")
    theirs = await account_rows(outgoing.services).create(user_id=other.id, provider_kind=ProviderKind.LOCAL,
                                                          name="Theirs", email="other@example.org")
    their_identity = await outgoing.services.identities.primary(other.id, theirs)
    assert their_identity is not None
    foreign = await compose(browser, {"identity_id": str(their_identity.id), "to": "bea@example.net",
                                      "subject": "As someone else", "text": "kept", "action": "send"})
    assert foreign.status_code == 400 and "not one of your identities" in foreign.text and "kept" in foreign.text
    assert outgoing.smtp.received == []


async def test_a_draft_synced_from_the_provider_is_shown_as_a_draft_not_as_mail_to_answer(
    browser: httpx.AsyncClient, outgoing: Outgoing
) -> None:
    """IMAP keeps a draft's mark as the \\Draft system flag (RFC 3501 §2.3.2), not JMAP's $draft keyword."""
    outgoing.mail.append([(
        "From: " + outgoing.address + "\r\nTo: Bea <bea@example.net>\r\nSubject: Half written\r\n"
        "Message-ID: <half@example.org>\r\nDate: Mon, 30 Nov 2026 18:00:00 +0000\r\n\r\nDear Bea,\r\n").encode()],
        folder="Drafts", flags=["\\Draft", "\\Seen"])
    await outgoing.sync()
    draft = await outgoing.services.db.fetchrow(
        "SELECT id, thread_id FROM message WHERE rfc_message_id = 'half@example.org'")
    page = await browser.get(f"/thread/{draft['thread_id']}")
    assert page.status_code == 200
    assert f'href="/compose?draft={draft["id"]}"' in page.text  # Edit draft
    assert f"/compose?answer={draft['id']}" not in page.text  # a draft is no mail to reply to


async def test_compose_before_any_account_says_to_connect_one(
    client: httpx.AsyncClient, services: Services
) -> None:
    """Not "not found": a new user who presses Compose is told why there is nothing to write from, and where to go."""
    await services.users.create_user("new@example.org", "correct horse", time_zone="Europe/Berlin")
    assert (await sign_in(client, "new@example.org", "correct horse")).status_code == 200
    page = await client.get("/compose")
    assert page.status_code == 200
    assert "Connect an account to send mail from." in page.text
    assert 'href="/accounts#connect"' in page.text
    # The docked panel (the "c" key) is an htmx request: the browser goes to that page.
    panel = await client.get("/compose", headers={"HX-Request": "true"})
    assert panel.status_code == 200 and panel.headers["HX-Redirect"] == "/compose"
    # A draft or a message that is not there stays "not found".
    assert (await client.get("/compose?draft=999999")).status_code == 404
