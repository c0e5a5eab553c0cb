"""The composer's web paths over HTTP through the ASGI app, against Dovecot and the suite's SMTP server:
address completion from harvested contacts, autosave with the editor's HTML cleaned before it is stored,
pasted images kept as cid: parts, the undo toast and Undo through htmx, schedule send, a failed send's reason
on the reopened draft, and Settings → Sending (signatures, default identity, quoting, plain text, aliases)."""

from __future__ import annotations

import email
import email.policy
import re
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from zoneinfo import ZoneInfo

import httpx
import pytest

from plmail.domain.messages import Address
from plmail.domain.outgoing import SubmissionState
from tests.integration.sending.conftest import Outgoing
from tests.support.jobs import run_queued
from tests.support.web import csrf_token, sign_in

HTMX = {"HX-Request": "true"}
PNG = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
       b"\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82")


@pytest.fixture
async def http(outgoing: Outgoing, client: httpx.AsyncClient) -> httpx.AsyncClient:
    assert (await sign_in(client, outgoing.user.email, "correct horse")).status_code == 200
    return client


async def post(http: httpx.AsyncClient, fields: dict[str, str], *, files: list[tuple[str, tuple[str, bytes, str]]]
               | None = None, headers: dict[str, str] | None = None, path: str = "/compose") -> httpx.Response:
    token = await csrf_token(http, "/compose")
    return await http.post(path, data={**fields, "_csrf_token": token}, files=files or None, headers=headers)


def message_of(raw: bytes) -> EmailMessage:
    parsed = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(parsed, EmailMessage)
    return parsed


async def draft_raw(outgoing: Outgoing, message_id: int) -> bytes:
    path = await outgoing.services.db.fetchval("SELECT raw_path FROM message WHERE id = $1", message_id)
    return await outgoing.services.blobs.get(path)


def incoming(outgoing: Outgoing, sender: str, subject: str, message_id: str) -> bytes:
    return (f"From: {sender}\r\nTo: {outgoing.address}\r\nSubject: {subject}\r\nMessage-ID: <{message_id}>\r\n"
            "Date: Mon, 30 Nov 2026 18:00:00 +0000\r\n\r\nHello there.\r\n").encode()


async def test_completion_offers_harvested_contacts_after_two_characters_people_written_to_first(
    http: httpx.AsyncClient, outgoing: Outgoing
) -> None:
    outgoing.mail.append([incoming(outgoing, f"Berta Bergmann <berta{i}@example.net>", f"Hi {i}", f"b{i}@x")
                          for i in range(10)])
    outgoing.mail.append([incoming(outgoing, "Bernd Bauer <bernd@example.com>", "Hi", "bernd@x")])
    await outgoing.sync()
    await outgoing.send(await outgoing.content(to=(Address("", "bernd@example.com"),)))  # written to
    one = await http.get("/compose/contacts", params={"field": "to", "to": "b"})
    assert one.status_code == 200 and 'role="option"' not in one.text  # one character: nothing yet
    two = await http.get("/compose/contacts", params={"field": "to", "to": "be"})
    options = re.findall(r'data-value="([^"]+)"', two.text)
    assert len(options) == 8  # eight suggestions, however many match
    assert "bernd@example.com" in options[0]  # written to: first
    by_name = await http.get("/compose/contacts", params={"field": "cc", "cc": "ann@example.org, Berg"})
    assert all("berta" in o for o in re.findall(r'data-value="([^"]+)"', by_name.text))  # a word of the name
    chosen = await http.get("/compose/contacts",
                            params={"field": "bcc", "bcc": "bernd@example.com, berta1@example.net, ber"})
    values = " ".join(re.findall(r'data-value="([^"]+)"', chosen.text))
    assert "bernd@example.com" not in values and "berta1@" not in values and "berta2@" in values


