"""What the workers tell about each job: its outcome and duration in /metrics' registry, and its job and account id
on every log line its code writes (PLMAIL_LOG_FORMAT=json)."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import time
from typing import Any

from prometheus_client import REGISTRY

from plmail.domain.enums import QueueName
from plmail.domain.jobs import JobSpec
from plmail.jobs.catalog import JobCatalog
from plmail.jobs.workers import WorkerSupervisor
from plmail.ops.logs import ContextIds, json_formatter
from plmail.services import Services

log = logging.getLogger("plmail.tests.observed")


async def observed_job(ctx: dict[str, Any], *, account_id: int, fail: bool) -> str:
    await asyncio.sleep(0.05)
    log.warning("working for the account")
    if fail:
        raise RuntimeError("this job fails on purpose")
    return "done"


def _sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def _wait_for_status(services: Services, key: str, status: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = await services.queues[QueueName.ENRICH].job(key)
        if job is not None and job.status == status:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"job {key} did not reach {status}")


async def test_jobs_are_counted_by_outcome_timed_and_named_in_json_logs(services: Services) -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(ContextIds())
    handler.setFormatter(json_formatter())
    log.addHandler(handler)
    complete = _sample("plmail_jobs_total", queue="enrich", outcome="complete")
    failed = _sample("plmail_jobs_total", queue="enrich", outcome="failed")
    timed = _sample("plmail_job_duration_seconds_count", queue="enrich")
    catalog = JobCatalog()
    observed = JobSpec("observed_job", QueueName.ENRICH, retries=1)
    catalog.register(observed, observed_job)
    supervisor = WorkerSupervisor(services, catalog, [QueueName.ENRICH], grace_seconds=2)
    supervisor.start()
    try:
        good = await services.queues.enqueue(observed, account_id=41, fail=False)
        bad = await services.queues.enqueue(observed, account_id=42, fail=True)
        assert good is not None and bad is not None
        await _wait_for_status(services, good.key, "complete")
        await _wait_for_status(services, bad.key, "failed")
    finally:
        await supervisor.stop()
        log.removeHandler(handler)
    assert _sample("plmail_jobs_total", queue="enrich", outcome="complete") == complete + 1
    assert _sample("plmail_jobs_total", queue="enrich", outcome="failed") == failed + 1
    assert _sample("plmail_job_duration_seconds_count", queue="enrich") == timed + 2
    # Each attempt slept 50 ms, so the two attempts ran at least 0.1 s in all.
    assert _sample("plmail_job_duration_seconds_sum", queue="enrich") >= 0.1

    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert {(line["job_id"], line["account_id"]) for line in lines} == {(good.id, 41), (bad.id, 42)}
    for line in lines:
        assert line["level"] == "WARNING" and line["logger"] == "plmail.tests.observed"
        assert line["message"] == "working for the account" and line["time"]
