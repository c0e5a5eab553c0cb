"""What a syncer hands to the pipeline: one parsed message plus what its provider knows about it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from plmail.mail.mime import ParsedMessage, parse_mime


@dataclass(frozen=True, slots=True)
class IngestedMessage:
    account_id: int
    parsed: ParsedMessage
    raw: bytes | None  # None for providers that fetch the original lazily (Gmail, Graph)
    received_at: datetime | None = None  # the provider's arrival time (IMAP INTERNALDATE, Gmail internalDate)
    mailbox_id: int | None = None
    imap_uid: int | None = None
    gmail_id: str | None = None
    graph_id: str | None = None
    provider_thread_key: str | None = None
    gmail_label_ids: tuple[str, ...] | None = None
    flags: tuple[str, ...] = ()
    seen: bool = False
    starred: bool = False
    is_draft: bool = False
    label_ids: tuple[int, ...] = ()  # where the message lives, already resolved to the user's labels
    source_ref: str = ""  # where it came from, for skip records ("INBOX:4711", "takeout.mbox@1234")
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def occurred_at(self) -> datetime | None:
        return self.received_at or self.parsed.sent_at


def parse_message(raw: bytes, *, account_id: int, **provider_facts: object) -> IngestedMessage:
    """Raw RFC 822 bytes to the DTO the pipeline ingests."""
    return IngestedMessage(account_id=account_id, parsed=parse_mime(raw), raw=raw, **provider_facts)  # type: ignore[arg-type]
