"""LiveMailPriority: bulk classification steps back before each model call while live work is due.

Separate workers still end at one model host that answers one request after another; checking before
every call means live mail waits behind at most the one bulk call already running.
"""

from __future__ import annotations

import asyncio
import time

from plmail.db.repos.queues import QueueStatsRepository
from plmail.domain.enums import QueueName

# Who a bulk job gives way to: enrich yields to live mail; the backlog runs after both.
AHEAD_OF: dict[QueueName, tuple[QueueName, ...]] = {
    QueueName.ENRICH: (QueueName.ENRICH_LIVE,),
    QueueName.ENRICH_BACKLOG: (QueueName.ENRICH_LIVE, QueueName.ENRICH),
}
POLL_SECONDS = 0.1
# A bulk call goes ahead after this long even under a steady stream of live mail, so the backlog moves.
MAX_STEP_BACK_SECONDS = 120.0


class LiveMailPriority:
    def __init__(self, stats: QueueStatsRepository, *, poll_seconds: float = POLL_SECONDS,
                 max_wait_seconds: float = MAX_STEP_BACK_SECONDS) -> None:
        self.stats = stats
        self.poll_seconds = poll_seconds
        self.max_wait_seconds = max_wait_seconds

    async def wait_turn(self, queue: QueueName) -> float:
        """Wait while a queue ahead of `queue` has due or running work; returns the seconds waited."""
        ahead = AHEAD_OF.get(queue, ())
        if not ahead:
            return 0.0
        started = time.monotonic()
        while await self.stats.due_or_running(ahead) > 0:
            if time.monotonic() - started >= self.max_wait_seconds:
                break
            await asyncio.sleep(self.poll_seconds)
        return time.monotonic() - started
