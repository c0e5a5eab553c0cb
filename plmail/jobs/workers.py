"""One saq Worker per queue as asyncio tasks, supervised, stopped with a grace period.

saq's own signal handling is switched off (``Worker.SIGNALS = []``): it would take SIGTERM away
from uvicorn, stop one worker and leave the server running. The owner of the event loop stops us.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from croniter import croniter
from saq import CronJob, Status, Worker

from plmail.db.queues import FAILED_TTL_SECONDS, PausablePostgresQueue, WorkerLease
from plmail.domain.enums import QueueName
from plmail.jobs.catalog import JobCatalog, named
from plmail.jobs.context import SERVICES_KEY
from plmail.ops.logs import bind_job
from plmail.ops.metrics import observe_job

if TYPE_CHECKING:
    from plmail.services import Services

log = logging.getLogger(__name__)

Worker.SIGNALS = []

# Concurrency per queue: syncs hold provider connections, follow-up work is light, releases are tiny, sends
# wait on other people's servers.
CONCURRENCY: dict[QueueName, int] = {
    QueueName.INGEST: 4,
    QueueName.INGEST_BACKLOG: 2,
    QueueName.ENRICH_LIVE: 4,
    QueueName.ENRICH: 4,
    QueueName.ENRICH_BACKLOG: 2,
    QueueName.RELEASE: 2,
    QueueName.SEND: 4,
}
_RESTART_DELAY_MAX = 30.0
_CANCEL_WAIT_SECONDS = 2.0
# How often a worker looks for jobs a dead worker left active (and once at start), re-taking its process's lease
# if the database lost it: well within db/queues.py's LEASE_SETTLE_SECONDS.
ORPHAN_SWEEP_SECONDS = 5.0


class WorkerState(StrEnum):
    STARTING = "starting"
    RUNNING = "running"
    RESTARTING = "restarting"
    STOPPED = "stopped"


class GracefulWorker(Worker[Any]):
    """A Worker whose stop() lets running jobs finish within a grace period.

    saq's stop() waits the grace period for *every* task, idle dequeue loops included, so it always
    waits the full period; here we wait only while jobs are actually running, then cancel the rest.
    A job cut off is put back on its queue, never lost. One left active by a process that died (kill -9, a
    lost machine) is put back by the first worker that sweeps its queue: at its start, and every
    ORPHAN_SWEEP_SECONDS (db/queues.py, WorkerLease), so a crash costs at most the page of work it cut off.
    """

    def __init__(self, queue: PausablePostgresQueue, *args: Any, grace_seconds: float, lease: WorkerLease,
                 **kwargs: Any) -> None:
        super().__init__(queue, *args, shutdown_grace_period_s=0, id=lease.worker_id(queue.name), **kwargs)
        self.grace_seconds = grace_seconds
        self.lease = lease
        self._stopping: asyncio.Future[None] | None = None
        self._cron_sent_until: dict[str, float] = {}

    async def start(self) -> None:
        self._pause(False)
        self._stopping = None
        # No job runs under our id before the lease that vouches for it is ours.
        while not await self.lease.keep():  # noqa: ASYNC110 (nothing to wait on: the database is away)
            await asyncio.sleep(1.0)
        await super().start()

    async def schedule(self, lock: int = 1) -> None:
        """saq's, less its re-sending of every cron job's next run each second: an idle server wrote about fifteen
        no-op INSERTs a second. A run known to be on the queue is not sent again before it is due; once it is, the
        next one is sent every second until it goes in, as saq does (a run still going keeps it out)."""
        now = time.time()
        for cron_job in self.cron_jobs:
            name = cron_job.function.__qualname__
            if now < self._cron_sent_until.get(name, 0.0):
                continue
            kwargs = cron_job.__dict__.copy()
            kwargs.pop("function")
            kwargs["key"] = f"cron:{name}" if kwargs.pop("unique") else None
            scheduled = int(croniter(kwargs.pop("cron"), datetime.now(self.cron_tz)).get_next())
            sent = await self.queue.enqueue(name, scheduled=scheduled,
                                            **{k: v for k, v in kwargs.items() if v is not None})
            if sent is not None or await self._run_on_the_queue(kwargs["key"], scheduled):
                self._cron_sent_until[name] = scheduled
        job_ids = await self.queue.schedule(lock)
        if job_ids:
            log.info("Scheduled %s", job_ids)

    async def _run_on_the_queue(self, key: str | None, scheduled: int) -> bool:
        """Whether this run of a unique cron job is already waiting (sent before, or by another node)."""
        if key is None:
            return False
        waiting = await self.queue.job(key)
        return waiting is not None and waiting.status == Status.QUEUED and waiting.scheduled >= scheduled

    async def upkeep(self) -> list[asyncio.Task[None]]:
        tasks = await super().upkeep()
        tasks.append(asyncio.create_task(self._sweep_orphans()))
        return tasks

    async def _sweep_orphans(self) -> None:
        while not self.event.is_set():
            try:
                if await self.lease.keep() and isinstance(self.queue, PausablePostgresQueue):
                    await self.queue.requeue_orphans(self.lease, {job.key for job in self.job_task_contexts})
            except Exception:  # the database may be away for a moment; the next round tries again
                log.warning("queue %s: looking for orphaned jobs failed", self.queue.name, exc_info=True)
            await asyncio.sleep(ORPHAN_SWEEP_SECONDS)

    def _pause(self, paused: bool) -> None:
        if isinstance(self.queue, PausablePostgresQueue):
            self.queue.paused = paused

    async def stop(self) -> None:
        """Single flight: the owner's stop and start()'s own `finally: stop()` run one shutdown, and
        cancelling either caller never cuts a requeue off half-way."""
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self._shut_down())
        await asyncio.shield(self._stopping)

    async def _shut_down(self) -> None:
        self.event.set()
        self._pause(True)  # from here on no loop of ours takes a new job
        deadline = time.monotonic() + self.grace_seconds
        while self.job_task_contexts and (remaining := deadline - time.monotonic()) > 0:
            await asyncio.wait([ctx["task"] for ctx in self.job_task_contexts.values()], timeout=remaining)
        if self.job_task_contexts:
            log.warning("queue %s: %d job(s) still running after the grace period; they go back on the queue",
                        self.queue.name, len(self.job_task_contexts))
        # Cancel the dequeue loops and overdue jobs ourselves; saq puts a job cancelled this way back.
        loops = list(self.tasks)
        self.tasks.clear()
        for task in loops:
            task.cancel()
        if loops:
            await asyncio.wait(loops, timeout=_CANCEL_WAIT_SECONDS)
        # A cancellation saq swallowed leaves its job running: stop such jobs directly and requeue them.
        for job, context in list(self.job_task_contexts.items()):
            context["task"].cancel()
            await job.retry("plmail stopped before the job finished")
        if loops:
            await asyncio.wait(loops, timeout=_CANCEL_WAIT_SECONDS)
        await super().stop()


@dataclass(slots=True)
class _Slot:
    queue: QueueName
    worker: GracefulWorker
    task: asyncio.Task[None] | None = None
    state: WorkerState = WorkerState.STARTING
    restarts: int = 0
    last_error: str = ""


class WorkerSupervisor:
    def __init__(
        self,
        services: Services,
        catalog: JobCatalog,
        queues: Iterable[QueueName],
        *,
        grace_seconds: float,
    ) -> None:
        self.services = services
        self.catalog = catalog.with_jobs(services.provider_roles.jobs)
        self.grace_seconds = grace_seconds
        self._slots = [_Slot(queue, self._build(queue)) for queue in queues]
        self._stopping = False

    def _build(self, queue: QueueName) -> GracefulWorker:
        services = self.services

        async def startup(ctx: dict[str, Any]) -> None:
            ctx[SERVICES_KEY] = services

        async def before_process(ctx: dict[str, Any]) -> None:
            bind_job(ctx.get("job"))  # the job's task copies this context: its log lines name job and account

        async def after_process(ctx: dict[str, Any]) -> None:
            job = ctx.get("job")
            observe_job(queue.value, job)
            if job is not None and job.status == Status.FAILED:
                # Keep failures around long enough for someone to read them on the admin page.
                await job.update(status=Status.FAILED, expire_at=int(time.time()) + FAILED_TTL_SECONDS)

        crons = [
            CronJob(named(entry.spec, entry.function), cron=entry.spec.cron or "", unique=True,
                    timeout=entry.spec.timeout)
            for entry in self.catalog.crons_for(queue)
        ]
        return GracefulWorker(
            self.services.queues[queue],
            functions=self.catalog.functions_for(queue),
            cron_jobs=crons,
            concurrency=CONCURRENCY[queue],
            startup=[startup],
            before_process=[before_process],
            after_process=[after_process],
            grace_seconds=self.grace_seconds,
            lease=self.services.queues.lease,
        )

    def start(self) -> None:
        for slot in self._slots:
            slot.task = asyncio.create_task(self._run(slot), name=f"worker:{slot.queue}")

    async def _run(self, slot: _Slot) -> None:
        delay = 1.0
        while not self._stopping:
            slot.state = WorkerState.RUNNING
            try:
                await slot.worker.start()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a crashed worker must not take the process or other queues down
                slot.last_error = f"{type(exc).__name__}: {exc}"
                log.exception("worker for queue %s crashed", slot.queue)
            if self._stopping:
                break
            slot.state = WorkerState.RESTARTING
            slot.restarts += 1
            await asyncio.sleep(delay)
            delay = min(delay * 2, _RESTART_DELAY_MAX)
            slot.worker = self._build(slot.queue)
        slot.state = WorkerState.STOPPED

    async def stop(self) -> None:
        self._stopping = True
        await asyncio.gather(*(slot.worker.stop() for slot in self._slots), return_exceptions=True)
        for slot in self._slots:
            if slot.task is not None:
                slot.task.cancel()
        await asyncio.gather(*(s.task for s in self._slots if s.task is not None), return_exceptions=True)
        for slot in self._slots:
            slot.state = WorkerState.STOPPED

    def status(self) -> dict[str, str]:
        result: dict[str, str] = {}
        for slot in self._slots:
            alive = slot.task is not None and not slot.task.done()
            result[slot.queue.value] = slot.state.value if alive or slot.state is WorkerState.STOPPED else "dead"
        return result

    def healthy(self) -> bool:
        return all(state == WorkerState.RUNNING.value for state in self.status().values())

