"""Queue probes requested from the admin page."""

from __future__ import annotations

from plmail.db.database import Database
from plmail.domain.enums import QueueName
from plmail.domain.models import QueueProbe


class QueueProbeRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def create(self, queue: QueueName) -> int:
        return int(await self.db.fetchval(
            "INSERT INTO queue_probe (queue, requested_at) VALUES ($1, now()) RETURNING id", queue.value
        ))

    async def mark_ran(self, probe_id: int, worker: str) -> bool:
        status = await self.db.execute(
            "UPDATE queue_probe SET ran_at = clock_timestamp(), worker = $2 WHERE id = $1", probe_id, worker
        )
        return status.endswith(" 1")

    async def latest_per_queue(self) -> list[QueueProbe]:
        rows = await self.db.fetch(
            """SELECT DISTINCT ON (queue) id, queue, requested_at, ran_at, worker
                 FROM queue_probe ORDER BY queue, requested_at DESC, id DESC"""
        )
        return [QueueProbe(r["id"], r["queue"], r["requested_at"], r["ran_at"], r["worker"]) for r in rows]

    async def prune(self, older_than_days: int) -> int:
        status = await self.db.execute(
            "DELETE FROM queue_probe WHERE requested_at < now() - make_interval(days => $1)", older_than_days
        )
        return int(status.split()[-1])
