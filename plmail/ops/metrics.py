"""What `/metrics` shows, in the Prometheus text format (prometheus-client).

Job outcomes and durations are counted in the process that runs the jobs, as they finish; what the
database knows (queue depth, each account's sync and import, how long mail was held) is read when
Prometheus asks, so it is right however many worker processes share the database.
HTTP durations by route come from Litestar's Prometheus middleware (see plmail/app.py).
"""

from __future__ import annotations

import time
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, Counter, Gauge, Histogram, generate_latest
from saq import Status

from plmail.accounts.importing import MailImporter
from plmail.admin.service import QueueOverviewService
from plmail.db.database import Database
from plmail.db.repos.assistant import AssistantRepository
from plmail.domain.enums import ProviderKind
from plmail.ops.repos.installation import InstallationRepository

__all__ = ["CONTENT_TYPE_LATEST", "HTTP_PREFIX", "MetricsService", "observe_job"]

HTTP_PREFIX = "plmail_http"

JOBS = Counter("plmail_jobs", "Jobs that ended an attempt, by queue and outcome", ["queue", "outcome"])
JOB_DURATION = Histogram(
    "plmail_job_duration_seconds", "Time one job attempt ran, by queue", ["queue"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 1800),
)
# Summed over every node it counts each tick once: two nodes schedule the same cron under one job key.
CRON_RUNS = Counter("plmail_cron_runs", "Scheduled (cron) job runs this process did, by job", ["job"])
QUEUE_JOBS = Gauge("plmail_queue_jobs", "Jobs on each queue by state", ["queue", "state"])
QUEUE_OLDEST = Gauge("plmail_queue_oldest_waiting_seconds", "How long the oldest due job has waited", ["queue"])
SYNC_LAG = Gauge("plmail_account_sync_lag_seconds", "Seconds since the account's last completed sync",
                 ["account", "provider"])
ACCOUNT_ERROR = Gauge("plmail_account_error", "1 while the account needs attention (sign-in, sync or import error)",
                      ["account", "provider", "status"])
IMPORT_STORED = Gauge("plmail_import_stored_messages", "Messages of the account's history stored so far", ["account"])
IMPORT_REPORTED = Gauge("plmail_import_reported_messages", "Messages the provider reports for the account",
                        ["account"])
IMPORT_RUNNING = Gauge("plmail_import_running", "1 while the account's first import is still running", ["account"])
HOLD_LATENCY = Gauge("plmail_hold_latency_seconds", "How long mail was held for the model before it showed",
                     ["quantile"])
HOLD_RELEASED = Gauge("plmail_hold_released_messages", "Messages that were held for the model and then shown")
DB_POOL = Gauge("plmail_db_pool_connections", "Connections of the database pool by state", ["state"])

_OUTCOMES = {Status.COMPLETE: "complete", Status.FAILED: "failed", Status.ABORTED: "aborted"}


def observe_job(queue: str, job: Any) -> None:
    """After each attempt (saq's after_process): an attempt that is queued again was retried."""
    if job is None:
        return
    status = getattr(job, "status", None)
    outcome = _OUTCOMES.get(status, "retried") if status is not None else "unknown"
    JOBS.labels(queue, outcome).inc()
    function = getattr(job, "function", "")
    if getattr(job, "key", None) == f"cron:{function}":  # saq's key for a unique cron job
        CRON_RUNS.labels(function).inc()
    started = int(getattr(job, "started", 0) or 0)
    if started:
        JOB_DURATION.labels(queue).observe(max(time.time() - started / 1000, 0.0))


class MetricsService:
    """What Prometheus reads: the process's own job counters, plus what the database knows, read on each scrape."""

    def __init__(self, db: Database, queue_overview: QueueOverviewService, importer: MailImporter) -> None:
        self.db = db
        self.queue_overview = queue_overview
        self.importer = importer
        self.accounts = InstallationRepository(db)
        self.assistant = AssistantRepository(db)

    async def render(self) -> bytes:
        """Read what the database knows, then the whole registry in the text format."""
        await self._refresh_queues()
        await self._refresh_accounts()
        await self._refresh_hold()
        self._refresh_pool()
        return bytes(generate_latest(REGISTRY))

    async def _refresh_queues(self) -> None:
        QUEUE_JOBS.clear()
        QUEUE_OLDEST.clear()
        for counts in await self.queue_overview.counts():
            for state in ("queued", "scheduled", "active", "failed"):
                QUEUE_JOBS.labels(counts.queue, state).set(getattr(counts, state))
            QUEUE_OLDEST.labels(counts.queue).set(counts.oldest_seconds or 0.0)

    async def _refresh_accounts(self) -> None:
        now = time.time()
        accounts = await self.accounts.account_health()
        for gauge in (SYNC_LAG, ACCOUNT_ERROR, IMPORT_STORED, IMPORT_REPORTED, IMPORT_RUNNING):
            gauge.clear()
        for account in accounts:
            if not account.is_active or account.provider_kind is ProviderKind.LOCAL:
                continue
            label, provider = str(account.id), account.provider_kind.value
            if account.last_synced_at is not None:
                SYNC_LAG.labels(label, provider).set(now - account.last_synced_at.timestamp())
            failing = account.status.value != "ok" or bool(account.import_error) or bool(account.status_detail)
            ACCOUNT_ERROR.labels(label, provider, account.status.value).set(1 if failing else 0)
            progress = await self.importer.progress(account.id)
            if progress is not None:
                IMPORT_STORED.labels(label).set(progress.done)
                IMPORT_REPORTED.labels(label).set(progress.total)
                IMPORT_RUNNING.labels(label).set(1 if progress.importing else 0)

    async def _refresh_hold(self) -> None:
        stats = await self.assistant.hold_stats()
        HOLD_RELEASED.set(stats.held)
        HOLD_LATENCY.clear()
        if stats.median_seconds is not None:
            HOLD_LATENCY.labels("0.5").set(stats.median_seconds)
        if stats.p95_seconds is not None:
            HOLD_LATENCY.labels("0.95").set(stats.p95_seconds)

    def _refresh_pool(self) -> None:
        pool = self.db.engine.pool
        if pool is None:
            return
        size, idle = pool.get_size(), pool.get_idle_size()
        DB_POOL.labels("in_use").set(size - idle)
        DB_POOL.labels("idle").set(idle)
        DB_POOL.labels("max").set(pool.get_max_size())
