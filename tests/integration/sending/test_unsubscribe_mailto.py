"""Unsubscribe by mail (RFC 2369 mailto, RFC 6068 subject/body): the request goes through the user's own transport
(the outbox and the account's SMTP server), from the address the list wrote to, and leaves no draft on the IMAP
server; a second click sends nothing."""

from __future__ import annotations

import email
import email.policy

from tests.integration.sending.conftest import Outgoing
from tests.support.jobs import run_queued
from tests.support.mail import make_message


async def test_mailto_unsubscribe_is_sent_once_through_the_accounts_smtp_server(outgoing: Outgoing) -> None:
    outgoing.mail.append([make_message(
        message_id="digest7@lists.example", subject="Digest 7", sender="Lists <digest@lists.example>",
        to=[outgoing.address], headers={"List-Id": "<digest.lists.example>",
                                        "List-Unsubscribe": "<mailto:leave@lists.example?subject=unsubscribe%20me>"})])
    await outgoing.sync()
    message_id = await outgoing.services.db.fetchval("SELECT id FROM message WHERE rfc_message_id = "
                                                   "'digest7@lists.example'")
    assert message_id is not None
    service = outgoing.services.unsubscribe
    outcome = await service.unsubscribe(outgoing.user.id, int(message_id))
    assert outcome.method == "mailto" and outcome.submission_id is not None
    again = await service.unsubscribe(outgoing.user.id, int(message_id))
    assert not again.first and again.submission_id is None
    await run_queued(outgoing.services, ("send_submission",))
    await outgoing.deliver(outcome.submission_id)
    [received] = outgoing.smtp.wait_for(1)
    assert received.rcpt_to == ("leave@lists.example",)
    assert received.mail_from == outgoing.address
    sent = email.message_from_bytes(received.data, policy=email.policy.default)
    assert sent["Subject"] == "unsubscribe me"
    await outgoing.sync()
    assert outgoing.folder("Drafts") == set()  # sent at once: never a draft on the server
    assert len(outgoing.smtp.received) == 1
