"""HeldMailReleaser: the one end of holding, whichever of the three ways reaches it.

The model's answer, the delayed release job and the minute cron all end here, so releasing twice is
harmless (the second finds nothing held) and every release moves threads and tells clients the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Protocol

from plmail.db.database import Database
from plmail.db.repos.assistant import AssistantRepository, ReleasedMessage
from plmail.db.repos.changes import ChangeLogRepository
from plmail.db.repos.threads import CategoryMove, ThreadRepository
from plmail.mail.changes import MailChangeRecorder, StateManager

log = logging.getLogger(__name__)


class ReleaseListener(Protocol):
    """Work that waits for held mail to be sorted (proposals read only sorted mail); told after commit."""

    name: str

    async def after_release(self, released: Sequence[ReleasedMessage]) -> None: ...


class HeldMailReleaser:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.repo = AssistantRepository(db)
        self.threads = ThreadRepository(db)
        self.change_log = ChangeLogRepository(db)
        self.listeners: list[ReleaseListener] = []

    def register(self, listener: ReleaseListener) -> None:
        self.listeners.append(listener)

    async def tell(self, released: Sequence[ReleasedMessage]) -> None:
        """After commit; a listener that fails costs its own work, never the release."""
        if not released:
            return
        for listener in self.listeners:
            try:
                await listener.after_release(released)
            except Exception:
                log.exception("release listener %s failed", listener.name)

    async def release(self, message_ids: Sequence[int]) -> int:
        """Show held mail under the category it has now (the cascade's, or the model's if it answered)."""
        if not message_ids:
            return 0
        state = StateManager(self.change_log)
        async with self.db.transaction():
            released = await self.release_within(message_ids, MailChangeRecorder(state))
            await state.write()
            await state.announce()
        await self.tell(released)
        return len(released)

    async def release_within(self, message_ids: Sequence[int], recorder: MailChangeRecorder
                             ) -> list[ReleasedMessage]:
        """Release inside the caller's transaction, recording what moved on the caller's recorder; the
        caller tells the listeners once it has committed."""
        released = await self.repo.release(message_ids)
        for message in released:
            recorder.email_changed(message.account_id, message.id)
        await self.refresh_threads([m.thread_id for m in released if m.thread_id is not None], recorder)
        return released

    async def refresh_threads(self, thread_ids: Sequence[int], recorder: MailChangeRecorder) -> list[CategoryMove]:
        moves = await self.threads.refresh_categories(sorted(set(thread_ids)))
        by_account: dict[int, list[int]] = {}
        for move in moves:
            by_account.setdefault(move.account_id, []).append(move.thread_id)
        for account_id, threads in by_account.items():
            recorder.threads_touched(account_id, threads)
        return moves

    async def release_overdue(self, hold_max_seconds: int) -> int:
        """The safety net: anything held longer than the limit, in case neither the answer nor the job came."""
        total = 0
        while ids := await self.repo.overdue(hold_max_seconds):
            total += await self.release(ids)
        return total
