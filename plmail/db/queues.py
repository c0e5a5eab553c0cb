"""The saq queues on PostgreSQL, sharing one psycopg pool: the `Enqueuer` every service puts jobs through.

Each PostgresQueue would otherwise open its own pool (4–20 connections) plus a LISTEN connection;
six of those would exhaust a small server before any mail arrived.

A process that runs workers holds a lease: a session advisory lock on a connection of its own, which
PostgreSQL releases the moment the process dies (kill -9 included). Its workers' ids carry the lease's token,
so a job left "active" by a dead process is recognised at once (its lease is free) and put back on its queue,
instead of waiting out its timeout (up to half an hour for a sync).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import secrets
import sys
import time
import uuid
from collections.abc import Collection
from typing import Any, Final

import psycopg
from psycopg.sql import SQL
from psycopg_pool import AsyncConnectionPool
from saq import Job, Status
from saq.queue.postgres import PostgresQueue
from saq.utils import now

from plmail.db.database import database_unavailable
from plmail.domain.enums import QueueName
from plmail.domain.jobs import JobSpec

log = logging.getLogger(__name__)

# How long finished jobs stay visible: completed ones briefly, failed ones long enough to be looked at.
COMPLETED_TTL_SECONDS = 3600
FAILED_TTL_SECONDS = 14 * 24 * 3600


LEASE_KEYSPACE: Final = 0x706C6C73  # "plls": the first key of every worker lease's advisory lock
_WORKER_ID_PREFIX: Final = "plmail:"
# A job dequeued moments ago may not carry its worker's id yet; one untouched for this long without an owner was
# dequeued by a process that died before it started the job.
_DEQUEUE_WINDOW_MS: Final = 5_000
_OWNERLESS_MS: Final = 30_000
# Right after PostgreSQL (re)started, live processes are still re-taking their leases (their workers check the
# lease every few seconds): judge nobody else's yet.
LEASE_SETTLE_SECONDS: Final = 15.0
_CRASHES_FORGIVEN: Final = 3  # a job orphaned more often than this starts using up its retries
# A job that failed because the database went away (a restart) is tried again this often at most, without using up
# its own retries: the database's restart is not the job's failure.
DATABASE_RETRIES: Final = 5
_DATABASE_WAIT_SECONDS: Final = 3.0


def lease_token(worker_id: str | None) -> int | None:
    """The lease token in one of our worker ids ("plmail:<token>:<queue>:<n>"), else None."""
    if not worker_id or not worker_id.startswith(_WORKER_ID_PREFIX):
        return None
    token = worker_id[len(_WORKER_ID_PREFIX):].split(":", 1)[0]
    return int(token) if token.isdigit() else None


class WorkerLease:
    """This process's proof of life, for other processes' sweeps: a session advisory lock on its own connection."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.token = secrets.randbelow(2**31 - 2) + 1
        self._conn: psycopg.AsyncConnection[Any] | None = None
        self._lock = asyncio.Lock()

    def worker_id(self, queue: str) -> str:
        return f"{_WORKER_ID_PREFIX}{self.token}:{queue}:{uuid.uuid4().hex[:8]}"

    async def keep(self) -> bool:
        """Hold the lease, taking it (again) when its connection is gone; False while the database is away."""
        async with self._lock:
            if self._conn is not None and not self._conn.closed:
                try:
                    await self._conn.execute("SELECT 1")
                    return True
                except psycopg.Error:
                    await self._close()
            try:
                conn = await psycopg.AsyncConnection.connect(self.dsn, autocommit=True, connect_timeout=10)
                await conn.execute("SELECT pg_advisory_lock(%s, %s)", (LEASE_KEYSPACE, self.token))
            except psycopg.Error as exc:
                log.warning("cannot take the worker lease yet: %s", exc)
                return False
            self._conn = conn
            return True

    async def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(psycopg.Error):
                await conn.close()

    async def release(self) -> None:
        async with self._lock:
            await self._close()


