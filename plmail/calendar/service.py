"""The extraction pass over stored messages: what the job runs, and what a backfill replays."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from plmail.calendar.extraction import EventExtractionRunner, ExtractedEvent
from plmail.calendar.reconciler import EventReconciler, Outcome, ReconcileReport
from plmail.calendar.repos.links import EventSourceLinkRepository
from plmail.calendar.repos.sources import CalendarSourceRepository, MessageInput
from plmail.calendar.stored import StoredContextBuilder, claims_from_payloads, message_facts
from plmail.db.database import Database
from plmail.domain.errors import NotFoundError

log = logging.getLogger(__name__)


class ReplaySource(StrEnum):
    MESSAGES = "messages"  # run the extractors over the stored message (its payloads if its bytes are gone)
    PAYLOADS = "payloads"  # read only what the links kept: no message bytes, no mail server


@dataclass(slots=True)
class ExtractionRunReport:
    messages: int = 0
    claims: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    failed: list[tuple[int, str]] = field(default_factory=list)  # (message id, why), each cost only itself

    def add(self, report: ReconcileReport) -> None:
        for item in report.outcomes:
            self.outcomes[item.outcome.value] = self.outcomes.get(item.outcome.value, 0) + 1

    def count(self, outcome: Outcome) -> int:
        return self.outcomes.get(outcome.value, 0)

    def merge(self, other: ExtractionRunReport) -> None:
        self.messages += other.messages
        self.claims += other.claims
        for key, value in other.outcomes.items():
            self.outcomes[key] = self.outcomes.get(key, 0) + value
        self.failed.extend(other.failed)

    def summary(self) -> dict[str, int]:
        return {"messages": self.messages, "claims": self.claims, "failed": len(self.failed), **self.outcomes}


@dataclass(frozen=True, slots=True)
class _Read:
    message: MessageInput
    events: tuple[ExtractedEvent, ...]
    superseded: tuple[ExtractedEvent, ...]


class EventExtractionService:
    """Reads every message first (parsing, blob reads and raw fetches stay outside the transaction),
    then reconciles the batch in one transaction, each message in a savepoint of its own. One
    unreadable invitation costs only itself, and nothing is retried for it: a message that does not
    parse will not parse on a second attempt either."""

    def __init__(
        self,
        db: Database,
        sources: CalendarSourceRepository,
        links: EventSourceLinkRepository,
        builder: StoredContextBuilder,
        runner: EventExtractionRunner,
        reconciler: EventReconciler,
    ) -> None:
        self.db = db
        self.sources = sources
        self.links = links
        self.builder = builder
        self.runner = runner
        self.reconciler = reconciler

    async def run(
        self, user_id: int, message_ids: Sequence[int], *, source: ReplaySource = ReplaySource.MESSAGES
    ) -> ExtractionRunReport:
        report = ExtractionRunReport()
        reads: list[_Read] = []
        for message in await self.sources.inputs(user_id, message_ids):
            report.messages += 1
            try:
                read = await self._read(message, source)
            except Exception as error:  # the guard per message: log, count, go on
                log.exception("extraction failed for message %s", message.id)
                report.failed.append((message.id, f"{type(error).__name__}: {error}"[:500]))
                continue
            report.claims += len(read.events)
            reads.append(read)
        async with self.db.transaction():
            for read in reads:
                try:
                    async with self.db.savepoint():
                        report.add(await self.reconciler.reconcile(
                            message_facts(read.message), read.events, read.superseded
                        ))
                except Exception as error:
                    log.exception("reconciling message %s failed", read.message.id)
                    report.failed.append((read.message.id, f"{type(error).__name__}: {error}"[:500]))
        return report

    async def _read(self, message: MessageInput, source: ReplaySource) -> _Read:
        if source is ReplaySource.MESSAGES:
            try:
                ctx = await self.builder.context(message)
            except NotFoundError:
                log.info("message %s: stored parts are gone; replaying its links' payloads", message.id)
            else:
                result = await self.runner.run(ctx)
                return _Read(message, result.events, result.superseded)
        payloads = await self.links.payloads_for_message(message.user_id, message.id)
        return _Read(message, tuple(claims_from_payloads(payloads, sender=message.from_address)), ())
