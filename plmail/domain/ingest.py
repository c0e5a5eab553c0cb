"""What flows through the post-ingest pipeline: the messages a provider hands over, and what the steps are
told after the batch is committed.

The pipeline knows no provider: where a message lives at its provider is one opaque `ProviderRef`, built
by the provider's own code and read only by it (storage keeps it as the row's container and key).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from plmail.domain.enums import ProviderKind
from plmail.domain.messages import ParsedMessage


@dataclass(frozen=True, slots=True)
class ProviderRef:
    """Where the provider keeps a message, in the provider's terms: a key within a container of the account.

    The pipeline never reads the parts; the provider that made the reference reads it back (each provider package
    has its own constructor and reader). A provider whose ids are unique in the whole account leaves the container
    empty; one whose ids mean something only inside a folder names the folder."""

    container: str = ""
    key: str | None = None  # None: the provider gave no id (yet)
    folder_id: int | None = None  # the account's folder row the message lies in, for providers whose folders are rows

    def identity(self) -> tuple[str, str] | None:
        """The one key two copies of the same provider message share; None when the provider gave no id."""
        return None if self.key is None else (self.container, self.key)


NO_REF = ProviderRef()


def ref_json(ref: ProviderRef | None) -> dict[str, Any] | None:
    """A provider reference as a job argument."""
    if ref is None or ref.identity() is None:
        return None
    return {"container": ref.container, "key": ref.key, "folder_id": ref.folder_id}


def ref_from_json(value: Any) -> ProviderRef | None:
    if not isinstance(value, dict):
        return None
    key, container, folder = value.get("key"), value.get("container"), value.get("folder_id")
    if not isinstance(key, str) or not isinstance(container, str):
        return None
    return ProviderRef(container, key, folder if isinstance(folder, int) else None)


@dataclass(frozen=True, slots=True)
class IngestedMessage:
    """One parsed message plus what its provider knows about it."""

    account_id: int
    parsed: ParsedMessage
    raw: bytes | None  # None for providers that fetch the original lazily (Gmail, Graph)
    received_at: datetime | None = None  # the provider's arrival time (IMAP INTERNALDATE, Gmail internalDate)
    ref: ProviderRef = NO_REF
    provider_thread_key: str | None = None  # the provider's own conversation id, threading's first stage
    provider_labels: tuple[str, ...] | None = None  # labels the provider set (Gmail's categories are read from them)
    flags: tuple[str, ...] = ()
    seen: bool = False
    starred: bool = False
    is_draft: bool = False
    label_ids: tuple[int, ...] = ()  # where the message lives, already resolved to the user's labels
    source_ref: str = ""  # where it came from, for skip records ("INBOX:4711", "takeout.mbox@1234")
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def occurred_at(self) -> datetime | None:
        """When it arrived: the provider's time; without one the Date header, never later than now (spam dated
        2028 must not stay on top of the list)."""
        if self.received_at is not None or self.parsed.sent_at is None:
            return self.received_at
        return min(self.parsed.sent_at, datetime.now(UTC))


@dataclass(frozen=True, slots=True)
class AccountFacts:
    """What the pipeline needs to know about the account a batch belongs to."""

    id: int
    user_id: int
    provider_kind: ProviderKind
    addresses: frozenset[str]  # the account's own address and its aliases, lower-cased
    disabled_categories: frozenset[str]
    sorts_by_rules: bool = False  # the user chose the rule cascade over the assistant
    # Authserv-ids whose Authentication-Results the account believes: set by the user or administrator (None:
    # not set), and the one learned from the account's own Inbox (mail/sender_auth.py).
    authserv_ids: frozenset[str] | None = None
    authserv_ids_learned: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """A message the batch stored, as steps see it; `parsed` is the parse the batch made, for steps that look
    at content (calendar parts, markup, meeting headers) without reading the row back."""

    id: int
    account_id: int
    thread_id: int | None
    occurred_at: datetime | None
    category: str | None
    is_draft: bool
    parsed: ParsedMessage = field(repr=False, compare=False)
    held: bool = False  # waiting for the assistant: in no tab until released
    ask_assistant: bool = False  # the assistant's verdict could still change this message's tab


@dataclass(frozen=True, slots=True)
class SkippedMessage:
    account_id: int
    source_ref: str
    reason: str


@dataclass(frozen=True, slots=True)
class PostIngestResult:
    messages: tuple[StoredMessage, ...]  # in ingest order
    accounts: Mapping[int, AccountFacts]
    threads_by_account: Mapping[int, tuple[int, ...]]
    live: bool  # every account of the batch finished its first import: follow-up work may go on enrich_live
    duplicates: int = 0
    skipped: tuple[SkippedMessage, ...] = ()
    recent_ids: tuple[int, ...] = field(default=())

    @property
    def stored(self) -> int:
        return len(self.messages)


@dataclass(frozen=True, slots=True)
class HoldQuestion:
    """What decides whether one new message waits, in no tab, for the assistant's verdict."""

    holding_enabled: bool
    user_sorts_by_rules: bool
    live: bool
    recent: bool
    own_sent_copy: bool
    verdict_could_decide: bool  # False when a provider label or a known correspondent settled the tab