async def test_autosave_cleans_the_html_before_storing_it_and_replaces_the_previous_version(
    http: httpx.AsyncClient, outgoing: Outgoing
) -> None:
    identity = (await outgoing.identity()).id
    hostile = ('<div>Hello <strong>Bea</strong><script>alert(1)</script></div>'
               '<div onclick="steal()">click <a href="javascript:alert(2)">me</a> '
               '<a href="https://example.org/x">site</a></div><img src="https://tracker.example/p.gif">'
               '<ul><li>one</li><li>two</li></ul><blockquote>quoted</blockquote>')
    fields = {"identity_id": str(identity), "to": "bea@example.net", "subject": "Plans", "body_format": "rich",
              "html": hostile, "text": "ignored in rich mode", "autosave": "1", "action": "save"}
    assert (await http.post("/compose", data=fields)).status_code == 403  # no CSRF token, nothing stored
    first = await post(http, fields)
    assert first.status_code == 200, first.text
    first_id = int(first.headers["X-Draft-Id"])
    message = message_of(await draft_raw(outgoing, first_id))
    html_part = message.get_body(("html",))
    text_part = message.get_body(("plain",))
    assert html_part is not None and text_part is not None  # both parts
    markup = html_part.get_content()
    assert "<strong>Bea</strong>" in markup and "<li>one</li>" in markup and '<blockquote type="cite"' in markup
    for forbidden in ("<script", "alert(1)", "onclick", "javascript:", "tracker.example"):
        assert forbidden not in markup
    text = text_part.get_content()
    assert "Hello Bea" in text and "- one" in text and "> quoted" in text and "site <https://example.org/x>" in text
    second = await post(http, {**fields, "draft_id": str(first_id), "html": "<div>Shorter now</div>"})
    second_id = int(second.headers["X-Draft-Id"])
    assert second_id != first_id
    assert await outgoing.services.db.fetchval("SELECT count(*) FROM message WHERE id = $1", first_id) == 0
    await run_queued(outgoing.services, ("push_draft", "discard_draft"))
    drafts = outgoing.folder("Drafts")
    assert len(drafts) == 1  # the provider's Drafts holds the newest version only
    bad = await post(http, {**fields, "draft_id": str(second_id), "subject": "two\r\nBcc: x@evil"})
    assert bad.status_code == 400 and "line breaks" in bad.text  # "Not saved: reason"


async def test_a_pasted_image_becomes_an_inline_part_and_goes_when_removed_from_the_text(
    http: httpx.AsyncClient, outgoing: Outgoing
) -> None:
    identity = (await outgoing.identity()).id
    fields = {"identity_id": str(identity), "to": "bea@example.net", "subject": "Look", "body_format": "rich",
              "html": "<div>Look at this</div>", "autosave": "1"}
    uploaded = await post(http, fields, files=[("inline_images", ("pasted.png", PNG, "image/png"))])
    [url] = uploaded.headers["X-Inline-Urls"].split()
    shown = await http.get(url)
    assert shown.status_code == 200 and shown.content == PNG and shown.headers["content-type"] == "image/png"
    draft = uploaded.headers["X-Draft-Id"]
    with_image = await post(http, {**fields, "draft_id": draft,
                                   "html": f'<div>Look at this</div><figure><img src="{url}" width="1"></figure>'})
    message = message_of(await draft_raw(outgoing, int(with_image.headers["X-Draft-Id"])))
    cid = url.rsplit("/", 1)[1].replace("%40", "@")
    html_part = message.get_body(("html",))
    assert html_part is not None and f'src="cid:{cid}"' in html_part.get_content()
    images = [p for p in message.walk() if p.get_content_type() == "image/png"]
    assert len(images) == 1 and images[0]["Content-ID"] == f"<{cid}>"
    assert "attachment" not in (images[0]["Content-Disposition"] or "")  # inline, not listed as a file
    assert 'name="keep_part"' not in with_image.text
    reopened = await http.get(f"/compose?draft={with_image.headers['X-Draft-Id']}")
    assert f"/message/{with_image.headers['X-Draft-Id']}/cid/" in reopened.text  # shown from its own part
    without = await post(http, {**fields, "draft_id": with_image.headers["X-Draft-Id"],
                                "html": "<div>Look at this (no image)</div>"})
    gone = message_of(await draft_raw(outgoing, int(without.headers["X-Draft-Id"])))
    assert not [p for p in gone.walk() if p.get_content_type() == "image/png"]


