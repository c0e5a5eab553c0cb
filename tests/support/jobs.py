"""Running what the services enqueued, here and in order, instead of in a worker: the real job functions of
the catalogue, taken from saq's own table, so a test sees exactly the work a worker would have done."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from plmail.domain.enums import QueueName
from plmail.jobs.catalog import default_catalog
from plmail.jobs.context import SERVICES_KEY
from plmail.services import Services


async def queued(services: Services, functions: Iterable[str]) -> list[tuple[str, dict[str, Any]]]:
    """(function, arguments) of the queued jobs of these functions, oldest first."""
    rows = await services.db.fetch(
        """SELECT convert_from(job, 'UTF8')::jsonb AS job FROM saq_jobs
            WHERE status = 'queued' AND convert_from(job, 'UTF8')::jsonb ->> 'function' = ANY($1::text[])
            ORDER BY lock_key""", list(functions))
    found = []
    for row in rows:
        body = json.loads(row["job"]) if isinstance(row["job"], str) else row["job"]
        found.append((str(body["function"]), dict(body.get("kwargs") or {})))
    return found


async def run_queued(services: Services, functions: Iterable[str], *, rounds: int = 5) -> list[str]:
    """Run (and remove) the queued jobs of these functions, again while running them queued more; returns
    the functions run, in order. A job that raises stays removed and its error propagates."""
    wanted = list(functions)
    catalog = {name: fn for name, fn in _functions().items() if name in wanted}
    ran: list[str] = []
    for _ in range(rounds):
        rows = await services.db.fetch(
            """DELETE FROM saq_jobs WHERE status = 'queued'
                 AND convert_from(job, 'UTF8')::jsonb ->> 'function' = ANY($1::text[])
               RETURNING convert_from(job, 'UTF8')::jsonb AS job, lock_key""", wanted)
        if not rows:
            break
        for row in sorted(rows, key=lambda r: r["lock_key"]):
            body = json.loads(row["job"]) if isinstance(row["job"], str) else row["job"]
            name = str(body["function"])
            await catalog[name]({SERVICES_KEY: services}, **dict(body.get("kwargs") or {}))
            ran.append(name)
    return ran


def _functions() -> dict[str, Any]:
    catalog = default_catalog()
    return {name: fn for queue in QueueName for name, fn in catalog.functions_for(queue)}


async def bring_due(services: Services, functions: Iterable[str]) -> int:
    """The test clock reaches the time the queued jobs of these functions were scheduled for: they are due now,
    and a running worker takes them at once. Returns how many were moved."""
    status = await services.db.execute(
        """UPDATE saq_jobs SET scheduled = extract(epoch FROM now())::bigint
            WHERE status = 'queued' AND convert_from(job, 'UTF8')::jsonb ->> 'function' = ANY($1::text[])""",
        list(functions))
    return int(status.split()[-1])
