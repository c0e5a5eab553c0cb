"""Read-only views over saq's job table for the admin page.

Raw SQL because saq keeps the job as serialised JSON in a bytea column; decoding it in the query
avoids loading every failed job into Python to show a count.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime

from plmail.db.database import Database
from plmail.domain.enums import QueueName
from plmail.domain.models import FailedJob, QueueCounts


class QueueStatsRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def counts(self) -> list[QueueCounts]:
        exists = await self.db.fetchval("SELECT to_regclass('public.saq_jobs') IS NOT NULL")
        if not exists:
            return [QueueCounts(q.value, 0, 0, 0, 0, 0, 0) for q in QueueName]
        rows = await self.db.fetch(
            """SELECT queue,
                      count(*) FILTER (WHERE status = 'queued' AND scheduled <= extract(epoch FROM now())) AS queued,
                      count(*) FILTER (WHERE status IN ('queued', 'new', 'deferred')
                                       AND scheduled > extract(epoch FROM now())) AS scheduled,
                      count(*) FILTER (WHERE status = 'active') AS active,
                      count(*) FILTER (WHERE status = 'failed') AS failed,
                      count(*) FILTER (WHERE status = 'complete') AS complete,
                      extract(epoch FROM now()) - min(scheduled) FILTER (
                          WHERE status = 'queued' AND scheduled <= extract(epoch FROM now())) AS oldest_seconds
                 FROM saq_jobs GROUP BY queue"""
        )
        workers = await self.db.fetch(
            """SELECT queue_key, count(*) AS n FROM saq_stats
                WHERE expire_at >= extract(epoch FROM now()) GROUP BY queue_key"""
        )
        by_queue = {r["queue"]: r for r in rows}
        worker_counts = {r["queue_key"]: r["n"] for r in workers}
        result = []
        for queue in QueueName:
            r = by_queue.get(queue.value)
            result.append(
                QueueCounts(
                    queue=queue.value,
                    queued=r["queued"] if r else 0,
                    scheduled=r["scheduled"] if r else 0,
                    active=r["active"] if r else 0,
                    failed=r["failed"] if r else 0,
                    complete=r["complete"] if r else 0,
                    workers=worker_counts.get(queue.value, 0),
                    oldest_seconds=float(r["oldest_seconds"]) if r and r["oldest_seconds"] is not None else None,
                )
            )
        return result

    async def recent_failures(self, limit: int = 50) -> list[FailedJob]:
        exists = await self.db.fetchval("SELECT to_regclass('public.saq_jobs') IS NOT NULL")
        if not exists:
            return []
        rows = await self.db.fetch(
            """SELECT key, queue, convert_from(job, 'UTF8')::jsonb AS job
                 FROM saq_jobs WHERE status = 'failed'
                ORDER BY (convert_from(job, 'UTF8')::jsonb ->> 'completed')::bigint DESC NULLS LAST
                LIMIT $1""",
            limit,
        )
        failures = []
        for r in rows:
            job = json.loads(r["job"]) if isinstance(r["job"], str) else r["job"]
            completed = job.get("completed") or 0
            failures.append(
                FailedJob(
                    key=r["key"],
                    queue=r["queue"],
                    function=str(job.get("function", "")),
                    error=str(job.get("error") or ""),
                    attempts=int(job.get("attempts") or 0),
                    finished_at=datetime.fromtimestamp(completed / 1000, UTC) if completed else None,
                )
            )
        return failures

    async def due_or_running(self, queues: Sequence[QueueName]) -> int:
        """Jobs on these queues that are due now or running: the work a lower-priority job steps back for."""
        return int(await self.db.fetchval(
            """SELECT count(*) FROM saq_jobs
                WHERE queue = ANY($1::text[])
                  AND (status = 'active' OR (status = 'queued' AND scheduled <= extract(epoch FROM now())))""",
            [q.value for q in queues],
        ))

    async def waiting_or_running(self, queue: QueueName) -> int:
        """Everything still to do on a queue, scheduled jobs included."""
        return int(await self.db.fetchval(
            "SELECT count(*) FROM saq_jobs WHERE queue = $1 AND status IN ('queued', 'active', 'new', 'deferred')",
            queue.value,
        ))

    async def discard_failed(self, key: str) -> bool:
        status = await self.db.execute("DELETE FROM saq_jobs WHERE key = $1 AND status = 'failed'", key)
        return status.endswith(" 1")

    async def failed_queue(self, key: str) -> str | None:
        value = await self.db.fetchval("SELECT queue FROM saq_jobs WHERE key = $1 AND status = 'failed'", key)
        return str(value) if value is not None else None
