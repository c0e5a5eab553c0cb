"""Raw headers as stored, and the one way to read them.

Headers are kept exactly as they arrived (names in their original case, repeated headers as lists)
so that a new signal never needs a resync: every reader goes through these helpers, which match
names case-insensitively.
"""

from __future__ import annotations

from email.header import decode_header, make_header

from plmail.domain.messages import MEETING_HEADER_MARKS, RawHeaders


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
