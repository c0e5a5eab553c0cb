"""The saq queues on PostgreSQL, sharing one psycopg pool: the `Enqueuer` every service puts jobs through.

Each PostgresQueue would otherwise open its own pool (4–20 connections) plus a LISTEN connection;
six of those would exhaust a small server before any mail arrived.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any

from psycopg_pool import AsyncConnectionPool
from saq import Job, Status
from saq.queue.postgres import PostgresQueue

from plmail.domain.enums import QueueName
from plmail.domain.jobs import JobSpec

log = logging.getLogger(__name__)

# How long finished jobs stay visible: completed ones briefly, failed ones long enough to be looked at.
COMPLETED_TTL_SECONDS = 3600
FAILED_TTL_SECONDS = 14 * 24 * 3600


class PausablePostgresQueue(PostgresQueue):
    """A PostgresQueue that can stop handing out jobs while its worker shuts down.

    saq swallows a cancellation that lands in a dequeue and may then start the job it fetched, so
    cancelling idle dequeue loops alone cannot stop a worker from taking new work.
    """

    paused: bool = False

    async def _dequeue(self) -> None:
        if self.paused:
            return
        await super()._dequeue()


class QueueSet:
    """Opens the shared pool and one PostgresQueue per queue name; enqueues with sane defaults."""

    def __init__(self, dsn: str, *, pool_max: int = 20) -> None:
        # Six LISTEN connections are held for good; leave room for the jobs themselves.
        self.pool = AsyncConnectionPool(
            dsn,
            open=False,
            min_size=2,
            max_size=max(pool_max, len(QueueName) + 6),
            kwargs={"autocommit": True},
            check=AsyncConnectionPool.check_connection,
        )
        self.queues: dict[QueueName, PausablePostgresQueue] = {
            name: PausablePostgresQueue(pool=self.pool, name=name.value, manage_pool_lifecycle=False)
            for name in QueueName
        }
        self._connected = False

    async def connect(self) -> None:
        await self.pool.open(wait=True, timeout=30)
        for queue in self.queues.values():
            await queue.connect()
        self._connected = True

    async def disconnect(self) -> None:
        if not self._connected:
            return
        for queue in self.queues.values():
            await queue.disconnect()
        await self.pool.close()
        self._connected = False

    async def requeue_failed(self, queue: QueueName, key: str) -> bool:
        saq_queue = self.queues[queue]
        job = await saq_queue.job(key)
        if job is None:
            return False
        await saq_queue.update(job, status=Status.QUEUED, error=None, attempts=0, started=0, completed=0,
                               progress=0.0, scheduled=int(time.time()), expire_at=None)
        return True

    def __getitem__(self, name: QueueName) -> PausablePostgresQueue:
        return self.queues[name]

    async def enqueue(
        self,
        job: JobSpec,
        *,
        queue: QueueName | None = None,
        delay_seconds: float = 0,
        unique_key: str | None = None,
        **arguments: Any,
    ) -> Job | None:
        """Put `job(**arguments)` on `queue` (default: the job's own). None when `unique_key` is already queued."""
        target = queue or job.queue
        if target not in job.queues:
            raise ValueError(f"job {job.name} does not run on queue {target.value}")
        job_fields: dict[str, Any] = {
            "timeout": job.timeout,
            "retries": job.retries,
            "retry_delay": job.retry_delay,
            "retry_backoff": job.retry_backoff,
            "ttl": COMPLETED_TTL_SECONDS,
        }
        if delay_seconds > 0:
            # Rounded up: saq keeps whole seconds, and a job woken before its time (a send inside its undo
            # window) could not queue itself again under its own key while it is still the running job.
            job_fields["scheduled"] = math.ceil(time.time() + delay_seconds)
        if unique_key is not None:
            job_fields["key"] = unique_key
        enqueued: Job | None = await self.queues[target].enqueue(Job(function=job.name, kwargs=arguments, **job_fields))
        return enqueued
