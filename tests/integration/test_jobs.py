"""Queues and workers: every queue is consumed in `plmail serve`, failures are kept and shown,
`plmail worker` runs chosen queues alone, and stopping gives running jobs their grace period."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import psycopg
import pytest
from saq import Status

from plmail.db.queues import QueueSet
from plmail.domain.enums import QueueName
from plmail.domain.jobs import PROBE_QUEUE, JobSpec
from plmail.jobs.catalog import JobCatalog
from plmail.jobs.context import services_of
from plmail.jobs.workers import WorkerSupervisor
from plmail.services import Services
from tests.support.pg import PgTestCluster
from tests.support.serve import ServeProcess

PASSWORD = "correct horse"


@pytest.fixture
def serve(tmp_path: Path, database_url: str) -> Iterator[ServeProcess]:
    process = ServeProcess(tmp_path / "data", database_url=database_url).start()
    try:
        process.wait_healthy()
        yield process
    finally:
        process.terminate()


@pytest.fixture
async def queues(database_url: str) -> AsyncIterator[QueueSet]:
    queue_set = QueueSet(database_url, pool_max=8)
    await queue_set.connect()
    try:
        yield queue_set
    finally:
        await queue_set.disconnect()


async def test_queues_whose_tables_cannot_be_made_leave_no_pool_open(pg: PgTestCluster) -> None:
    """The pool opens, then a queue fails to set up its tables (here: a role that may not create any)."""
    database = f"no_rights_{uuid.uuid4().hex[:8]}"
    pg.create_database(database)
    with pg.admin() as admin:
        admin.execute("DROP ROLE IF EXISTS plmail_no_rights")
        admin.execute("CREATE ROLE plmail_no_rights LOGIN")
    queue_set = QueueSet(pg.dsn(database).replace("plmail@", "plmail_no_rights@", 1))
    try:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            await queue_set.connect()
        assert queue_set.pool.closed  # an open pool would keep its connections and refill them in the background
    finally:
        pg.drop_database(database)
        with pg.admin() as admin:
            admin.execute("DROP ROLE plmail_no_rights")


async def _tick(ctx: dict[str, Any]) -> None:
    return None


async def test_an_idle_worker_sends_a_cron_job_again_only_once_its_run_is_due(services: Services,
                                                                              database_url: str) -> None:
    """saq sent every cron job's next run again each second, a no-op INSERT each time: an idle server with plmail's
    fifteen cron jobs wrote fifteen a second. A BEFORE INSERT trigger sees every one, conflicting or not."""
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("""
            CREATE TABLE cron_sends (key text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp());
            CREATE FUNCTION count_cron_send() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF NEW.key LIKE 'cron:%' THEN INSERT INTO cron_sends (key) VALUES (NEW.key); END IF;
                RETURN NEW;
            END $$;
            CREATE TRIGGER count_cron_sends BEFORE INSERT ON saq_jobs FOR EACH ROW EXECUTE FUNCTION count_cron_send();
        """)
        catalog = JobCatalog()
        catalog.register(JobSpec("tick", QueueName.ENRICH, cron="0 0 1 1 *"), _tick)  # not due during the test
        supervisor = WorkerSupervisor(services, catalog, [QueueName.ENRICH], grace_seconds=2)
        supervisor.start()
        try:
            await _wait_for(lambda: conn.fetchval("SELECT count(*) > 0 FROM cron_sends"))
            await asyncio.sleep(4.5)  # saq's schedule loop turns once a second
        finally:
            await supervisor.stop()
        sends = await conn.fetch("SELECT at FROM cron_sends WHERE key = 'cron:tick' ORDER BY at")
        assert len(sends) == 1, [r["at"] for r in sends]  # its run is on the queue: nothing to send until it is due
    finally:
        await conn.close()


CRON_RUNS: list[int] = []


async def _every_three_seconds(ctx: dict[str, Any]) -> None:
    CRON_RUNS.append(int(ctx["job"].scheduled))
    await asyncio.sleep(0.5)  # still running when the next run is worked out


async def test_a_cron_run_still_going_when_the_next_is_worked_out_costs_no_run(services: Services) -> None:
    """The next run goes in only once the last one is done (saq's unique key): it is sent again until it does."""
    CRON_RUNS.clear()
    catalog = JobCatalog()
    catalog.register(JobSpec("every_three_seconds", QueueName.ENRICH, cron="* * * * * */3"), _every_three_seconds)
    supervisor = WorkerSupervisor(services, catalog, [QueueName.ENRICH], grace_seconds=2)
    supervisor.start()
    try:
        async def four_runs() -> bool:
            return len(CRON_RUNS) >= 4

        await _wait_for(four_runs, timeout=40)
    finally:
        await supervisor.stop()
    runs = sorted(set(CRON_RUNS))
    assert [later - earlier for earlier, later in itertools.pairwise(runs)] == [3] * (len(runs) - 1), runs


@contextmanager
def _admin_session(base_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, follow_redirects=True, timeout=20) as http:
        http.get("/setup")
        response = http.post("/setup", data={"email": "admin@example.org", "password": PASSWORD, "display_name": "A",
                                             "_csrf_token": http.cookies["plmail_csrf"]})
        assert response.status_code == 200
        yield http


async def _probes(database_url: str) -> dict[str, tuple[Any, str | None]]:
    conn = await asyncpg.connect(database_url)
    try:
        rows = await conn.fetch("SELECT DISTINCT ON (queue) queue, ran_at, worker FROM queue_probe "
                                "ORDER BY queue, requested_at DESC, id DESC")
    finally:
        await conn.close()
    return {r["queue"]: (r["ran_at"], r["worker"]) for r in rows}


async def _wait_for(predicate: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await predicate():
            return
        await asyncio.sleep(0.1)
    raise AssertionError("condition not met in time")


async def test_a_job_on_each_queue_runs_in_the_serve_process(serve: ServeProcess, database_url: str) -> None:
    health = httpx.get(f"{serve.url}/healthz").json()
    assert health["workers"] == {q.value: "running" for q in QueueName}
    with _admin_session(serve.url) as http:
        panel = http.post("/admin/probe", headers={"HX-Request": "true",
                                                   "x-csrftoken": http.cookies["plmail_csrf"]})
        assert panel.status_code == 200
        assert "<h2>Queues</h2>" in panel.text and "<html" not in panel.text  # a fragment for htmx

        async def all_answered() -> bool:
            probes = await _probes(database_url)
            return len(probes) == 7 and all(ran for ran, _ in probes.values())  # the seven queues below

        await _wait_for(all_answered)
        probes = await _probes(database_url)
        assert set(probes) == {q.value for q in QueueName}
        assert {worker for _, worker in probes.values()} == {f"{os.uname().nodename}:{serve.proc.pid}"}
        page = http.get("/admin")
        # DESIGN §3's seven queues: ingest, ingest_backlog, enrich_live, enrich, enrich_backlog, release, send
        assert page.text.count(f"answered by {os.uname().nodename}:{serve.proc.pid}") == 7


async def test_a_failing_job_is_recorded_shown_and_does_not_stop_its_worker(
    serve: ServeProcess, queues: QueueSet, database_url: str
) -> None:
    job = await queues.enqueue(dataclasses.replace(PROBE_QUEUE, timeout=10), queue=QueueName.INGEST, probe_id=987654)
    assert job is not None
    await job.refresh(until_complete=20)
    assert job.status == Status.FAILED
    assert "Queue probe 987654 does not exist" in (job.error or "")

    with _admin_session(serve.url) as http:
        page = http.get("/admin")
        assert page.status_code == 200
        row = page.text.split('data-queue="ingest"')[1].split("</tr>")[0]
        assert '<td class="failed">1</td>' in row
        failures = page.text.split("Recent failures")[1]
        assert "probe_queue" in failures and "Queue probe 987654 does not exist" in failures

        # The same worker still takes the next job.
        http.post("/admin/probe", headers={"x-csrftoken": http.cookies["plmail_csrf"]})

        async def ingest_answered() -> bool:
            ran, _ = (await _probes(database_url)).get("ingest", (None, None))
            return ran is not None

        await _wait_for(ingest_answered)
    # Failures are kept for days, not the saq default of ten minutes, so someone can read them.
    conn = await asyncpg.connect(database_url)
    try:
        expires = await conn.fetchval("SELECT expire_at - extract(epoch FROM now()) FROM saq_jobs WHERE key = $1",
                                      job.key)
    finally:
        await conn.close()
    assert expires > 7 * 24 * 3600


async def test_plmail_worker_runs_only_the_chosen_queues(tmp_path: Path, database_url: str, queues: QueueSet,
                                                         services: Services) -> None:
    web_only = ServeProcess(tmp_path / "web", database_url=database_url, args=["--queues", ""]).start()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
    env.update({"PLMAIL_DATABASE_URL": database_url, "PLMAIL_DATA_DIR": str(tmp_path / "worker")})
    worker = subprocess.Popen([sys.executable, "-m", "plmail.cli", "worker", "--queues", "enrich,release"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        web_only.wait_healthy()
        assert httpx.get(f"{web_only.url}/healthz").json()["workers"] == {}
        await services.probes.request_all()

        async def chosen_answered() -> bool:
            probes = await _probes(database_url)
            return all(probes[q][0] is not None for q in ("enrich", "release"))

        await _wait_for(chosen_answered)
        await asyncio.sleep(1.5)  # give a wrongly subscribed worker time to take the others
        probes = await _probes(database_url)
        assert {q for q, (ran, _) in probes.items() if ran is not None} == {"enrich", "release"}
        assert probes["enrich"][1] == f"{os.uname().nodename}:{worker.pid}"
    finally:
        worker.send_signal(signal.SIGTERM)
        code = worker.wait(30)
        output = worker.stdout.read().decode() if worker.stdout else ""
        web_only.terminate()
    assert code == 0, output


# --- graceful stop, with job functions that exist only in this test ------------------------------

SLOW_JOB = JobSpec("slow_job", QueueName.ENRICH)
STARTED: list[str] = []
FINISHED: list[str] = []


async def slow_job(ctx: dict[str, Any], *, seconds: float, tag: str) -> str:
    services_of(ctx)  # the worker hands every job the process's services
    STARTED.append(tag)
    await asyncio.sleep(seconds)
    FINISHED.append(tag)
    return tag


def _running(tag: str) -> Any:
    async def check() -> bool:
        return tag in STARTED

    return check


async def test_stop_lets_a_running_job_finish_within_the_grace_period(services: Services) -> None:
    catalog = JobCatalog()
    catalog.register(SLOW_JOB, slow_job)
    supervisor = WorkerSupervisor(services, catalog, [QueueName.ENRICH], grace_seconds=5)
    supervisor.start()
    job = await services.queues.enqueue(SLOW_JOB, seconds=1.0, tag="graceful")
    assert job is not None
    await _wait_for(_running("graceful"))
    started = time.monotonic()
    await supervisor.stop()
    took = time.monotonic() - started
    assert "graceful" in FINISHED
    await job.refresh()
    assert job.status == Status.COMPLETE
    assert took < 4, "stop waited for the idle dequeue loops, not just the running job"
    assert supervisor.status() == {"enrich": "stopped"}


async def test_a_job_overrunning_the_grace_period_is_put_back_not_lost(services: Services) -> None:
    catalog = JobCatalog()
    catalog.register(SLOW_JOB, slow_job)
    supervisor = WorkerSupervisor(services, catalog, [QueueName.ENRICH], grace_seconds=0.5)
    supervisor.start()
    job = await services.queues.enqueue(dataclasses.replace(SLOW_JOB, retries=3),
                                        seconds=60.0, tag="overrun")
    assert job is not None
    await _wait_for(_running("overrun"))
    started = time.monotonic()
    await supervisor.stop()
    assert time.monotonic() - started < 5
    assert "overrun" not in FINISHED
    stored = await services.queues[QueueName.ENRICH].job(job.key)
    assert stored is not None
    assert stored.status == Status.QUEUED, (stored.attempts, stored.error)  # back on the queue for the next worker


FLAKY_DATABASE_JOB = JobSpec("database_goes_away", QueueName.ENRICH, retries=1)
DATABASE_ATTEMPTS: list[str] = []


async def database_goes_away(ctx: dict[str, Any], *, tag: str, dsn: str, how: str) -> str:
    """On its first run the database drops this job's connection under it (as a restart does), or the query itself
    is wrong; later runs succeed."""
    DATABASE_ATTEMPTS.append(tag)
    db = services_of(ctx).db
    if DATABASE_ATTEMPTS.count(tag) == 1:
        async with db.transaction():
            if how == "dropped":
                pid = await db.fetchval("SELECT pg_backend_pid()")
                admin = await asyncpg.connect(dsn)
                try:
                    await admin.execute("SELECT pg_terminate_backend($1)", pid)
                finally:
                    await admin.close()
                await db.fetchval("SELECT 1")
            else:
                await db.fetchval("SELECT 1 FROM no_such_table")
    return tag


async def test_a_job_the_database_restart_failed_runs_again_and_its_own_errors_do_not(services: Services,
                                                                                     database_url: str) -> None:
    catalog = JobCatalog()
    catalog.register(FLAKY_DATABASE_JOB, database_goes_away)
    supervisor = WorkerSupervisor(services, catalog, [QueueName.ENRICH], grace_seconds=2)
    supervisor.start()
    try:
        dropped = await services.queues.enqueue(FLAKY_DATABASE_JOB, tag="dropped", dsn=database_url, how="dropped")
        broken = await services.queues.enqueue(FLAKY_DATABASE_JOB, tag="broken", dsn=database_url, how="broken")
        assert dropped is not None and broken is not None
        queue = services.queues[QueueName.ENRICH]

        async def settled() -> bool:
            jobs = [await queue.job(dropped.key), await queue.job(broken.key)]
            return all(j is not None and j.status in (Status.COMPLETE, Status.FAILED) for j in jobs)

        await _wait_for(settled, timeout=60)
        again = await queue.job(dropped.key)
        assert again is not None and again.status == Status.COMPLETE, (again.status if again else None)
        assert DATABASE_ATTEMPTS.count("dropped") == 2 and again.meta.get("database_retries") == 1
        # A query of its own that fails is the job's failure: its one attempt is used up.
        failed = await queue.job(broken.key)
        assert failed is not None and failed.status == Status.FAILED and "no_such_table" in (failed.error or "")
        assert DATABASE_ATTEMPTS.count("broken") == 1
    finally:
        await supervisor.stop()
