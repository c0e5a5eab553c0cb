"""The interfaces of every axis that varies by implementation, and nothing else.

A service depends on one of these, never on a class that implements it; the composition root
(`plmail/services.py`) and the provider plugins (`plmail/providers/<name>/plugin.py`) decide which
implementation it gets. The DTOs the ports exchange live beside them in `plmail.domain`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from plmail.domain.calendar import DetectionRequest, ExtractedEvent, ExtractionContext, ProposalCandidate
from plmail.domain.enums import ProviderKind, QueueName
from plmail.domain.ingest import HoldQuestion, PostIngestResult, ProviderRef
from plmail.domain.jobs import JobSpec
from plmail.domain.models import Account
from plmail.domain.outgoing import ContactSuggestion, OutgoingMessage, ProvidedIdentity, SendReceipt
from plmail.domain.providers import ImportPage, PendingChange, PropagationOutcome, Tombstone


class Enqueuer(Protocol):
    """Putting a job on a queue; the saq queues on PostgreSQL are the implementation (`db/queues.py`)."""

    async def enqueue(self, job: JobSpec, *, queue: QueueName | None = None, delay_seconds: float = 0,
                      unique_key: str | None = None, **arguments: Any) -> object | None:
        """Queue `job` with `arguments` on `queue` (default: the job's own); returns a handle of the queued job, or
        None when `unique_key` is already queued."""
        ...


class FailedJobRequeuer(Protocol):
    """What the admin page needs of the queues beyond reading their tables."""

    async def requeue_failed(self, queue: QueueName, key: str) -> bool:
        """Run a failed job again from its first attempt, now; False when it is gone."""
        ...


# --- providers ------------------------------------------------------------------------------------------------
# Every provider role names the provider kind it serves; the registry (domain/registry.py) finds it by that.

class AccountSyncer(Protocol):
    kind: ProviderKind

    async def sync(self, account: Account) -> list[int]:
        """Make new mail, flags and deletions visible; returns the mailbox ids touched."""
        ...


class HistoryImporter(Protocol):
    """One provider's first import, one page per call."""

    kind: ProviderKind

    async def has_history(self, account_id: int) -> bool:
        """History remains to be imported (known from the provider's own cursors)."""
        ...

    async def counts(self, account_id: int) -> tuple[int, int]:
        """(messages stored, messages the provider reported) for the progress bar."""
        ...

    async def import_page(self, account: Account) -> ImportPage: ...


class LabelPropagator(Protocol):
    """Makes the provider agree with label changes made in plmail."""

    kind: ProviderKind

    async def propagate(self, account_id: int, changes: Sequence[PendingChange]) -> PropagationOutcome: ...


class MessageDestroyer(Protocol):
    """Deletes destroyed messages for good at the provider (JMAP Email/set destroy, "Delete forever")."""

    kind: ProviderKind

    async def refusal(self, account_id: int) -> str | None:
        """Why the account cannot delete for good now (a permission it was not granted), or None."""
        ...

    async def destroy(self, account_id: int, doomed: Sequence[Tombstone]) -> PropagationOutcome:
        """Delete them at the provider; the outcome names tombstone ids. One already gone there is done."""
        ...


class ImportStateProbe(Protocol):
    """Whether an account is still bringing in its mailbox for the first time."""

    kind: ProviderKind

    async def is_importing(self, account_id: int) -> bool: ...


class RawMessageFetcher(Protocol):
    """Fetches the original bytes of a message from its provider, for providers that do not hand
    them over at sync time (Gmail and Graph: a second API call, so it happens on first use)."""

    kind: ProviderKind

    async def fetch_raw(self, account_id: int, message_id: int) -> bytes: ...


class MailTransport(Protocol):
    """Hands a message to the provider for delivery (SMTP submission, Gmail's messages.send, Graph's send).

    Raises SendError, whose `failure` says whether the outbox may try again (temporary), must give up
    (permanent), or must not try again without asking the user (uncertain: lost after the final dot)."""

    kind: ProviderKind

    async def send(self, account: Account, message: OutgoingMessage, *, draft: ProviderRef | None) -> SendReceipt:
        """`draft` is where the provider keeps the message's draft, when it was saved there."""
        ...


class DraftStore(Protocol):
    """Keeps the provider's Drafts and Sent in step with what plmail wrote: a draft saved (replacing its
    previous version), discarded, and the Sent copy filed after a send."""

    kind: ProviderKind
    # Whether `save_draft(replaces=…)` changes the earlier version in place (Gmail's drafts.update keeps the
    # draft's id). Otherwise the draft service stores the new version alone and deletes the old one as a step
    # of its own, so a failed delete is tried again without storing the new version twice.
    updates_in_place: bool
    # Whether `file_sent` stores a copy of mail sent elsewhere in the provider's Sent when its receipt says
    # `sent_elsewhere` (IMAP's APPEND, Gmail's messages.insert, a sent item created as JSON at Microsoft). Then
    # such a copy can be kept in this account's Sent (JMAP's Email/import into Sent).
    files_sent_copies: bool

    async def save_draft(self, account: Account, raw: bytes, *, replaces: ProviderRef | None) -> ProviderRef | None:
        """Store the draft at the provider (and remove `replaces`); returns where it now lives."""
        ...

    async def discard_draft(self, account: Account, ref: ProviderRef) -> None: ...

    async def file_sent(self, account: Account, copy: bytes, *, draft: ProviderRef | None,
                        receipt: SendReceipt) -> ProviderRef | None:
        """After a send: the Sent copy stored where the provider does not file it itself, the draft removed.
        Returns where the Sent copy lives, when known."""
        ...


class IdentitySource(Protocol):
    """The addresses a provider says an account may send as (Gmail's send-as list; IMAP: the account's own)."""

    kind: ProviderKind
    # Whether the user may add addresses of their own (SMTP sends under any address the user has the right
    # to; Gmail and Microsoft decide themselves which addresses an account sends as).
    user_aliases: bool

    async def identities(self, account: Account) -> Sequence[ProvidedIdentity]: ...


class SyncWatcher(Protocol):
    """Asks for syncs between the scheduled polls (IMAP IDLE); runs beside the ingest workers."""

    def start(self) -> None: ...

    async def stop(self) -> None: ...


@dataclass(frozen=True, slots=True)
class PushDelivery:
    """A provider's push notification as it reached plmail's endpoint: the URL it was sent to, its headers
    (lower-case names), query parameters and body."""

    url: str
    headers: Mapping[str, str]
    query: Mapping[str, str]
    body: bytes


@dataclass(frozen=True, slots=True)
class PushAnswer:
    """What the endpoint answers the provider; a refused notification (401/403) has triggered nothing."""

    status: int
    body: str = ""


class ProviderPushReceiver(Protocol):
    """Takes a provider's push notifications (Gmail's Pub/Sub push, Graph's change notifications) at
    `/provider-push/<name>`: verifies them and asks for a sync of the accounts they name."""

    @property
    def name(self) -> str: ...

    async def receive(self, delivery: PushDelivery) -> PushAnswer: ...


# --- the pipeline -----------------------------------------------------------------------------------------------

class PostIngestStep(Protocol):
    """Follow-up work for a committed batch. `after_commit` runs once, after the last commit, so it never sees a
    half-finished batch; it enqueues and does not work (it runs on the worker holding a provider connection)."""

    name: str

    async def after_commit(self, result: PostIngestResult) -> None: ...


class IngestHold(Protocol):
    """Whether new mail waits, in no tab, for the assistant's verdict; the assistant implements it."""

    async def enabled(self) -> bool:
        """Holding is switched on right now (asked once per batch)."""
        ...

    def should_hold(self, question: HoldQuestion) -> bool: ...


# --- the calendar --------------------------------------------------------------------------------------------

@runtime_checkable
class EventExtractor(Protocol):
    """Reads one kind of machine-made event data out of a message; adding one is writing a class."""

    @property
    def name(self) -> str:
        """Stable identifier, stored on every source link the extractor's claims produce."""
        ...

    def supports(self, ctx: ExtractionContext) -> bool:
        """Cheap enough to call for every message; anything expensive belongs in ``extract``."""
        ...

    async def extract(self, ctx: ExtractionContext) -> list[ExtractedEvent]: ...

    def stops_cascade(self) -> bool:
        """Whether claims from this extractor make lower-priority extractors pointless for the message."""
        ...

    def priority(self) -> int: ...


class ProposalDetector(Protocol):
    """Reads candidates out of a message; never decides whether one may be offered.

    The deterministic detector is the only implementation so far. The stage after it is a model, which
    will be another implementation consulted only for what the deterministic one could not read; the
    noise rules stay in EventProposer, so adding it changes nothing about what counts as noise.
    """

    @property
    def name(self) -> str: ...

    def detect(self, request: DetectionRequest) -> Sequence[ProposalCandidate]: ...


class OneClickUnsubscriber(Protocol):
    """Sends RFC 8058's one-click unsubscribe: one POST with the body `List-Unsubscribe=One-Click` to the list's
    https URI, through the outbound-request guard (the URI comes from mail); returns the HTTP status."""

    async def post_one_click(self, url: str) -> int: ...


class CardSuggestions(Protocol):
    """Addresses from the user's own address book (the contacts area's cards) for what was typed, so the composer
    offers the people the user keeps as well as those mail gathered, without mail importing the contacts area."""

    async def suggest(self, user_id: int, typed: str, limit: int) -> list[ContactSuggestion]: ...
