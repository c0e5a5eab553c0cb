"""Drafts are mail, kept in step with Dovecot's Drafts: saved twice is one draft there, a change made by
another client arrives through sync, and Discard removes it in both places."""

from __future__ import annotations

from datetime import UTC, datetime

from plmail.domain.messages import Address
from tests.integration.sending.conftest import Outgoing, parsed


async def drafts_in_plmail(outgoing: Outgoing) -> list[str]:
    rows = await outgoing.services.db.fetch(
        """SELECT m.rfc_message_id FROM message m JOIN message_label ml ON ml.message_id = m.id
             JOIN label l ON l.id = ml.label_id
            WHERE m.account_id = $1 AND l.role = 'drafts' AND m.vanished_at IS NULL ORDER BY m.id""",
        outgoing.account_id)
    return [r["rfc_message_id"] for r in rows]


async def test_a_draft_saved_twice_is_one_draft_on_the_server(outgoing: Outgoing) -> None:
    first = await outgoing.save(await outgoing.content(subject="Plan", text_body="first words"))
    assert outgoing.folder("Drafts") == {first.rfc_message_id}
    assert "\\Draft" in outgoing.flags_of("Drafts", first.rfc_message_id)
    second = await outgoing.save(await outgoing.content(subject="Plan", text_body="first words, then more"),
                                 replaces=first.message_id)
    assert outgoing.folder("Drafts") == {second.rfc_message_id}
    raw = outgoing.raw_in("Drafts", second.rfc_message_id)
    assert b"first words, then more" in raw
    await outgoing.sync()
    assert await drafts_in_plmail(outgoing) == [second.rfc_message_id]  # the sync stored nothing twice


async def test_a_draft_changed_in_another_client_arrives(outgoing: Outgoing) -> None:
    saved = await outgoing.save(await outgoing.content(subject="Plan", text_body="mine"))
    # Thunderbird edits a draft the way IMAP allows: a new message appended, the old one expunged.
    edited = (
        f"From: {outgoing.address}\r\nTo: bea@example.net\r\nSubject: Plan (edited elsewhere)\r\n"
        f"Date: {datetime.now(UTC):%a, %d %b %Y %H:%M:%S +0000}\r\nMessage-ID: <edited@example.org>\r\n"
        "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nedited on the laptop\r\n"
    ).encode()
    with outgoing.mail.peer() as peer:
        peer.append(edited, "Drafts", ["\\Draft", "\\Seen"])
        for uid in peer.uids("Drafts"):
            if f"<{saved.rfc_message_id}>".encode() in peer.raw(uid, "Drafts"):
                peer.store(uid, "+FLAGS", "(\\Deleted)", "Drafts")
        peer.expunge("Drafts")
    await outgoing.sync()
    assert await drafts_in_plmail(outgoing) == ["edited@example.org"]
    loaded = await outgoing.services.drafts.load(
        outgoing.user.id, await outgoing.services.db.fetchval(
            "SELECT id FROM message WHERE rfc_message_id = 'edited@example.org'"))
    assert loaded.content.subject == "Plan (edited elsewhere)"
    assert "edited on the laptop" in (loaded.content.text_body or "")


async def test_discard_removes_the_draft_here_and_on_the_server(outgoing: Outgoing) -> None:
    saved = await outgoing.save(await outgoing.content(subject="Never mind"))
    assert saved.rfc_message_id in outgoing.folder("Drafts")
    await outgoing.services.drafts.discard(outgoing.user.id, saved.message_id)
    assert await outgoing.run_jobs() == ["push_draft"]  # the composition's push job deletes its copy
    assert outgoing.folder("Drafts") == set()
    assert await drafts_in_plmail(outgoing) == []
    await outgoing.sync()
    assert await drafts_in_plmail(outgoing) == []


async def test_attachments_and_html_become_real_mime(outgoing: Outgoing) -> None:
    from plmail.domain.outgoing import OutgoingAttachment

    content = await outgoing.content(
        subject="Grüße aus Köln", to=(Address("Jürgen Groß", "juergen@example.net"),),
        text_body="Bild anbei.", html_body='<p>Bild: <img src="cid:logo@x"></p>',
        attachments=(OutgoingAttachment("logo.png", "image/png", b"\x89PNG fake", content_id="logo@x"),
                     OutgoingAttachment("Bericht.pdf", "application/pdf", b"%PDF-1.4 fake")))
    saved = await outgoing.save(content)
    message = parsed(outgoing.raw_in("Drafts", saved.rfc_message_id))
    assert message.get_content_type() == "multipart/mixed"
    types = [p.get_content_type() for p in message.walk()]
    assert types == ["multipart/mixed", "multipart/alternative", "text/plain", "multipart/related", "text/html",
                     "image/png", "application/pdf"]
    # RFC 2047 encoded words for the non-ASCII header text
    assert "=?utf-8?" in message["Subject"].lower() and "=?utf-8?" in message["To"].lower()
