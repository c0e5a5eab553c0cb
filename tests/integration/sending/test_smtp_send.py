"""Sending through a real SMTP server (aiosmtpd, AUTH over STARTTLS) from an IMAP account on Dovecot: what
arrives, what is kept in Sent, and the headers RFC 5322 asks for."""

from __future__ import annotations

import email.utils
import re

from plmail.domain.messages import Address
from plmail.domain.outgoing import SubmissionState
from tests.integration.sending.conftest import Outgoing, parsed

# RFC 5322 §3.6.4: msg-id = "<" id-left "@" id-right ">"
MSG_ID = re.compile(r"^<[^<>@\s]+@[^<>@\s]+>$")


async def test_a_new_message_arrives_with_its_headers_and_its_copy_is_in_sent(outgoing: Outgoing) -> None:
    content = await outgoing.content(cc=(Address("", "carl@example.com"),), bcc=(Address("", "dora@example.com"),))
    submission = await outgoing.send(content)
    assert submission.state is SubmissionState.SENT
    [received] = outgoing.smtp.wait_for(1)
    assert received.mail_from == outgoing.address
    assert set(received.rcpt_to) == {"bea@example.net", "carl@example.com", "dora@example.com"}
    message = received.message
    assert email.utils.parseaddr(message["From"])[1] == outgoing.address
    assert message["Bcc"] is None and b"dora@example.com" not in received.data.split(b"\r\n\r\n")[0]
    assert MSG_ID.match(message["Message-ID"].strip())
    assert message["Message-ID"].strip().endswith("@example.org>")  # the identity's domain
    assert message["Date"] and message["Subject"] == "Hello"
    assert outgoing.smtp.logins and outgoing.smtp.logins[-1].endswith(":ok")
    message_id = message["Message-ID"].strip()[1:-1]
    # The copy in Sent keeps the Bcc (it is the sender's record), and is marked read.
    copy = parsed(outgoing.raw_in("Sent", message_id))
    assert "dora@example.com" in (copy["Bcc"] or "")
    assert "\\Seen" in outgoing.flags_of("Sent", message_id)
    assert message_id not in outgoing.folder("Drafts")
    # plmail holds it once, in Sent, and a sync does not store the Sent copy a second time.
    await outgoing.sync()
    rows = await outgoing.services.db.fetch(
        """SELECT m.id, array_agg(l.role) AS roles FROM message m JOIN message_label ml ON ml.message_id = m.id
             JOIN label l ON l.id = ml.label_id WHERE m.account_id = $1 AND m.rfc_message_id = $2 GROUP BY m.id""",
        outgoing.account_id, message_id)
    assert len(rows) == 1 and "sent" in rows[0]["roles"] and "drafts" not in rows[0]["roles"]
