"""Building RFC 5322 messages to seed the fakes with: `rfc822(subject, sender=..., ...)` -> bytes."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime

_serial = itertools.count(1)


def rfc822(subject: str = "Hello", *, sender: str = "Bob Example <bob@example.org>",
           to: str = "alice@example.com", cc: str | None = None, body: str = "Hello there.",
           html: str | None = None, date: datetime | None = None, message_id: str | None = None,
           in_reply_to: str | None = None, attachments: Sequence[tuple[str, str, bytes]] = (),
           headers: Mapping[str, str] | None = None) -> bytes:
    """A well-formed message; `attachments` are (filename, mime type, bytes)."""
    message = EmailMessage(policy=SMTP)
    message["From"] = sender
    message["To"] = to
    if cc:
        message["Cc"] = cc
    message["Subject"] = subject
    message["Date"] = format_datetime(date or datetime(2026, 1, 2, 9, 30, tzinfo=UTC))
    message["Message-ID"] = message_id or f"<fake-{next(_serial)}@example.org>"
    if in_reply_to:
        message["In-Reply-To"] = in_reply_to
        message["References"] = in_reply_to
    for name, value in (headers or {}).items():
        message[name] = value
    message.set_content(body)
    if html is not None:
        message.add_alternative(html, subtype="html")
    for filename, mime_type, content in attachments:
        maintype, _, subtype = mime_type.partition("/")
        message.add_attachment(content, maintype=maintype, subtype=subtype, filename=filename)
    return message.as_bytes()
