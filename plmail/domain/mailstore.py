"""Stored mail as the readers and writers of one account see it: emails and their parts, mailboxes (label
bindings) with their counts, uploads, and a message as an operation finds it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from plmail.domain.enums import ProviderKind


@dataclass(frozen=True, slots=True)
class EmailRow:
    id: int
    thread_id: int | None
    size: int
    received_at: datetime | None
    sent_at: datetime | None
    created_at: datetime
    message_id: str | None
    in_reply_to: tuple[str, ...]
    references: tuple[str, ...]
    subject: str
    from_address: str | None
    from_name: str | None
    to: tuple[dict[str, str], ...]
    cc: tuple[dict[str, str], ...]
    bcc: tuple[dict[str, str], ...]
    reply_to: tuple[dict[str, str], ...]
    seen: bool
    starred: bool
    flags: tuple[str, ...]
    has_attachments: bool
    preview: str
    category: str | None
    raw_path: str | None
    text_size: int | None
    html_size: int | None
    headers: dict[str, Any] | None  # only when asked for
    body_text: str | None  # only when asked for
    body_html_safe: str | None  # only when asked for; the raw body_html is never read here



@dataclass(frozen=True, slots=True)
class PartRow:
    id: int
    message_id: int
    path: str
    content_type: str
    charset: str | None
    filename: str | None
    content_id: str | None
    disposition: str
    size: int
    sha256: str | None


@dataclass(frozen=True, slots=True)
class MailboxRow:
    binding_id: int
    label_id: int
    name: str
    role: str | None
    parent_label_id: int | None
    parent_binding_id: int | None
    sort_order: int | None
    is_visible: bool



@dataclass(frozen=True, slots=True)
class MailboxCounts:
    total_emails: int = 0
    unread_emails: int = 0
    total_threads: int = 0
    unread_threads: int = 0


@dataclass(frozen=True, slots=True)
class CountDrift:
    """A kept count that disagreed with its mail: (threads, unread threads, emails, unread emails, threads
    with the label's email, of those unread) as kept and as re-derived."""
    label_id: int
    account_id: int
    category: str
    binned: bool
    kept: tuple[int, ...]
    derived: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class CountRepair:
    shares_moved: int
    drifted: tuple[CountDrift, ...]


@dataclass(frozen=True, slots=True)
class MessageSource:
    raw_path: str | None
    provider_kind: ProviderKind
    subject: str



@dataclass(frozen=True, slots=True)
class Upload:
    sha256: str
    content_type: str
    size: int


@dataclass(frozen=True, slots=True)
class OwnedMessage:
    id: int
    account_id: int
    thread_id: int | None
    mailbox_id: int | None
    labels: frozenset[int]
    seen: bool
    starred: bool
    occurred_at: datetime | None

