"""Queue overview, queue probes and health checks."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from plmail.admin.repos.health import HealthRepository
from plmail.admin.repos.probes import QueueProbeRepository
from plmail.db.database import Database
from plmail.db.repos.queues import QueueStatsRepository
from plmail.domain.enums import QueueName
from plmail.domain.errors import NotFoundError
from plmail.domain.jobs import PROBE_QUEUE
from plmail.domain.models import FailedJob, QueueCounts, QueueProbe
from plmail.domain.ports import Enqueuer, FailedJobRequeuer


class QueueProbeService:
    def __init__(self, db: Database, queues: Enqueuer) -> None:
        self.repo = QueueProbeRepository(db)
        self.queues = queues

    async def request_all(self) -> dict[QueueName, int]:
        ids: dict[QueueName, int] = {}
        for queue in QueueName:
            probe_id = await self.repo.create(queue)
            await self.queues.enqueue(PROBE_QUEUE, queue=queue, probe_id=probe_id)
            ids[queue] = probe_id
        return ids

    async def mark_ran(self, probe_id: int, worker: str) -> None:
        if not await self.repo.mark_ran(probe_id, worker):
            raise NotFoundError(f"Queue probe {probe_id} does not exist (it may have been pruned).")

    async def latest(self) -> list[QueueProbe]:
        return await self.repo.latest_per_queue()

    async def prune(self) -> int:
        return await self.repo.prune(older_than_days=30)


class QueueOverviewService:
    def __init__(self, db: Database, queues: FailedJobRequeuer) -> None:
        self.repo = QueueStatsRepository(db)
        self.queues = queues

    async def counts(self) -> list[QueueCounts]:
        return await self.repo.counts()

    async def failures(self, limit: int = 50) -> list[FailedJob]:
        return await self.repo.recent_failures(limit)

    async def retry_failed(self, key: str) -> None:
        """Run a failed job again from its first attempt, now."""
        name = await self.repo.failed_queue(key)
        if name is None or name not in QueueName._value2member_map_:
            raise NotFoundError("That failed job is gone; it may have been retried or discarded already.")
        if not await self.queues.requeue_failed(QueueName(name), key):
            raise NotFoundError("That failed job is gone; it may have been retried or discarded already.")

    async def discard_failed(self, key: str) -> None:
        if not await self.repo.discard_failed(key):
            raise NotFoundError("That failed job is gone; it may have been retried or discarded already.")


@dataclass(frozen=True, slots=True)
class HealthReport:
    database: str
    workers: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.database == "ok" and all(state == "running" for state in self.workers.values())


class HealthService:
    """What /healthz reports of the database (the workers' states come from the process that runs them)."""

    def __init__(self, db: Database) -> None:
        self.repo = HealthRepository(db)

    async def database(self, limit_seconds: float = 3.0) -> str:
        return await database_health(self.repo, limit_seconds)


async def database_health(repo: HealthRepository, limit_seconds: float = 3.0) -> str:
    try:
        value = await asyncio.wait_for(repo.ping(), limit_seconds)
    except (TimeoutError, OSError) as exc:
        return f"unreachable: {type(exc).__name__}"
    except Exception as exc:  # any driver error means "not healthy", reported rather than raised
        return f"error: {type(exc).__name__}: {exc}"
    return "ok" if value == 1 else "error: unexpected answer"
