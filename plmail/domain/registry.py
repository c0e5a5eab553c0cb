"""Where the installed providers' implementations are found: one registry, one lookup, by provider kind.

Each provider plugin (`plmail/providers/<name>/plugin.py`) fills it once at start; the services that
drive providers (sync, import, propagation, raw originals, the import-state question) ask it for the
implementation of the account's kind and know no provider themselves.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from plmail.domain.account_forms import AccountSetup
from plmail.domain.enums import ProviderKind
from plmail.domain.jobs import JobSpec
from plmail.domain.ports import (
    AccountSyncer,
    DraftStore,
    HistoryImporter,
    IdentitySource,
    ImportStateProbe,
    LabelPropagator,
    MailTransport,
    MessageDestroyer,
    ProviderPushReceiver,
    RawMessageFetcher,
    SyncWatcher,
)


class _Kinded(Protocol):
    @property
    def kind(self) -> ProviderKind: ...


R = TypeVar("R", bound=_Kinded)
JobFunction = Callable[..., Awaitable[Any]]


class DuplicateRoleError(ValueError):
    """Two implementations of one role were installed for the same provider kind."""


class ByKind(Generic[R]):
    """One role's implementations, at most one per provider kind.

    Looked up by the account's kind, never by asking each implementation whether it claims the account (the
    seed's `supports()`): a syncer installed for one kind can never sync another kind's account."""

    def __init__(self, role: str) -> None:
        self.role = role
        self._by_kind: dict[ProviderKind, R] = {}

    def add(self, implementation: R) -> None:
        if implementation.kind in self._by_kind:
            raise DuplicateRoleError(f"a {self.role} for {implementation.kind.value} accounts is installed already")
        self._by_kind[implementation.kind] = implementation

    def replace(self, implementation: R) -> R | None:
        """Put `implementation` in place of the one installed for its kind; returns the one it replaced."""
        previous = self._by_kind.get(implementation.kind)
        self._by_kind[implementation.kind] = implementation
        return previous

    def get(self, kind: ProviderKind) -> R | None:
        return self._by_kind.get(kind)

    def kinds(self) -> frozenset[ProviderKind]:
        return frozenset(self._by_kind)

    def __iter__(self) -> Iterator[R]:
        return iter(self._by_kind.values())


@dataclass(slots=True)
class ProviderRegistry:
    syncers: ByKind[AccountSyncer] = field(default_factory=lambda: ByKind("syncer"))
    importers: ByKind[HistoryImporter] = field(default_factory=lambda: ByKind("history importer"))
    propagators: ByKind[LabelPropagator] = field(default_factory=lambda: ByKind("label propagator"))
    import_probes: ByKind[ImportStateProbe] = field(default_factory=lambda: ByKind("import-state probe"))
    raw_fetchers: ByKind[RawMessageFetcher] = field(default_factory=lambda: ByKind("raw-message fetcher"))
    transports: ByKind[MailTransport] = field(default_factory=lambda: ByKind("mail transport"))
    draft_stores: ByKind[DraftStore] = field(default_factory=lambda: ByKind("draft store"))
    identity_sources: ByKind[IdentitySource] = field(default_factory=lambda: ByKind("identity source"))
    destroyers: ByKind[MessageDestroyer] = field(default_factory=lambda: ByKind("message destroyer"))
    # "Add an account" forms a plugin offers, rendered by the web pages and the command line (domain/account_forms.py).
    account_forms: ByKind[AccountSetup] = field(default_factory=lambda: ByKind("account form"))
    # Jobs of a provider's own (a spec and the function that runs it), added to every worker's catalog.
    jobs: list[tuple[JobSpec, JobFunction]] = field(default_factory=list)
    # What requests syncs between the scheduled polls (IMAP IDLE); runs beside the ingest workers.
    watchers: list[SyncWatcher] = field(default_factory=list)
    # Endpoints for providers' push notifications, by the name in their path (only with PLMAIL_PUBLIC_URL).
    push_receivers: dict[str, ProviderPushReceiver] = field(default_factory=dict)
    # Called once when the process stops (API clients, connection pools).
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
