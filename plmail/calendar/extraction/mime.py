"""Calendar parts and an extraction context straight from raw RFC 822 bytes.

Used where no stored parts exist: a Graph message (whose object model has no part for a
text/calendar section inside multipart/alternative), ``plmail extract`` on files, benchmarks.
``compat32`` keeps parsing cheap, and the walk is iterative and bounded, so a hostile nesting
depth costs a bounded amount of work.
"""

from __future__ import annotations

import email
import email.errors
import email.header
import email.parser
import email.policy
from datetime import datetime
from email.message import Message
from email.utils import getaddresses, parsedate_to_datetime

from plmail.calendar.extraction.context import CALENDAR_CONTENT_TYPES
from plmail.calendar.extraction.text import decode_bytes
from plmail.domain.calendar import AttachmentFacts, CalendarPart, ExtractionContext, RawMimeLoader
from plmail.mail.public import READING_POLICY, bound_message

MAX_PARTS = 500
MAX_DEPTH = 40
MAX_HEADER_CHARS = 4_000


def calendar_parts_from_mime(raw: bytes) -> tuple[CalendarPart, ...]:
    """Every text/calendar or application/ics section, by content type alone, in document order."""
    return tuple(_calendar_part(part) for part in _leaves(_parse(raw)) if _is_calendar(part))


def context_from_mime(
    raw: bytes,
    *,
    message_id: int | None = None,
    account_id: int | None = None,
    received_at: datetime | None = None,
    raw_mime_loader: RawMimeLoader | None = None,
) -> ExtractionContext:
    """An extraction context for a message known only by its bytes (which are also what its loader returns,
    unless another is given)."""
    message = _parse(raw)
    headers: dict[str, str | list[str]] = {}
    for name, value in message.items():
        text = str(value)[:MAX_HEADER_CHARS]
        existing = headers.get(name)
        if existing is None:
            headers[name] = text
        elif isinstance(existing, list):
            existing.append(text)
        else:
            headers[name] = [existing, text]
    calendar: list[CalendarPart] = []
    attachments: list[AttachmentFacts] = []
    html: str | None = None
    for part in _leaves(message):
        if _is_calendar(part):
            calendar.append(_calendar_part(part))
        elif html is None and part.get_content_type() == "text/html":
            payload = _payload(part)
            html = decode_bytes(payload, part.get_content_charset()) if payload else None
        elif part.get_content_maintype() != "text" or part.get_filename():
            attachments.append(AttachmentFacts(part.get_content_type(), _filename(part)))

    async def own_bytes() -> bytes | None:
        return raw

    return ExtractionContext(
        message_id=message_id,
        account_id=account_id,
        received_at=received_at,
        sent_at=_date(message.get("Date")),
        subject=_decoded(message.get("Subject")),
        sender=_address(message.get("From")),
        headers=headers,
        calendar_parts=tuple(calendar),
        body_html=html,
        raw_mime_loader=raw_mime_loader or own_bytes,
        attachments=tuple(attachments),
    )


def _parse(raw: bytes) -> Message:
    bounded = bound_message(raw).data  # the same limits as for storing it (mail/bounds.py)
    try:
        return email.message_from_bytes(bounded, policy=READING_POLICY)
    except RecursionError:
        # The stdlib parser recurses once per nested multipart; a hostile depth leaves us the headers.
        return email.parser.BytesParser(policy=READING_POLICY).parsebytes(bounded, headersonly=True)


def _leaves(message: Message) -> list[Message]:
    leaves: list[Message] = []
    stack: list[tuple[Message, int]] = [(message, 0)]
    seen = 0
    while stack and seen < MAX_PARTS:
        part, depth = stack.pop()
        seen += 1
        payload = part.get_payload()
        if part.is_multipart() and isinstance(payload, list):
            if depth < MAX_DEPTH:
                stack.extend((child, depth + 1) for child in reversed(payload) if isinstance(child, Message))
        else:
            leaves.append(part)
    return leaves


def _is_calendar(part: Message) -> bool:
    return part.get_content_type() in CALENDAR_CONTENT_TYPES


def _calendar_part(part: Message) -> CalendarPart:
    return CalendarPart(content_type=part.get_content_type(), data=_payload(part), charset=part.get_content_charset())


def _payload(part: Message) -> bytes:
    try:
        payload = part.get_payload(decode=True)
    except (ValueError, TypeError, LookupError):
        return b""
    return payload if isinstance(payload, bytes) else b""


def _filename(part: Message) -> str | None:
    try:
        name = part.get_filename()
    except (ValueError, TypeError, LookupError, UnicodeError):
        return None
    return (_decoded(name) or "")[:255] or None if name else None


def _decoded(value: object) -> str | None:
    if value is None:
        return None
    text = str(value)[:MAX_HEADER_CHARS]
    try:
        return str(email.header.make_header(email.header.decode_header(text)))
    except (ValueError, LookupError, UnicodeError, email.errors.HeaderParseError):
        return text


def _address(value: object) -> str | None:
    if value is None:
        return None
    pairs = getaddresses([str(value)[:MAX_HEADER_CHARS]])
    address = next((address for _, address in pairs if "@" in address), "")
    return address.lower() or None


def _date(value: object) -> datetime | None:
    if value is None:
        return None
    try:
        return parsedate_to_datetime(str(value)[:200])
    except (ValueError, TypeError, IndexError, OverflowError):
        return None