async def test_send_through_htmx_shows_the_undo_toast_and_undo_brings_the_draft_back(
    http: httpx.AsyncClient, outgoing: Outgoing
) -> None:
    identity = (await outgoing.identity()).id
    sent = await post(http, {"identity_id": str(identity), "to": "bea@example.net", "subject": "Oops",
                             "body_format": "plain", "text": "Not yet, please.", "action": "send"}, headers=HTMX)
    assert sent.status_code == 200
    assert "Sending…" in sent.text and "Undo" in sent.text and 'hx-trigger="every 1s"' in sent.text
    submission_id = int(re.search(r'data-submission-id="(\d+)"', sent.text).group(1))  # type: ignore[union-attr]
    polled = await http.get(f"/compose/submission/{submission_id}", headers=HTMX)
    assert "Undo" in polled.text  # still inside the 10 s
    token = await csrf_token(http, "/compose")
    undone = await http.post(f"/compose/outbox/{submission_id}/cancel", headers={**HTMX, "x-csrftoken": token})
    assert undone.status_code == 200
    assert "Not yet, please." in undone.text and "it is a draft again" in undone.text
    await outgoing.services.db.execute("UPDATE submission SET send_at = now()")
    await run_queued(outgoing.services, ("send_submission",))
    assert outgoing.smtp.received == []


async def test_a_550_shows_the_servers_reason_on_the_reopened_draft_with_everything_typed(
    http: httpx.AsyncClient, outgoing: Outgoing
) -> None:
    outgoing.smtp.faults.rejected = {"nobody@example.net"}
    identity = (await outgoing.identity()).id
    sent = await post(http, {"identity_id": str(identity), "to": "nobody@example.net", "subject": "Lost?",
                             "body_format": "plain", "text": "A long careful text.", "action": "send"},
                      headers=HTMX)
    submission_id = int(re.search(r'data-submission-id="(\d+)"', sent.text).group(1))  # type: ignore[union-attr]
    await outgoing.services.db.execute("UPDATE submission SET send_at = now()")
    await run_queued(outgoing.services, ("send_submission",))
    polled = await http.get(f"/compose/submission/{submission_id}", headers=HTMX)
    assert "Not sent:" in polled.text and "550" in polled.text and "nobody@example.net" in polled.text
    assert "A long careful text." in polled.text and "Lost?" in polled.text  # the composer is back, as typed
    submission = await outgoing.services.outbox.owned(outgoing.user.id, submission_id)
    assert submission.state is SubmissionState.FAILED
    reopened = await http.get(f"/compose?draft={submission.message_id}")
    assert "550" in reopened.text and "A long careful text." in reopened.text


async def test_schedule_send_tomorrow_morning_is_listed_under_scheduled_with_cancel(
    http: httpx.AsyncClient, outgoing: Outgoing
) -> None:
    identity = (await outgoing.identity()).id
    sent = await post(http, {"identity_id": str(identity), "to": "bea@example.net", "subject": "Tomorrow",
                             "body_format": "plain", "text": "Good morning.", "schedule": "tomorrow"}, headers=HTMX)
    assert "Scheduled for" in sent.text and 'hx-trigger' not in sent.text  # nothing to poll for a day
    [entry] = await outgoing.services.outbox.outbox(outgoing.user.id)
    berlin = ZoneInfo("Europe/Berlin")  # the user's zone: tomorrow at 08:00 there
    expected = (datetime.now(berlin) + timedelta(days=1)).date()
    local = entry.submission.send_at.astimezone(berlin)
    assert (local.date(), local.hour, local.minute) == (expected, 8, 0)
    page = await http.get("/compose/outbox")
    scheduled = page.text.split('id="scheduled"', 1)[1].split("</section>", 1)[0]
    assert "Tomorrow" in scheduled and "Cancel" in scheduled
    too_soon = await post(http, {"identity_id": str(identity), "to": "bea@example.net", "subject": "Soon",
                                 "text": "x", "schedule": "custom",
                                 "send_at": datetime.now(berlin).strftime("%Y-%m-%dT%H:%M")})
    assert too_soon.status_code == 400 and "at least a minute ahead" in too_soon.text
    assert entry.submission.send_at > datetime.now(UTC) + timedelta(hours=1)


