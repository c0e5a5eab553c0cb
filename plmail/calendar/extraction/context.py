"""What an extractor may know about a message, gathered once and handed to every extractor."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

# Calendar parts are found by content type alone, never by disposition: Gmail sends invitations
# inline so that no paperclip shows, and over IMAP the same part may arrive either way.
CALENDAR_CONTENT_TYPES = frozenset({"text/calendar", "application/ics"})

RawMimeLoader = Callable[[], Awaitable[bytes | None]]


@dataclass(frozen=True, slots=True)
class CalendarPart:
    content_type: str
    data: bytes
    part_id: int | None = None
    charset: str | None = None


@dataclass(frozen=True, slots=True)
class ExtractionContext:
    """The message facts extractors read.

    ``body_html`` is the raw HTML, never the sanitised copy: the JSON-LD block is a ``<script>``
    element, which sanitising rightly removes. ``raw_mime_loader`` is lazy because for Graph it is
    an API call and most messages are not invitations; only an extractor that needs the bytes
    calls it.
    """

    message_id: int | None = None
    account_id: int | None = None
    received_at: datetime | None = None
    sent_at: datetime | None = None
    subject: str | None = None
    sender: str | None = None
    headers: Mapping[str, str | list[str]] = field(default_factory=dict)
    calendar_parts: tuple[CalendarPart, ...] = ()
    body_html: str | None = None
    raw_mime_loader: RawMimeLoader | None = None
    _lowered: dict[str, tuple[str, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        lowered: dict[str, tuple[str, ...]] = {}
        for name, value in self.headers.items():
            values = (value,) if isinstance(value, str) else tuple(item for item in value if isinstance(item, str))
            key = str(name).strip().lower()
            lowered[key] = lowered.get(key, ()) + values
        object.__setattr__(self, "_lowered", lowered)
        if self.sender is not None:
            object.__setattr__(self, "sender", self.sender.strip().lower() or None)

    def header(self, name: str) -> str | None:
        """The first value of a header, whatever case it was stored in."""
        values = self._lowered.get(name.lower())
        return values[0] if values else None

    def header_values(self, name: str) -> tuple[str, ...]:
        return self._lowered.get(name.lower(), ())

    def header_names(self) -> frozenset[str]:
        """Every header name present, lower-cased."""
        return frozenset(self._lowered)
