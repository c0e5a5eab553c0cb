"""The post-ingest extension point, and where follow-up work is allowed to run.

A step has one hook, `after_commit`, which runs after the batch is committed, so it never sees a
half-finished batch. Steps enqueue; they do not work: the hook runs on the worker that holds a
provider connection, and every parse or HTTP call made there slows every sync on the installation.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta

from plmail.domain.enums import ProviderKind, QueueName
from plmail.domain.ingest import PostIngestResult, StoredMessage
from plmail.domain.ports import PostIngestStep
from plmail.domain.registry import ProviderRegistry

log = logging.getLogger(__name__)

ENRICH_RECENT_DAYS = 30


class RecentMailPolicy:
    """Only recent mail gets follow-up work, judged by the mail's own date (received, then sent);
    older mail gets what the pipeline itself does, and backfill commands read the past on request."""

    def __init__(self, days: int = ENRICH_RECENT_DAYS) -> None:
        self.window = timedelta(days=days)

    def is_recent(self, occurred_at: datetime | None, now: datetime | None = None) -> bool:
        if occurred_at is None:
            return False
        return occurred_at >= (now or datetime.now(UTC)) - self.window

    def recent_ids(self, messages: Iterable[StoredMessage], now: datetime | None = None) -> tuple[int, ...]:
        moment = now or datetime.now(UTC)
        return tuple(m.id for m in messages if self.is_recent(m.occurred_at, moment))


class InitialImportState:
    """Asks the import-state probe of the account's provider kind; with no probe, the answer is "still
    importing", because the opposite mistake would queue a whole mailbox as live mail."""

    def __init__(self, providers: ProviderRegistry) -> None:
        self.probes = providers.import_probes

    async def is_importing(self, kind: ProviderKind, account_id: int) -> bool:
        return await self.answer(kind, account_id) is not False

    async def answer(self, kind: ProviderKind, account_id: int) -> bool | None:
        """The probe's answer; None where there is no probe or it could not answer (doubt)."""
        probe = self.probes.get(kind)
        if probe is None:
            return None
        try:
            return await probe.is_importing(account_id)
        except Exception:  # a probe that cannot answer counts as doubt
            log.exception("import state probe for %s failed; treating account %s as importing", kind, account_id)
            return None


class EnrichmentRouter:
    """Live mail of a finished account goes to enrich_live, whose worker never has import work ahead
    of it; everything else to enrich. Steps enqueue through this, never by naming a queue."""

    def queue_for(self, result: PostIngestResult) -> QueueName:
        return QueueName.ENRICH_LIVE if result.live else QueueName.ENRICH


class StepRegistry:
    def __init__(self, steps: Iterable[PostIngestStep] = ()) -> None:
        self._steps: list[PostIngestStep] = list(steps)

    def register(self, step: PostIngestStep) -> None:
        self._steps.append(step)

    @property
    def steps(self) -> Sequence[PostIngestStep]:
        return tuple(self._steps)

    async def notify(self, result: PostIngestResult) -> list[tuple[str, str]]:
        """Run every step; one that raises is logged and the next one runs. A broken step costs what it
        wanted to do, never the mail."""
        failures: list[tuple[str, str]] = []
        for step in self._steps:
            try:
                await step.after_commit(result)
            except Exception as exc:
                log.exception("post-ingest step %s failed", step.name)
                failures.append((step.name, f"{type(exc).__name__}: {exc}"))
        return failures
