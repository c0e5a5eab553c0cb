"""Destroying mail: gone from plmail at once, and from its provider by the propagation job (RFC 8621 §4.6).

The web's "Delete forever" and "Empty trash" and JMAP's Email/set destroy are this one service. A message is
deleted here in one transaction with a tombstone that names where its provider keeps it; the provider's
destroyer (IMAP \\Deleted and EXPUNGE in its folder, Gmail messages.delete, Graph permanentDelete) runs from
the propagation job and keeps the tombstone pending until the provider agrees. The tombstone also keeps a
sync that still sees the message from storing it again. An account whose provider cannot delete for good
right now (Gmail without the full mail permission) is refused with its reason, never quietly trashed.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from plmail.db.database import Database
from plmail.db.repos.labels import LabelRepository
from plmail.domain.enums import LabelRole, ProviderKind
from plmail.domain.jobs import PROPAGATE_PROVIDER_CHANGES
from plmail.domain.ports import Enqueuer
from plmail.domain.providers import PropagationOutcome
from plmail.domain.registry import ProviderRegistry
from plmail.mail.repos.tombstones import Doomed, TombstoneRepository
from plmail.mail.settle import settle_deleted

log = logging.getLogger(__name__)

TOMBSTONE_LIFETIME = timedelta(days=30)  # after the provider deleted it: long enough for any slow listing
EMPTY_TRASH_BATCH = 1000
_BATCH = 200


@dataclass(frozen=True, slots=True)
class Destroyed:
    destroyed: tuple[int, ...] = ()
    refused: dict[int, str] = field(default_factory=dict)  # message id -> why it was kept


class MailDestroyer:
    def __init__(self, db: Database, providers: ProviderRegistry, queues: Enqueuer | None) -> None:
        self.db = db
        self.destroyers = providers.destroyers
        self.queues = queues
        self.repo = TombstoneRepository(db)
        self.labels = LabelRepository(db)

    async def destroy(self, user_id: int, message_ids: Sequence[int]) -> Destroyed:
        """Delete the user's messages for good; ids that are not the user's are left out of the answer."""
        doomed = await self.repo.doomed(user_id, sorted(set(message_ids)))
        refused: dict[int, str] = {}
        reasons: dict[int, str | None] = {}
        for account_id, kind in sorted({(d.account_id, d.provider_kind) for d in doomed}):
            reasons[account_id] = await self._refusal(account_id, kind)
        allowed: list[Doomed] = []
        for message in doomed:
            reason = reasons[message.account_id]
            if reason is not None:
                refused[message.id] = reason
            else:
                allowed.append(message)
        remote = {d.id for d in allowed if d.provider_kind is not ProviderKind.LOCAL and d.ref.identity() is not None}
        async with self.db.transaction():
            gone = set(await self.repo.bury(allowed, remote=remote))
            for account_id in sorted({d.account_id for d in allowed}):
                mine = [d for d in allowed if d.account_id == account_id and d.id in gone]
                await settle_deleted(self.db, account_id, {d.id: d.thread_id for d in mine},
                                     {label for d in mine for label in d.labels})
        await self._propagate({d.account_id for d in allowed if d.id in remote})
        return Destroyed(tuple(sorted(gone)), refused)

    async def destroy_threads(self, user_id: int, thread_ids: Sequence[int]) -> Destroyed:
        """Every message of the user's conversations, destroyed (the web's "Delete forever")."""
        return await self.destroy(user_id, await self.repo.of_threads(user_id, sorted(set(thread_ids))))

    async def empty_trash(self, user_id: int) -> Destroyed:
        """Everything in Trash, destroyed; what a provider refuses stays there with its reason."""
        trash = (await self.labels.role_ids(user_id))[LabelRole.TRASH]
        destroyed: list[int] = []
        refused: dict[int, str] = {}
        while True:
            batch = [i for i in await self.repo.with_label(user_id, trash, EMPTY_TRASH_BATCH + len(refused))
                     if i not in refused]
            if not batch:
                break
            outcome = await self.destroy(user_id, batch[:EMPTY_TRASH_BATCH])
            destroyed += outcome.destroyed
            refused |= outcome.refused
            if not outcome.destroyed:
                break
        return Destroyed(tuple(destroyed), refused)

    async def _refusal(self, account_id: int, kind: ProviderKind) -> str | None:
        if kind is ProviderKind.LOCAL:
            return None  # an archive of our own: nothing to delete anywhere else
        destroyer = self.destroyers.get(kind)
        if destroyer is None:
            return f"{kind.value} accounts cannot delete mail for good."
        return await destroyer.refusal(account_id)

    async def _propagate(self, account_ids: set[int]) -> None:
        if self.queues is None:
            return
        for account_id in sorted(account_ids):
            await self.queues.enqueue(PROPAGATE_PROVIDER_CHANGES, account_id=account_id)

    # -- at the provider (the propagation job) ------------------------------------------------------------

    async def run_at_provider(self, account_id: int, kind: ProviderKind) -> tuple[int, dict[int, str]]:
        """Delete the account's tombstoned messages at its provider: (how many went, tombstone id -> failure)."""
        destroyer = self.destroyers.get(kind)
        if destroyer is None:
            return 0, {}
        done = 0
        failures: dict[int, str] = {}
        while True:
            pending = [t for t in await self.repo.pending(account_id, _BATCH + len(failures)) if t.id not in failures]
            if not pending:
                break
            outcome: PropagationOutcome = await destroyer.destroy(account_id, pending[:_BATCH])
            await self.repo.mark_done(outcome.done)
            for tombstone_id, reason in outcome.failed.items():
                await self.repo.mark_failed(tombstone_id, reason)
            failures |= outcome.failed
            done += len(outcome.done)
            if not outcome.done and not outcome.failed:
                break  # the provider could not be reached: everything waits for the next run
        return done, failures

    async def prune(self, now: datetime | None = None) -> int:
        return await self.repo.prune((now or datetime.now(UTC)) - TOMBSTONE_LIFETIME)
