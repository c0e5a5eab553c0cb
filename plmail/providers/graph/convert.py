"""A Graph message as the pipeline takes it.

Graph describes a message as JSON and keeps its MIME bytes behind a second call, so plmail builds the
parsed message from the JSON and fetches the original lazily, on first use. An invitation is the
exception: its text/calendar section has no part of its own in Graph's object model, so a message with a
`meetingMessageType` is read from its raw MIME, whose calendar part the ICS extractor then finds.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from email.utils import format_datetime, formataddr

from plmail.domain.ingest import IngestedMessage, ProviderRef
from plmail.domain.messages import Address, HeaderValue, ParsedMessage
from plmail.mail.charsets import storable
from plmail.mail.ingest import parse_message
from plmail.mail.mime import MAX_BODY_CHARS, html_to_text, make_preview, message_ids
from plmail.providers.graph.models import Recipient, RemoteMessage

MEETING_HEADER = "X-Meeting-Message-Type"  # what the ICS extractor looks for when no calendar part is stored


def source_ref(graph_id: str) -> str:
    return f"graph:{graph_id}"


def _address(recipient: Recipient) -> Address:
    return Address(storable(recipient.name), storable(recipient.address))


def _header_list(recipients: tuple[Recipient, ...]) -> str:
    return ", ".join(formataddr((r.name, r.address)) for r in recipients)


def _content_hash(message: RemoteMessage) -> str:
    """Stable across moves and id changes: what the message says, not where it is."""
    basis = json.dumps([message.internet_message_id, message.subject, message.sent_at.isoformat()
                        if message.sent_at else None, message.sender.address if message.sender else None,
                        message.body], ensure_ascii=False)
    return hashlib.sha256(basis.encode("utf-8", "surrogatepass")).hexdigest()


def parsed_from_json(message: RemoteMessage) -> ParsedMessage:
    headers: dict[str, HeaderValue] = {}
    if message.internet_message_id:
        headers["Message-ID"] = message.internet_message_id
    headers["Subject"] = message.subject
    if message.sender is not None:
        headers["From"] = formataddr((message.sender.name, message.sender.address))
    for name, recipients in (("To", message.to), ("Cc", message.cc), ("Reply-To", message.reply_to)):
        if recipients:
            headers[name] = _header_list(recipients)
    if message.sent_at is not None:
        headers["Date"] = format_datetime(message.sent_at)
    if message.is_meeting and message.meeting_message_type:
        headers[MEETING_HEADER] = message.meeting_message_type
    if message.authentication_results:
        headers["Authentication-Results"] = list(message.authentication_results)
    body = storable(message.body)
    body_html = body if message.body_is_html and body.strip() else None
    body_text = (html_to_text(body) if body_html is not None else body)[:MAX_BODY_CHARS] or None
    return ParsedMessage(
        headers=headers,
        subject=storable(message.subject),
        from_address=message.sender.address if message.sender else None,
        from_name=(message.sender.name or None) if message.sender else None,
        to=tuple(_address(r) for r in message.to),
        cc=tuple(_address(r) for r in message.cc),
        bcc=tuple(_address(r) for r in message.bcc),
        reply_to=tuple(_address(r) for r in message.reply_to),
        sent_at=message.sent_at,
        message_id=next(iter(message_ids(message.internet_message_id)), None),
        in_reply_to=(),
        references=(),
        body_text=body_text,
        body_html=body_html,
        parts=(),
        has_attachments=message.has_attachments,
        size=len(body.encode("utf-8", "surrogatepass")),
        content_hash=_content_hash(message),
        preview=make_preview(body_text) or storable(message.preview),
        defects=(),
    )


def ingested(account_id: int, message: RemoteMessage, *, label_ids: tuple[int, ...], raw: bytes | None = None,
             received_fallback: datetime | None = None) -> IngestedMessage:
    """The pipeline's DTO; with `raw`, parsed from the MIME bytes (and those stored), else from the JSON."""
    received_at = message.received_at or received_fallback
    if raw is not None:
        return parse_message(
            raw, account_id=account_id, received_at=received_at, ref=ProviderRef(key=message.id),
            provider_thread_key=message.conversation_id, seen=message.is_read, starred=message.flagged,
            is_draft=message.is_draft, label_ids=label_ids, source_ref=source_ref(message.id),
        )
    return IngestedMessage(
        account_id=account_id, parsed=parsed_from_json(message), raw=None, received_at=received_at,
        ref=ProviderRef(key=message.id), provider_thread_key=message.conversation_id, seen=message.is_read,
        starred=message.flagged, is_draft=message.is_draft, label_ids=label_ids, source_ref=source_ref(message.id),
    )
