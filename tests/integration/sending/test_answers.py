"""Replies and forwards through SMTP and Dovecot: RFC 5322 §3.6.4's threading headers, one Re:/Fwd:, reply all
without the user's own addresses, the quoted original, forwarded attachments, the reply in its
conversation at once, and $answered / $forwarded on the original at the server."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from plmail.domain.messages import Address
from plmail.domain.outgoing import SubmissionState
from plmail.mail.replies import AnswerKind
from tests.integration.sending.conftest import Outgoing, parsed

CORPUS = Path(__file__).resolve().parents[4] / "shared" / "corpus"


def incoming(outgoing: Outgoing, *, subject: str = "Re: AW: Plans for Saturday", cc: str = "") -> bytes:
    """A message in a conversation: it answers <first@example.net> and names the whole chain."""
    return (
        "From: Bea Berg <bea@example.net>\r\n"
        f"To: Owner <{outgoing.address}>, Carl <carl@example.com>\r\n"
        + (f"Cc: {cc}\r\n" if cc else "")
        + f"Subject: {subject}\r\n"
        "Date: Sat, 28 Nov 2026 09:30:00 +0100\r\n"
        "Message-ID: <second@example.net>\r\n"
        "In-Reply-To: <first@example.net>\r\n"
        "References: <root@example.net> <first@example.net>\r\n"
        "Reply-To: Bea at home <bea.home@example.net>\r\n"
        "MIME-Version: 1.0\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n\r\n"
        "Shall we meet at ten?\r\nBea\r\n"
    ).encode()


async def stored_id(outgoing: Outgoing, rfc_id: str) -> int:
    value = await outgoing.services.db.fetchval(
        "SELECT id FROM message WHERE account_id = $1 AND rfc_message_id = $2", outgoing.account_id, rfc_id)
    assert value is not None
    return int(value)


async def test_a_reply_is_threaded_and_marks_the_original_answered_on_the_server(outgoing: Outgoing) -> None:
    outgoing.mail.append([incoming(outgoing)])
    await outgoing.sync()
    original = await stored_id(outgoing, "second@example.net")
    content = await outgoing.services.replies.start(outgoing.user.id, original, AnswerKind.REPLY)
    assert content.subject == "Re: Plans for Saturday"  # one Re:, whatever the chain had
    assert [a.address for a in content.to] == ["bea.home@example.net"]  # Reply-To wins over From
    assert content.cc == ()
    assert "> Shall we meet at ten?" in (content.text_body or "")
    submission = await outgoing.send(replace(content, text_body="Ten is fine.\n" + (content.text_body or "")))
    assert submission.state is SubmissionState.SENT
    [received] = outgoing.smtp.wait_for(1)
    message = received.message
    assert message["In-Reply-To"].strip() == "<second@example.net>"
    # The parent's References, then the parent itself.
    assert message["References"].split() == ["<root@example.net>", "<first@example.net>", "<second@example.net>"]
    assert message["Subject"] == "Re: Plans for Saturday"
    reply_id = message["Message-ID"].strip()[1:-1]
    # The reply is in the original's conversation at once, without waiting for a sync.
    threads = await outgoing.services.db.fetch(
        "SELECT DISTINCT thread_id FROM message WHERE account_id = $1 AND rfc_message_id = ANY($2::text[])",
        outgoing.account_id, ["second@example.net", reply_id])
    assert len(threads) == 1 and threads[0]["thread_id"] is not None
    # $answered reaches the server as \Answered on the original.
    await outgoing.services.propagation.run(outgoing.account_id)
    assert "\\Answered" in outgoing.flags_of("INBOX", "second@example.net")
    assert reply_id in outgoing.folder("Sent")


async def test_reply_all_answers_everyone_but_the_user(outgoing: Outgoing) -> None:
    outgoing.mail.append([incoming(outgoing, cc=f"Dora <dora@example.com>, Me again <{outgoing.address}>")])
    await outgoing.sync()
    original = await stored_id(outgoing, "second@example.net")
    content = await outgoing.services.replies.start(outgoing.user.id, original, AnswerKind.REPLY_ALL)
    to = [a.address for a in content.to]
    cc = [a.address for a in content.cc]
    assert to == ["bea.home@example.net", "carl@example.com"]
    assert cc == ["dora@example.com"]
    assert outgoing.address not in to + cc
    await outgoing.send(content)
    [received] = outgoing.smtp.wait_for(1)
    assert set(received.rcpt_to) == {"bea.home@example.net", "carl@example.com", "dora@example.com"}


async def test_a_forward_carries_the_original_attachment_and_marks_it_forwarded(outgoing: Outgoing) -> None:
    raw = (CORPUS / "python-email-testdata" / "msg_26.txt").read_bytes().replace(b"\r\n", b"\n").replace(
        b"\n", b"\r\n")
    outgoing.mail.append([raw])
    await outgoing.sync()
    original = await stored_id(outgoing, "6df65d354b.father.time@rpc.wooster.local")
    content = await outgoing.services.replies.start(outgoing.user.id, original, AnswerKind.FORWARD)
    assert content.subject == "Fwd: IMAP file test"
    assert content.to == () and content.in_reply_to == ()
    assert [a.filename for a in content.attachments] == ["clock.bmp"]
    assert "Simple email with attachment." in (content.text_body or "")
    await outgoing.send(replace(content, to=(Address("", "erik@example.com"),)))
    [received] = outgoing.smtp.wait_for(1)
    parts = [p for p in received.message.walk() if p.get_filename()]
    assert [p.get_filename() for p in parts] == ["clock.bmp"]
    original_part = next(p for p in parsed(raw).walk() if p.get_filename() == "clock.bmp")
    assert parts[0].get_payload(decode=True) == original_part.get_payload(decode=True)
    assert "Simple email with attachment." in received.data.decode()
    await outgoing.services.propagation.run(outgoing.account_id)
    assert "$Forwarded" in outgoing.flags_of("INBOX", "6df65d354b.father.time@rpc.wooster.local")


async def test_forward_as_attachment_sends_the_original_whole(outgoing: Outgoing) -> None:
    outgoing.mail.append([incoming(outgoing)])
    await outgoing.sync()
    original = await stored_id(outgoing, "second@example.net")
    content = await outgoing.services.replies.start(outgoing.user.id, original, AnswerKind.FORWARD_ATTACHED)
    await outgoing.send(replace(content, to=(Address("", "erik@example.com"),), text_body="See below."))
    [received] = outgoing.smtp.wait_for(1)
    attached = [p for p in received.message.walk() if p.get_content_type() == "message/rfc822"]
    assert len(attached) == 1
    inner = attached[0].get_payload()[0]
    assert inner["Message-ID"].strip() == "<second@example.net>"
