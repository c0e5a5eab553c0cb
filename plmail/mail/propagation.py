"""Making the provider agree with what the user did in plmail.

The local change is already committed and is never rolled back because a provider refused it: the
pending rows stay, the job is retried with backoff, and failures show on the admin page. Where the
three providers stop being interchangeable lives behind one protocol, found by provider kind.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from plmail.db.database import Database
from plmail.db.repos.accounts import AccountRepository
from plmail.db.repos.operations import OperationRepository, PendingChange
from plmail.domain.enums import ProviderKind
from plmail.domain.errors import NotFoundError, PlmailError

log = logging.getLogger(__name__)

BATCH = 200


class PropagationError(PlmailError):
    """Some changes could not be made at the provider; they stay pending and the job is retried."""


@dataclass(frozen=True, slots=True)
class PropagationOutcome:
    done: tuple[int, ...] = ()  # change ids the provider now reflects
    failed: dict[int, str] = field(default_factory=dict)  # change id -> reason


class LabelPropagator(Protocol):
    kind: ProviderKind

    async def propagate(self, account_id: int, changes: Sequence[PendingChange]) -> PropagationOutcome: ...


class LocalPropagator:
    """A local archive account has no provider: every change is already where it belongs."""

    kind = ProviderKind.LOCAL

    async def propagate(self, account_id: int, changes: Sequence[PendingChange]) -> PropagationOutcome:
        return PropagationOutcome(done=tuple(c.id for c in changes))


class PropagatorRegistry:
    def __init__(self, propagators: Iterable[LabelPropagator] = ()) -> None:
        self._by_kind: dict[ProviderKind, LabelPropagator] = {}
        for propagator in [LocalPropagator(), *propagators]:
            self.register(propagator)

    def register(self, propagator: LabelPropagator) -> None:
        self._by_kind[propagator.kind] = propagator

    def for_kind(self, kind: ProviderKind) -> LabelPropagator:
        found = self._by_kind.get(kind)
        if found is None:
            raise PropagationError(f"No propagator for {kind.value} accounts.")
        return found


class PropagationService:
    def __init__(self, db: Database, registry: PropagatorRegistry) -> None:
        self.db = db
        self.registry = registry
        self.repo = OperationRepository(db)
        self.accounts = AccountRepository(db)

    async def run(self, account_id: int) -> int:
        """Push every pending change of the account; returns how many were done. Raises when some failed."""
        facts = await self.accounts.facts(account_id)
        if facts is None:
            raise NotFoundError(f"Account {account_id} no longer exists.")
        propagator = self.registry.for_kind(facts.provider_kind)
        done_total = 0
        failures: dict[int, str] = {}
        while True:
            async with self.db.transaction():
                if not await self.repo.try_lock_account(account_id):
                    return done_total  # another worker is on it and will see these rows too
                pending = [c for c in await self.repo.pending_changes(account_id, BATCH) if c.id not in failures]
                if not pending:
                    break
                outcome = await propagator.propagate(account_id, pending)
                await self.repo.mark_done(outcome.done)
                for change_id, reason in outcome.failed.items():
                    await self.repo.mark_failed([change_id], reason)
                failures.update(outcome.failed)
                done_total += len(outcome.done)
                if len(outcome.done) + len(outcome.failed) == 0:
                    break
        if failures:
            first = next(iter(failures.values()))
            raise PropagationError(f"{len(failures)} change(s) could not be made at the provider: {first}")
        return done_total
