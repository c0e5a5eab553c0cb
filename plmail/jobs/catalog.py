"""Which job functions and cron jobs run on which queue: the one registry workers are built from.

Job functions are thin: they decode their arguments, call one service from ``ctx["services"]`` and
return. Names are the functions' qualified names, because saq's cron scheduler enqueues by
``__qualname__``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from plmail.domain.enums import QueueName

JobFunction = Callable[..., Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class CronSpec:
    function: JobFunction
    queue: QueueName
    cron: str  # croniter syntax; a sixth field means seconds
    timeout: int = 300


@dataclass(slots=True)
class JobCatalog:
    _functions: dict[str, tuple[JobFunction, frozenset[QueueName]]] = field(default_factory=dict)
    _crons: list[CronSpec] = field(default_factory=list)

    def register(self, function: JobFunction, queues: Iterable[QueueName]) -> None:
        name = function.__qualname__
        existing = self._functions.get(name)
        if existing is not None and existing[0] is not function:
            raise ValueError(f"two job functions are named {name!r}")
        previous = existing[1] if existing else frozenset()
        self._functions[name] = (function, previous | frozenset(queues))

    def add_cron(self, spec: CronSpec) -> None:
        self.register(spec.function, [spec.queue])
        self._crons.append(spec)

    def functions_for(self, queue: QueueName) -> list[tuple[str, JobFunction]]:
        return [(name, fn) for name, (fn, queues) in self._functions.items() if queue in queues]

    def crons_for(self, queue: QueueName) -> list[CronSpec]:
        return [spec for spec in self._crons if spec.queue is queue]

    def without_schedules(self) -> JobCatalog:
        """The same jobs and no cron: workers that run only what was enqueued."""
        return JobCatalog(dict(self._functions), [])


def default_catalog() -> JobCatalog:
    from plmail.jobs import assistant, calendar, gmail, housekeeping, jmap, mail, probe, sync

    catalog = JobCatalog()
    catalog.register(probe.probe_queue, list(QueueName))
    catalog.register(calendar.extract_events, [QueueName.ENRICH, QueueName.ENRICH_LIVE, QueueName.ENRICH_BACKLOG])
    catalog.register(calendar.propose_events, [QueueName.ENRICH, QueueName.ENRICH_LIVE, QueueName.ENRICH_BACKLOG])
    catalog.register(mail.propagate_provider_changes, [QueueName.INGEST])
    catalog.add_cron(CronSpec(mail.propagate_stranded_changes, QueueName.INGEST, "*/10 * * * *"))
    catalog.register(sync.sync_account, [QueueName.INGEST])
    catalog.register(sync.import_mail_page, [QueueName.INGEST_BACKLOG])
    catalog.register(gmail.gmail_fetch_batch, [QueueName.INGEST])
    catalog.add_cron(CronSpec(sync.sync_all_accounts, QueueName.INGEST, "*/15 * * * *"))
    catalog.register(mail.apply_rule_to_existing, [QueueName.ENRICH])
    catalog.register(mail.resort_mail, [QueueName.ENRICH])
    catalog.add_cron(CronSpec(mail.wake_snoozed, QueueName.ENRICH, "* * * * *"))
    bulk = [QueueName.ENRICH_LIVE, QueueName.ENRICH, QueueName.ENRICH_BACKLOG]
    catalog.register(assistant.classify_messages, bulk)
    catalog.register(assistant.release_held, [QueueName.RELEASE])
    catalog.add_cron(CronSpec(assistant.release_overdue_held, QueueName.RELEASE, "* * * * *"))
    catalog.add_cron(CronSpec(assistant.classify_backlog, QueueName.ENRICH, "*/15 * * * *"))
    catalog.add_cron(CronSpec(housekeeping.prune_login_throttle, QueueName.ENRICH, "17 * * * *"))
    catalog.add_cron(CronSpec(housekeeping.prune_queue_probes, QueueName.ENRICH, "23 3 * * *"))
    catalog.add_cron(CronSpec(housekeeping.sweep_blobs, QueueName.ENRICH, "53 3 * * *", timeout=1800))
    catalog.add_cron(CronSpec(housekeeping.absorb_legacy_blobs, QueueName.ENRICH, "*/10 * * * *", timeout=600))
    catalog.add_cron(CronSpec(jmap.prune_jmap, QueueName.ENRICH, "41 4 * * *", timeout=1800))
    return catalog
