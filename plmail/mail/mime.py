"""Raw RFC 822 bytes to a ParsedMessage: headers, addresses, bodies and parts.

Parsing uses the `compat32` policy (with raw 8-bit headers read as text, `charsets.READING_POLICY`):
`policy.default` builds header objects for every header and is about 14 times slower, which alone would make
ingest slower than notmuch. Display headers are decoded on demand with `decode_words`, and every step tolerates
broken input: a message always parses to something.
"""

from __future__ import annotations

import email
import email.parser
import hashlib
import re
from datetime import UTC, datetime
from email.message import Message
from email.policy import compat32
from email.utils import getaddresses, parsedate_to_datetime
from typing import Any

from plmail.domain.messages import Address, HeaderValue, ParsedMessage, PartData
from plmail.mail.bounds import MAX_DEPTH, MAX_PARTS, bound_message
from plmail.mail.charsets import READING_POLICY, decode_text, repair_surrogates, storable
from plmail.mail.headers import decode_words, header
from plmail.mail.html_text import html_to_text as render_html_text
from plmail.mail.structure import read_tree

UNREADABLE_STRUCTURE = "the MIME structure could not be read; only the headers were"
MAX_BODY_CHARS = 2_000_000
PREVIEW_CHARS = 256
CALENDAR_TYPES = frozenset({"text/calendar", "application/ics"})

_BARE_ADDRESS = re.compile(r"[\w.!#$%&'*+/=?^`{|}~-]+@[\w-]+(?:\.[\w-]+)+")
_MESSAGE_ID = re.compile(r"<([^<>\s]+)>")


def message_ids(value: str | None) -> tuple[str, ...]:
    """Message-IDs in a header, without angle brackets, in order, without repeats."""
    if not value:
        return ()
    found = _MESSAGE_ID.findall(value)
    if not found:
        bare = value.strip()
        found = [bare] if bare and " " not in bare and "@" in bare else []
    return tuple(dict.fromkeys(storable(f.strip()) for f in found if f.strip()))


def parse_date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if parsed is None:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    if not 1970 <= parsed.year <= 2200:  # dates before the epoch or far ahead are broken clocks, not history
        return None
    return parsed.astimezone(UTC)


def _addresses(values: list[str]) -> tuple[Address, ...]:
    if not values:
        return ()
    result: list[Address] = []
    seen: set[str] = set()
    decoded = [decode_words(repair_surrogates(v)) for v in values]
    try:
        pairs = getaddresses(decoded)
    except (RecursionError, ValueError, IndexError, TypeError):
        # The stdlib parser recurses on pathological quoting; fall back to picking out addresses.
        pairs = [("", found) for value in decoded for found in _BARE_ADDRESS.findall(value)]
    for name, addr in pairs:
        address = storable(addr.strip().strip("<>").lower())
        if not address or "@" not in address or address in seen:
            continue
        seen.add(address)
        result.append(Address(storable(name.strip().strip('"')), address))
    return tuple(result)


def _raw_headers(msg: Message) -> dict[str, HeaderValue]:
    """The headers as stored; their values come already read as text (READING_POLICY), their names raw."""
    headers: dict[str, HeaderValue] = {}
    for key, value in msg.items():
        name = storable(repair_surrogates(str(key)))
        text = storable(str(value))
        existing = headers.get(name)
        if existing is None:
            headers[name] = text
        elif isinstance(existing, list):
            existing.append(text)
        else:
            headers[name] = [existing, text]
    return headers


def html_to_text(markup: str) -> str:
    """A plain-text rendering of HTML for search, previews and the plain quote of an HTML-only message: its
    blocks and line breaks kept as lines (`mail/html_text.py`)."""
    return render_html_text(markup)


def make_preview(text: str | None) -> str:
    if not text:
        return ""
    words: list[str] = []
    length = 0
    for line in text.splitlines():
        line = line.strip()
        # Quoted history and signatures say nothing about what this message is.
        if not line or line.startswith(">"):
            continue
        words.extend(line.split())
        length += len(line) + 1
        if length > PREVIEW_CHARS:  # a long body is read only as far as the preview needs
            break
    return " ".join(words)[:PREVIEW_CHARS]


def _part_filename(part: Message) -> str | None:
    try:
        name = part.get_filename()
    except (TypeError, ValueError, LookupError, UnicodeError):
        return None
    if not name:
        return None
    return storable(decode_words(repair_surrogates(str(name))))[:255] or None


def _payload(part: Message) -> bytes:
    try:
        data = part.get_payload(decode=True)
    except (TypeError, ValueError, AssertionError):
        data = None
    if isinstance(data, bytes):
        return data
    raw = part.get_payload()
    if isinstance(raw, str):
        return raw.encode("utf-8", "surrogateescape")
    return b""


