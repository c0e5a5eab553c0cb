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
    account_id: int
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
    mime_tree: dict[str, Any] | None = None  # only when asked for (the parts are)
    has_subject: bool = True  # False: the message has no Subject header at all (JMAP's subject is then null)



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
    account_id: int



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



PUSH_CHANNEL = "plmail_jmap_state"  # the LISTEN/NOTIFY channel a committed change-log batch is announced on
PUSH_EVERYONE = "*"  # the payload that tells every watcher on every node to read its states again
# PostgreSQL refuses a NOTIFY payload of 8000 bytes or more: a larger batch is announced as PUSH_EVERYONE instead.
PUSH_PAYLOAD_MAX = 7999


def unified_key(user_id: int) -> int:
    """The change-log account id of a user's unified account: negative, so no real account id is ever it."""
    return -user_id


@dataclass(frozen=True, slots=True)
class MailScope:
    """What one JMAP account holds: one connected account's mail, or (unified) the mail of every account of
    its user, whose Mailboxes are the user's labels themselves instead of one account's bindings of them."""

    user_id: int
    account_ids: tuple[int, ...]
    unified: bool = False

    @classmethod
    def single(cls, user_id: int, account_id: int) -> MailScope:
        return cls(user_id, (account_id,))

    @property
    def log_key(self) -> int:
        """Where changes only this scope sees are logged: the account itself, or the unified key."""
        return unified_key(self.user_id) if self.unified else self.account_ids[0]

    @property
    def account_id(self) -> int:
        """The one account of a single-account scope."""
        if self.unified:
            raise ValueError("a unified scope has no single account")
        return self.account_ids[0]

    def log_accounts(self, object_type: str) -> tuple[int, ...]:
        """The change-log accounts whose rows make this scope's state of `object_type`. The unified account's
        Mailboxes are labels, logged under its own key; everything else is the accounts' rows, plus what only
        the unified account is told (the mail of an account that was removed)."""
        if not self.unified:
            return self.account_ids
        if object_type == "Mailbox":
            return (self.log_key,)
        return (*self.account_ids, self.log_key)
