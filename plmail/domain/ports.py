"""The interfaces of every axis that varies by implementation, and nothing else.

A service depends on one of these, never on a class that implements it; the composition root
(`plmail/services.py`) and the provider plugins (`plmail/providers/<name>/plugin.py`) decide which
implementation it gets. The DTOs the ports exchange live beside them in `plmail.domain`.
"""

from __future__ import annotations

from typing import Any, Protocol

from plmail.domain.enums import QueueName
from plmail.domain.jobs import JobSpec


class Enqueuer(Protocol):
    """Putting a job on a queue; the saq queues on PostgreSQL are the implementation (`db/queues.py`)."""

    async def enqueue(self, job: JobSpec, *, queue: QueueName | None = None, delay_seconds: float = 0,
                      unique_key: str | None = None, **arguments: Any) -> object | None:
        """Queue `job` with `arguments` on `queue` (default: the job's own); returns a handle of the queued job, or
        None when `unique_key` is already queued."""
        ...


class FailedJobRequeuer(Protocol):
    """What the admin page needs of the queues beyond reading their tables."""

    async def requeue_failed(self, queue: QueueName, key: str) -> bool:
        """Run a failed job again from its first attempt, now; False when it is gone."""
        ...