async def test_sending_settings_signature_default_identity_quoting_plain_text_and_aliases(
    http: httpx.AsyncClient, outgoing: Outgoing
) -> None:
    primary = await outgoing.identity()
    settings = await http.get("/settings/sending")
    assert settings.status_code == 200
    forms = re.findall(r"<form\b[^>]*method=\"post\".*?</form>", settings.text, re.S)
    assert forms and all("_csrf_token" in f for f in forms)  # every form carries the token
    refused = await http.post("/settings/sending/", data={"undo_delay": "5"})
    assert refused.status_code == 403  # no token, no change
    token = await csrf_token(http, "/settings/sending")
    alias = await http.post(f"/settings/sending/accounts/{outgoing.account_id}/aliases",
                            data={"email": "team@example.org", "name": "The Team", "_csrf_token": token})
    assert alias.status_code == 200 and "team@example.org" in alias.text
    team = next(i for i in await outgoing.services.identities.for_user(outgoing.user.id)
                if i.email == "team@example.org")
    await http.post(f"/settings/sending/identities/{team.id}",
                    data={"name": "The Team", "signature_format": "rich",
                          "signature_html": "<div><strong>Team</strong> · <a href='https://example.org'>site</a>"
                                            "<script>x()</script></div>", "_csrf_token": token})
    await http.post(f"/settings/sending/identities/{primary.id}",
                    data={"name": "Owner", "signature_format": "plain", "signature_text": "Owner\nExample Ltd",
                          "_csrf_token": token})
    team = await outgoing.services.identities.owned(outgoing.user.id, team.id)
    assert "<strong>Team</strong>" in team.html_signature and "<script" not in team.html_signature
    assert team.text_signature.startswith("Team")
    saved = await http.post("/settings/sending/", data={"default_identity_id": str(team.id), "undo_delay": "30",
                                                        "reply_quoting": "none", "_csrf_token": token})
    assert saved.status_code == 200
    prefs = await outgoing.services.sending_preferences.load(outgoing.user.id)
    assert (prefs.default_identity_id, prefs.undo_delay, prefs.reply_quoting.value, prefs.plain_text) == (
        team.id, 30, "none", False)
    new = await http.get("/compose")
    selected = re.search(r'<option value="(\d+)" selected', new.text)
    assert selected is not None and int(selected.group(1)) == team.id  # the default identity preselected
    assert "&lt;strong&gt;Team&lt;/strong&gt;" in new.text  # its signature in the editor's HTML
    assert 'data-format="rich"' in new.text
    outgoing.mail.append([incoming(outgoing, "Bea <bea@example.net>", "Dinner", "dinner@example.net")])
    await outgoing.sync()
    original = await outgoing.services.db.fetchval("SELECT id FROM message WHERE rfc_message_id = 'dinner@example.net'")
    answer = await http.get(f"/compose?answer={original}&mode=reply", headers=HTMX)
    assert "Re: Dinner" in answer.text and "Hello there." not in answer.text  # quoting off
    assert "-- \nOwner\nExample Ltd" in answer.text  # the identity it arrived on, with its signature
    assert "<html" not in answer.text  # inline: the composer alone
    await http.post("/settings/sending/", data={"undo_delay": "10", "reply_quoting": "below", "plain_text": "1",
                                                 "_csrf_token": token})
    plain = await http.get("/compose")
    assert 'data-format="plain"' in plain.text
    quoted = await http.get(f"/compose?answer={original}&mode=reply")
    assert "&gt; Hello there." in quoted.text
    wrong = await http.post("/settings/sending/", data={"undo_delay": "99", "reply_quoting": "below",
                                                        "_csrf_token": token})
    assert wrong.status_code == 400 and "between 0 and 60 seconds" in wrong.text
    await http.post(f"/settings/sending/identities/{team.id}/primary", data={"_csrf_token": token})
    assert (await outgoing.services.identities.primary(outgoing.user.id, outgoing.account_id)).id == team.id  # type: ignore[union-attr]
    await http.post(f"/settings/sending/identities/{primary.id}/primary", data={"_csrf_token": token})
    removed = await http.post(f"/settings/sending/identities/{team.id}/remove", data={"_csrf_token": token})
    assert removed.status_code == 200 and "team@example.org" not in removed.text
    own = await http.post(f"/settings/sending/identities/{primary.id}/remove", data={"_csrf_token": token})
    assert own.status_code == 400 and "Only aliases you added can be removed" in own.text


