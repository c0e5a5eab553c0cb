"""Making the provider agree with what the user did in plmail.

The local change is already committed and is never rolled back because a provider refused it: the
pending rows stay, the job is retried with backoff, and failures show on the admin page. Where the
providers stop being interchangeable lives behind one port (`LabelPropagator`), found by provider kind.
"""

from __future__ import annotations

import logging

from plmail.db.database import Database
from plmail.db.repos.accounts import AccountRepository
from plmail.db.repos.operations import OperationRepository
from plmail.domain.errors import NotFoundError, PlmailError
from plmail.domain.registry import ProviderRegistry
from plmail.mail.destroy import MailDestroyer

log = logging.getLogger(__name__)

BATCH = 200


class PropagationError(PlmailError):
    """Some changes could not be made at the provider; they stay pending and the job is retried."""


class PropagationService:
    def __init__(self, db: Database, providers: ProviderRegistry, destroyer: MailDestroyer | None = None) -> None:
        self.db = db
        self.destroyer = destroyer
        self.propagators = providers.propagators
        self.repo = OperationRepository(db)
        self.accounts = AccountRepository(db)

    async def failing_changes(self, limit: int = 50) -> list[tuple[int, int, str, int, str]]:
        """(change id, account id, kind, attempts, last error) of changes that keep failing, for the admin page."""
        return await self.repo.failing_changes(limit)

    async def run(self, account_id: int) -> int:
        """Push every pending change of the account; returns how many were done. Raises when some failed."""
        facts = await self.accounts.facts(account_id)
        if facts is None:
            raise NotFoundError(f"Account {account_id} no longer exists.")
        done_total = 0
        failures: dict[int, str] = {}
        if self.destroyer is not None:  # deletions first: a message destroyed needs no other change
            destroyed, failed = await self.destroyer.run_at_provider(account_id, facts.provider_kind)
            done_total += destroyed
            if failed:
                failures |= {-tombstone: reason for tombstone, reason in failed.items()}
        propagator = self.propagators.get(facts.provider_kind)
        if propagator is None:
            if failures:
                raise PropagationError(f"{len(failures)} deletion(s) could not be made at the provider: "
                                       f"{next(iter(failures.values()))}")
            raise PropagationError(f"No propagator for {facts.provider_kind.value} accounts.")
        while True:
            async with self.db.transaction():
                if not await self.repo.try_lock_account(account_id):
                    return done_total  # another worker is on it and will see these rows too
                pending = [c for c in await self.repo.pending_changes(account_id, BATCH + len(failures))
                           if c.id not in failures][:BATCH]
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
