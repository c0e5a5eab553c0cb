"""The change feed between processes (issue 36, two nodes): a committed batch too large for one PostgreSQL
notification (8000 bytes at most) still reaches every watcher, as a request to read its states again."""

from __future__ import annotations

import asyncio

from plmail.db.repos.changes import ChangeLogRepository
from plmail.domain.enums import JmapObjectType
from plmail.mail.change_feed import RESYNC
from plmail.mail.changes import StateManager
from plmail.services import Services


async def test_a_batch_too_large_for_one_notification_makes_every_watcher_read_again(services: Services) -> None:
    async with services.change_feed.subscribe([7]) as watching_seven, services.change_feed.subscribe([-3]) as unified:
        batch = StateManager(ChangeLogRepository(services.db))
        for account in range(1, 1001):  # a thousand accounts' Emails: about 14 kB of ids, too large to notify
            batch.dirty.add((account, JmapObjectType.EMAIL))
        async with services.db.transaction():
            await batch.announce()
        assert await asyncio.wait_for(watching_seven.get(), 5) == RESYNC
        assert await asyncio.wait_for(unified.get(), 5) == RESYNC  # not in the batch, yet told: nothing is lost

        small = StateManager(ChangeLogRepository(services.db))
        small.dirty.add((7, JmapObjectType.EMAIL))
        async with services.db.transaction():
            await small.announce()
        assert await asyncio.wait_for(watching_seven.get(), 5) == 7  # an ordinary batch names its accounts
        assert unified.empty()