class PausablePostgresQueue(PostgresQueue):
    """A PostgresQueue that can stop handing out jobs while its worker shuts down, and can tell jobs a dead
    process left active (`requeue_orphans`).

    saq swallows a cancellation that lands in a dequeue and may then start the job it fetched, so
    cancelling idle dequeue loops alone cannot stop a worker from taking new work.
    """

    paused: bool = False

    async def _dequeue(self) -> None:
        if self.paused:
            return
        await super()._dequeue()

    async def finish(self, job: Job, status: Status, *, result: Any = None, error: str | None = None,
                     **kwargs: Any) -> None:
        """saq's, except that a job failed by the database going away goes back on its queue (DATABASE_RETRIES).

        saq calls this from inside its handler of the job's exception, whether the job's function raised it or
        marking the job as started did (a failure saq's after-process hooks never see), so the exception being
        handled is the one to judge."""
        if status == Status.FAILED and database_unavailable(sys.exc_info()[1]):
            tries = int(job.meta.get("database_retries", 0))
            if tries < DATABASE_RETRIES:
                job.meta["database_retries"] = tries + 1
                if await self._retry_when_back(job):
                    return
        await super().finish(job, status, result=result, error=error, **kwargs)

    async def _retry_when_back(self, job: Job) -> bool:
        for attempt in range(10):  # the database may still be starting: wait for it a little
            try:
                await self.retry(job, "the database was away; tried again")
            except (psycopg.Error, OSError):
                if attempt == 9:
                    log.warning("could not put job %s back after the database went away", job.key, exc_info=True)
                    return False
                await asyncio.sleep(_DATABASE_WAIT_SECONDS)
                continue
            log.info("job %s failed while the database was away; queued again (%s of %d)", job.key,
                     job.meta["database_retries"], DATABASE_RETRIES)
            return True
        return False

    async def requeue_orphans(self, lease: WorkerLease, running: Collection[str]) -> list[str]:
        """Put back on the queue, to run at once, every active job whose worker is gone: one of this process's
        that none of its workers runs (`running`), or one whose process's lease is free. A crash is not the
        job's failure, so it does not use up a retry (up to a few times, so a job that kills its process
        every time still comes to an end)."""
        async with self.pool.connection() as conn, conn.cursor() as cursor:
            await cursor.execute(
                SQL("SELECT key, job, extract(epoch from now() - pg_postmaster_start_time()) "
                    "FROM {jobs_table} WHERE queue = %(queue)s AND status = 'active'").format(
                    jobs_table=self.jobs_table),
                {"queue": self.name},
            )
            rows = await cursor.fetchall()
        if not rows:
            return []
        settled = float(rows[0][2]) > LEASE_SETTLE_SECONDS
        free: dict[int, bool] = {}
        requeued: list[str] = []
        for key, payload, _ in rows:
            job = self.deserialize(payload, Status.ACTIVE)
            if job is None or not await self._orphaned(job, lease, running, settled, free):
                continue
            if await self._requeue(job, payload):
                requeued.append(key)
        if requeued:
            log.warning("queue %s: %d job(s) left active by a worker that is gone, put back: %s", self.name,
                        len(requeued), ", ".join(requeued))
        return requeued

    async def _orphaned(self, job: Job, lease: WorkerLease, running: Collection[str], settled: bool,
                        free: dict[int, bool]) -> bool:
        age = now() - (job.touched or job.started or 0)
        token = lease_token(job.worker_id)
        if job.worker_id is None:
            return age > _OWNERLESS_MS
        if age < _DEQUEUE_WINDOW_MS:
            return False  # dequeued again just now: its new worker has not written its id yet
        if token == lease.token:
            return job.key not in running
        if token is None or not settled:
            return False  # a worker we cannot judge: saq's own sweep times it out
        if token not in free:
            free[token] = await self._lease_free(token)
        return free[token]

    async def _lease_free(self, token: int) -> bool:
        async with self.pool.connection() as conn, conn.cursor() as cursor:
            await cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", (LEASE_KEYSPACE, token))
            row = await cursor.fetchone()
            taken = bool(row and row[0])
            if taken:
                await cursor.execute("SELECT pg_advisory_unlock(%s, %s)", (LEASE_KEYSPACE, token))
        return taken

    async def _requeue(self, job: Job, payload: bytes) -> bool:
        """Only if the row is still as read: another sweeper, or the job's own end, may have moved it."""
        crashes = int(job.meta.get("crashes", 0)) + 1
        job.meta["crashes"] = crashes
        if crashes <= _CRASHES_FORGIVEN:
            job.attempts = max(job.attempts - 1, 0)
        retry = job.retryable
        job.status = Status.QUEUED if retry else Status.ABORTED
        job.error = "the worker running it stopped (its process ended)"
        job.started = 0
        job.progress = 0.0
        job.touched = now()
        job.scheduled = int(time.time())
        if not retry:
            job.completed = now()
        async with self.pool.connection() as conn, conn.cursor() as cursor:
            await cursor.execute(
                SQL("UPDATE {jobs_table} SET job = %(job)s, status = %(status)s, scheduled = %(scheduled)s, "
                    "expire_at = %(expire)s WHERE key = %(key)s AND status = 'active' AND job = %(old)s").format(
                    jobs_table=self.jobs_table),
                {"job": self.serialize(job), "status": job.status, "scheduled": job.scheduled, "key": job.key,
                 "old": payload, "expire": None if retry else int(time.time()) + FAILED_TTL_SECONDS},
            )
            return cursor.rowcount == 1


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
        self.lease = WorkerLease(dsn)  # taken by the first worker that starts, held until disconnect
        self._connected = False

    async def connect(self) -> None:
        try:
            await self.pool.open(wait=True, timeout=30)
            for queue in self.queues.values():
                await queue.connect()
        except BaseException:
            await self.pool.close()  # a pool left open would hold its connections and refill them
            raise
        self._connected = True

    async def disconnect(self) -> None:
        if not self._connected:
            return
        for queue in self.queues.values():
            await queue.disconnect()
        await self.lease.release()
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
