"""Which job functions run under which job spec: the one registry workers are built from.

Job functions are thin: they decode their arguments, call one service from ``ctx["services"]`` and
return. Each runs under its spec's name on every queue the spec names; a spec with a cron schedule is
also put on its queue by the workers themselves.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from plmail.domain import jobs
from plmail.domain.enums import QueueName
from plmail.domain.jobs import JobSpec

JobFunction = Callable[..., Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    spec: JobSpec
    function: JobFunction


def named(spec: JobSpec, function: JobFunction) -> JobFunction:
    """The function under the spec's name: saq's cron scheduler enqueues by ``__qualname__``."""

    async def run(ctx: dict[str, Any], **kwargs: Any) -> Any:
        return await function(ctx, **kwargs)

    run.__qualname__ = run.__name__ = spec.name
    run.__doc__ = function.__doc__
    return run


@dataclass(slots=True)
class JobCatalog:
    _entries: dict[str, CatalogEntry] = field(default_factory=dict)
    _schedules: bool = True

    def register(self, spec: JobSpec, function: JobFunction) -> None:
        existing = self._entries.get(spec.name)
        if existing is not None and (existing.spec != spec or existing.function is not function):
            raise ValueError(f"two jobs are named {spec.name!r}")
        self._entries[spec.name] = CatalogEntry(spec, function)

    def register_all(self, entries: Iterable[tuple[JobSpec, JobFunction]]) -> None:
        for spec, function in entries:
            self.register(spec, function)

    def functions_for(self, queue: QueueName) -> list[tuple[str, JobFunction]]:
        return [(name, entry.function) for name, entry in self._entries.items() if queue in entry.spec.queues]

    def crons_for(self, queue: QueueName) -> list[CatalogEntry]:
        if not self._schedules:
            return []
        return [entry for entry in self._entries.values() if entry.spec.cron is not None and entry.spec.queue is queue]

    def without_schedules(self) -> JobCatalog:
        """The same jobs and no cron: workers that run only what was enqueued."""
        return JobCatalog(dict(self._entries), False)

    def with_jobs(self, extra: Iterable[tuple[JobSpec, JobFunction]]) -> JobCatalog:
        """These jobs and `extra` (the jobs the installed provider plugins brought)."""
        merged = JobCatalog(dict(self._entries), self._schedules)
        merged.register_all(extra)
        return merged


def default_catalog() -> JobCatalog:
    """Every job of plmail's own areas; workers add the jobs the installed provider plugins brought."""
    from plmail.jobs import assistant, calendar, housekeeping, jmap, mail, probe, sending, sync

    catalog = JobCatalog()
    catalog.register_all([
        (jobs.PROBE_QUEUE, probe.probe_queue),
        (jobs.EXTRACT_EVENTS, calendar.extract_events),
        (jobs.PROPOSE_EVENTS, calendar.propose_events),
        (jobs.PROPAGATE_PROVIDER_CHANGES, mail.propagate_provider_changes),
        (jobs.PROPAGATE_STRANDED_CHANGES, mail.propagate_stranded_changes),
        (jobs.SYNC_ACCOUNT, sync.sync_account),
        (jobs.IMPORT_MAIL_PAGE, sync.import_mail_page),
        (jobs.SYNC_ALL_ACCOUNTS, sync.sync_all_accounts),
        (jobs.APPLY_RULE_TO_EXISTING, mail.apply_rule_to_existing),
        (jobs.RESORT_MAIL, mail.resort_mail),
        (jobs.WAKE_SNOOZED, mail.wake_snoozed),
        (jobs.REPAIR_LABEL_COUNTS, mail.repair_label_counts),
        (jobs.INDEX_SEARCH, mail.index_search),
        (jobs.CLASSIFY_MESSAGES, assistant.classify_messages),
        (jobs.RELEASE_HELD, assistant.release_held),
        (jobs.RELEASE_OVERDUE_HELD, assistant.release_overdue_held),
        (jobs.CLASSIFY_BACKLOG, assistant.classify_backlog),
        (jobs.PRUNE_LOGIN_THROTTLE, housekeeping.prune_login_throttle),
        (jobs.PRUNE_QUEUE_PROBES, housekeeping.prune_queue_probes),
        (jobs.PRUNE_APPLIED_ACTIONS, housekeeping.prune_applied_actions),
        (jobs.REMIND_EVENTS, calendar.remind_events),
        (jobs.SWEEP_BLOBS, housekeeping.sweep_blobs),
        (jobs.ABSORB_LEGACY_BLOBS, housekeeping.absorb_legacy_blobs),
        (jobs.PRUNE_JMAP, jmap.prune_jmap),
        (jobs.PUSH_DRAFT, sending.push_draft),
        (jobs.DISCARD_DRAFT, sending.discard_draft),
        (jobs.SEND_SUBMISSION, sending.send_submission),
        (jobs.FILE_SENT_COPY, sending.file_sent_copy),
        (jobs.FILE_KEPT_COPY, sending.file_kept_copy),
        (jobs.SEND_DUE, sending.send_due),
        (jobs.SEND_VACATION_REPLY, sending.send_vacation_reply),
    ])
    return catalog