async def test_compose_from_a_page_opens_in_place_of_its_content_and_a_reload_or_history_gets_the_page(
    http: httpx.AsyncClient, outgoing: Outgoing
) -> None:
    inbox = await http.get("/")
    assert 'hx-get="/compose"' in inbox.text and 'hx-target="#main"' in inbox.text and 'data-key="c"' in inbox.text
    panel = await http.get("/compose", headers=HTMX)
    assert panel.status_code == 200
    # issue 32: a panel docked over the page, a dialog named by its title bar
    assert 'role="dialog"' in panel.text and ">New message</h2>" in panel.text
    assert "data-composer" in panel.text and "_csrf_token" in panel.text
    assert 'class="sidebar"' not in panel.text and "<html" not in panel.text  # the composer, not the page
    for headers in ({}, {**HTMX, "HX-History-Restore-Request": "true"}):  # a reload; htmx missing its cache
        page = await http.get("/compose", headers=headers)
        assert page.status_code == 200 and 'class="sidebar"' in page.text and "<html" in page.text


async def test_opening_a_forward_with_files_stores_nothing_and_the_first_save_carries_the_kept_files(
    http: httpx.AsyncClient, outgoing: Outgoing
) -> None:
    """Issue 39 rule 7 and issue 29: a GET (a link, a prefetch) stores, sends and pushes nothing; the forward's
    files are listed from the original and go into the draft when it is first saved — the ones kept."""
    outgoing.mail.append([(
        f"From: Bea <bea@example.net>\r\nTo: {outgoing.address}\r\nSubject: Agenda\r\nMessage-ID: <agenda@x>\r\n"
        'Date: Mon, 30 Nov 2026 18:00:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"'
        "\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nTwo files.\r\n--b\r\nContent-Type: text/plain; name=a.txt\r\n"
        "Content-Disposition: attachment; filename=a.txt\r\n\r\nfirst file\r\n--b\r\nContent-Type: text/plain; "
        "name=b.txt\r\nContent-Disposition: attachment; filename=b.txt\r\n\r\nsecond file\r\n--b--\r\n").encode()])
    await outgoing.sync()
    db = outgoing.services.db
    original = await db.fetchval("SELECT id FROM message WHERE rfc_message_id = 'agenda@x'")
    before = await db.fetchval("SELECT count(*) FROM message")
    for _ in range(2):  # opened twice, as a prefetch and a click would
        page = await http.get("/compose", params={"answer": original, "mode": "forward"})
        assert page.status_code == 200 and "a.txt" in page.text and "b.txt" in page.text
        inline = await http.get("/compose", params={"answer": original, "mode": "forward"}, headers=HTMX)
        assert inline.status_code == 200
    assert await db.fetchval("SELECT count(*) FROM message") == before  # nothing stored
    assert await db.fetchval("SELECT count(*) FROM draft_version") == 0
    assert await run_queued(outgoing.services, ("push_draft", "discard_draft")) == []  # nothing pushed
    assert outgoing.folder("Drafts") == set()

    keep = re.findall(r'name="keep_part" value="([^"]+)"', page.text)
    assert keep == ["fwd:0", "fwd:1"]
    assert f'name="forwards" value="{original}"' in page.text
    identity = (await outgoing.identity()).id
    saved = await post(http, {"identity_id": str(identity), "to": "carl@example.com", "subject": "Fwd: Agenda",
                              "body_format": "plain", "text": "See below.", "forwards": str(original),
                              "forward_mode": "forward", "keep_part": "fwd:1", "autosave": "1", "action": "save"})
    assert saved.status_code == 200, saved.text
    draft = message_of(await draft_raw(outgoing, int(saved.headers["X-Draft-Id"])))
    assert [p.get_filename() for p in draft.iter_attachments()] == ["b.txt"]  # the one kept
    assert saved.headers["X-Composition-Id"] == saved.headers["X-Draft-Id"]  # the composition's first version
