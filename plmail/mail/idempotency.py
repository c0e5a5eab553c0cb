"""Applying an action once per idempotency key (the IETF Idempotency-Key header's idea): a notification's Archive
pressed twice, or an offline queue replayed after a lost answer, changes the mailbox once."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

from plmail.db.database import Database
from plmail.domain.errors import ValidationError
from plmail.mail.repos.applied_actions import AppliedActionRepository

MAX_IDEMPOTENCY_KEY: Final = 200
# How long a key is remembered: longer than a notification's token lives (7 days) and than a device plausibly
# stays offline with a queue; older keys are pruned daily.
KEEP_KEYS_DAYS: Final = 30


class AppliedActions:
    def __init__(self, db: Database) -> None:
        self.repo = AppliedActionRepository(db)

    @asynccontextmanager
    async def once(self, user_id: int, idempotency_key: str) -> AsyncIterator[bool]:
        """Yields True the first time a key is seen (do the action), False for a replay (do nothing). An action
        that fails is no replay: its key is forgotten, so the same request may be sent again."""
        if not idempotency_key or len(idempotency_key) > MAX_IDEMPOTENCY_KEY:
            raise ValidationError(f"An idempotency key has 1 to {MAX_IDEMPOTENCY_KEY} characters.")
        fresh = await self.repo.claim(user_id, idempotency_key)
        try:
            yield fresh
        except BaseException:
            if fresh:
                await self.repo.release(user_id, idempotency_key)
            raise

    async def prune(self) -> int:
        return await self.repo.forget_older_than(KEEP_KEYS_DAYS)
