"""Raw headers as stored, and the one way to read them.

Headers are kept exactly as they arrived (names in their original case, repeated headers as lists)
so that a new signal never needs a resync: every reader goes through these helpers, which match
names case-insensitively.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from email.header import decode_header, make_header

from plmail.domain.messages import MEETING_HEADER_MARKS, HeaderValue, RawHeaders


def names_a_meeting(stored_headers: str) -> bool:
    """Whether the headers, as the JSON text they are stored as, carry a meeting mark (any case)."""
    text = stored_headers.lower()
    return any(mark in text for mark in MEETING_HEADER_MARKS)


def header_values(headers: RawHeaders | None, name: str) -> list[str]:
    """Every value of header `name`, in order, whatever case it was stored under."""
    if not headers:
        return []
    wanted = name.lower()
    values: list[str] = []
    for key, value in headers.items():
        if key.lower() == wanted:
            if isinstance(value, list):
                values.extend(str(v) for v in value)
            else:
                values.append(str(value))
    return values


def header(headers: RawHeaders | None, name: str) -> str | None:
    """The value of header `name`; repeated headers are joined with a space."""
    values = header_values(headers, name)
    if not values:
        return None
    return values[0] if len(values) == 1 else " ".join(values)


def has_header(headers: RawHeaders | None, name: str) -> bool:
    """True when the header is present with a non-blank value."""
    return any(v.strip() for v in header_values(headers, name))


def decode_words(value: str | None) -> str:
    """Decode RFC 2047 encoded words for display; undecodable input is returned as it came."""
    if not value:
        return ""
    if "=?" not in value:
        return " ".join(value.split())
    try:
        decoded = str(make_header(decode_header(value)))
    except (ValueError, LookupError, UnicodeError, AssertionError):
        return " ".join(value.split())
    return " ".join(decoded.split())


def stored_headers(stored: Mapping[str, HeaderValue] | None) -> list[tuple[str, str]]:
    """(name, raw value) in arrival order as far as it was kept: the value as the wire had it after
    the colon (the parser dropped the leading space, which is put back)."""
    pairs: list[tuple[str, str]] = []
    for name, value in (stored or {}).items():
        for item in value if isinstance(value, list) else [value]:
            pairs.append((name, " " + str(item)))
    return pairs


def raw_header_pairs(block: bytes) -> list[tuple[str, str]]:
    """(name, raw value) exactly as in the original, in order; folding kept, as asRaw asks."""
    text = block.decode("utf-8", errors="replace")
    end = min((i for i in (text.find("\r\n\r\n"), text.find("\n\n")) if i >= 0), default=len(text))
    pairs: list[tuple[str, str]] = []
    for line in re.split(r"\r?\n", text[:end]):
        if line[:1] in (" ", "\t") and pairs:
            name, value = pairs[-1]
            pairs[-1] = (name, f"{value}\r\n{line}")
        elif ":" in line:
            name, _, value = line.partition(":")
            pairs.append((name.strip(), value))
    return pairs