class _Walker:
    """Collects bodies and parts from the MIME tree, bounded in depth and count."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.htmls: list[str] = []
        self.parts: list[PartData] = []
        self.defects: list[str] = []
        self.seen = 0

    def walk(self, part: Message, path: str, depth: int, in_attached_message: bool) -> None:
        self.seen += 1
        # A backstop only: the bytes were bounded before parsing (mail/bounds.py); containers count here too.
        if depth > MAX_DEPTH or self.seen > MAX_PARTS + MAX_DEPTH + 1:
            if "too-complex" not in self.defects:
                self.defects.append("too-complex")
            return
        ctype = part.get_content_type()
        if part.is_multipart() and ctype != "message/rfc822":
            children = part.get_payload()
            if isinstance(children, list):
                for index, child in enumerate(children, start=1):
                    if isinstance(child, Message):
                        self.walk(child, f"{path}.{index}" if path else str(index), depth + 1, in_attached_message)
            return
        self._leaf(part, path or "1", ctype, in_attached_message)

    def _leaf(self, part: Message, path: str, ctype: str, in_attached_message: bool) -> None:
        disposition = (part.get_content_disposition() or "").lower()
        filename = _part_filename(part)
        is_calendar = ctype in CALENDAR_TYPES
        charset = part.get_content_charset()
        data = _attached_message_bytes(part) if ctype == "message/rfc822" else _payload(part)
        is_body_candidate = (
            not in_attached_message and disposition != "attachment" and filename is None
            and ctype in ("text/plain", "text/html")
        )
        if is_body_candidate:
            text = decode_text(data, charset)
            (self.texts if ctype == "text/plain" else self.htmls).append(text)
            return
        content_ids = message_ids(repair_surrogates(str(part.get("Content-ID") or "")))
        cid = content_ids[0] if content_ids else None
        is_inline = disposition == "inline" or (cid is not None and disposition != "attachment")
        self.parts.append(
            PartData(
                path=path,
                content_type=storable(ctype)[:255],
                charset=storable(charset)[:64] if charset else None,
                filename=filename,
                content_id=cid[:255] if cid else None,
                disposition="inline" if is_inline else "attachment",
                data=data,
                is_inline=is_inline,
                is_calendar=is_calendar,
            )
        )


def _attached_message_bytes(part: Message) -> bytes:
    inner = part.get_payload()
    if isinstance(inner, list) and inner and isinstance(inner[0], Message):
        try:
            return inner[0].as_bytes(policy=compat32)
        except (TypeError, ValueError, LookupError, UnicodeError):
            return b""
    return _payload(part)


def _read(raw: bytes) -> tuple[Message, list[str]]:
    """The parsed message within the limits of mail/bounds.py, and what was cut to stay within them."""
    bounded = bound_message(raw)
    cuts = list(bounded.cuts)
    try:
        return email.message_from_bytes(bounded.data, policy=READING_POLICY), cuts
    except (RecursionError, TypeError, ValueError, LookupError, IndexError):
        headers_only = email.parser.BytesParser(policy=READING_POLICY).parsebytes(bounded.data, headersonly=True)
        return headers_only, [*cuts, UNREADABLE_STRUCTURE]


def parse_mime(raw: bytes) -> ParsedMessage:
    """Parse one message. Never raises on malformed input; problems are listed in `defects`, and what was not
    read of a hostile message (too deep, too many parts, huge headers) in `cut_note`."""
    msg, cuts = _read(raw)
    headers = _raw_headers(msg)
    walker = _Walker()
    try:
        walker.walk(msg, "", 0, False)
    except (RecursionError, TypeError, ValueError, LookupError) as exc:
        walker.defects.append(f"mime: {type(exc).__name__}")
    if cuts and "too-complex" not in walker.defects:
        walker.defects.append("too-complex")
    try:
        tree: dict[str, Any] | None = read_tree(msg)
    except (RecursionError, TypeError, ValueError, LookupError, UnicodeError) as exc:
        tree = None
        walker.defects.append(f"mime tree: {type(exc).__name__}")
    body_text = storable("\n".join(walker.texts))[:MAX_BODY_CHARS] if walker.texts else None
    body_html = storable(walker.htmls[0]) if walker.htmls else None
    if body_text is None and body_html is not None:
        body_text = html_to_text(body_html)[:MAX_BODY_CHARS]
    by_name: dict[str, list[str]] = {}
    for key, value in _pairs(headers):
        by_name.setdefault(key, []).append(value)
    senders = _addresses(by_name.get("from", []))
    defects = [type(d).__name__ for d in msg.defects][:20] + walker.defects
    return ParsedMessage(
        headers=headers,
        subject=storable(decode_words(header(headers, "subject"))),
        from_address=senders[0].address if senders else None,
        from_name=(senders[0].name or None) if senders else None,
        to=_addresses(by_name.get("to", [])),
        cc=_addresses(by_name.get("cc", [])),
        bcc=_addresses(by_name.get("bcc", [])),
        reply_to=_addresses(by_name.get("reply-to", [])),
        sent_at=parse_date(header(headers, "date")),
        message_id=next(iter(message_ids(header(headers, "message-id"))), None),
        in_reply_to=message_ids(header(headers, "in-reply-to")),
        references=message_ids(header(headers, "references")),
        body_text=body_text,
        body_html=body_html,
        parts=tuple(walker.parts),
        has_attachments=any(not p.is_inline and not p.is_calendar for p in walker.parts),
        size=len(raw),
        content_hash=hashlib.sha256(raw).hexdigest(),
        preview=make_preview(body_text),
        defects=tuple(defects),
        cut_note="; ".join(cuts) or None,
        mime_tree=tree,
    )


def _pairs(headers: dict[str, HeaderValue]) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for key, value in headers.items():
        lowered = key.lower()
        if isinstance(value, list):
            pairs.extend((lowered, v) for v in value)
        else:
            pairs.append((lowered, value))
    return pairs
