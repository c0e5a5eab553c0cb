"""A message as parsed from its RFC 822 bytes: the DTO every reader of mail shares (`mail/mime.py` builds it)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

HeaderValue = str | list[str]
RawHeaders = Mapping[str, HeaderValue]

# Marks by which a message without a calendar part may still be a meeting (Graph, Exchange): a coarse
# match over the headers as stored (names and values), which the ICS extractor's own check confirms later.
MEETING_HEADER_MARKS: tuple[str, ...] = (
    "meetingmessagetype", "x-meeting-message-type", "x-microsoft-cdo-", "calendarmessage", "text/calendar",
    "x-ms-exchange-calendar",
)

_DRAFT_FLAGS = frozenset({"$draft", "\\draft"})


def flags_say_draft(flags: Iterable[str]) -> bool:
    """Stored flags mark a draft: our own writes keep JMAP's $draft, a provider sync keeps IMAP's \\Draft."""
    return any(flag.lower() in _DRAFT_FLAGS for flag in flags)


@dataclass(frozen=True, slots=True)
class Address:
    name: str
    address: str

    def as_json(self) -> dict[str, str]:
        return {"name": self.name, "address": self.address}


@dataclass(frozen=True, slots=True)
class PartData:
    path: str
    content_type: str
    charset: str | None
    filename: str | None
    content_id: str | None
    disposition: str  # "attachment" | "inline"
    data: bytes
    is_inline: bool
    is_calendar: bool


@dataclass(frozen=True, slots=True)
class ParsedMessage:
    headers: dict[str, HeaderValue]
    subject: str
    from_address: str | None
    from_name: str | None
    to: tuple[Address, ...]
    cc: tuple[Address, ...]
    bcc: tuple[Address, ...]
    reply_to: tuple[Address, ...]
    sent_at: datetime | None
    message_id: str | None
    in_reply_to: tuple[str, ...]
    references: tuple[str, ...]
    body_text: str | None
    body_html: str | None
    parts: tuple[PartData, ...]
    has_attachments: bool
    size: int
    content_hash: str
    preview: str
    defects: tuple[str, ...]
    cut_note: str | None = None  # what plmail did not read of a hostile message (mail/bounds.py), stored with it
    mime_tree: dict[str, Any] | None = None  # the MIME tree for JMAP's bodyStructure (mail/structure.py)
