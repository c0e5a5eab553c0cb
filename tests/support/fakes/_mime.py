"""Reading RFC 5322 bytes the way the providers present them: decoded headers, addresses, a snippet.

Shared by the Gmail fake (payload headers, snippet, the `full` payload tree) and the Graph fake
(subject, from/to/cc, internetMessageId, body, bodyPreview). Lenient: a broken message yields
what could be read, never an exception — a real provider stores whatever arrived.
"""

from __future__ import annotations

import contextlib
import email
import email.message
import email.policy
import email.utils
import html
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from email.header import decode_header, make_header


@dataclass(frozen=True)
class Parsed:
    message: email.message.Message
    headers: list[tuple[str, str]]

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        for key, value in self.headers:
            if key.lower() == lowered:
                return value
        return None

    def addresses(self, name: str) -> list[tuple[str, str]]:
        values = [value for key, value in self.headers if key.lower() == name.lower()]
        return [(n, a) for n, a in email.utils.getaddresses(values) if a]

    def date(self) -> datetime | None:
        value = self.header("Date")
        if not value:
            return None
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def parse(raw: bytes) -> Parsed:
    message = email.message_from_bytes(raw, policy=email.policy.compat32)
    return Parsed(message, [(key, decode(value)) for key, value in message.items()])


def decode(value: object) -> str:
    """An RFC 2047-decoded, unfolded header value."""
    text = str(value)
    with contextlib.suppress(ValueError, LookupError, UnicodeDecodeError):
        text = str(make_header(decode_header(text)))
    return re.sub(r"\r?\n[ \t]+", " ", text).strip()


def part_text(part: email.message.Message) -> str:
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return ""
    charset = part.get_content_charset() or "utf-8"
    try:
        return payload.decode(charset, "replace")
    except LookupError:
        return payload.decode("utf-8", "replace")


def bodies(parsed: Parsed) -> tuple[str | None, str | None]:
    """The first text/plain and the first text/html body that are not attachments."""
    plain: str | None = None
    rich: str | None = None
    for part in parsed.message.walk():
        if part.is_multipart() or part.get_filename():
            continue
        kind = part.get_content_type()
        if kind == "text/plain" and plain is None:
            plain = part_text(part)
        elif kind == "text/html" and rich is None:
            rich = part_text(part)
    return plain, rich


def strip_html(text: str) -> str:
    text = re.sub(r"(?is)<(script|style).*?</\1>", " ", text)
    return html.unescape(re.sub(r"<[^>]+>", " ", text))


def preview(parsed: Parsed, limit: int) -> str:
    """Whitespace-collapsed start of the text body (or of the HTML body's text)."""
    plain, rich = bodies(parsed)
    text = plain if plain is not None else strip_html(rich or "")
    return " ".join(text.split())[:limit]


def has_attachments(parsed: Parsed) -> bool:
    return any(part.get_filename() for part in parsed.message.walk() if not part.is_multipart())
