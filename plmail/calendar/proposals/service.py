"""The proposal pass over stored mail (what the job runs and a backfill replays), and accept and decline.

A proposal is a row in its own table and never an event: nothing here writes an occurrence until a
person accepts, and then through the same writer every other event goes through.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from plmail.calendar.proposals.facts import event_times, stored_input
from plmail.calendar.proposals.proposer import DEDUP_KEY_VERSION, EventProposer, ProposalDecision, suppressed_among
from plmail.calendar.repos.events import CalendarEventRepository
from plmail.calendar.repos.links import EventSourceLinkRepository, LinkValues
from plmail.calendar.repos.proposals import ProposalRepository, ProposalRow, ProposalSource
from plmail.calendar.resolver import ExtractedEventCalendarResolver
from plmail.calendar.sources import EventSource
from plmail.calendar.suppression import EventSuppressor, accepted_uid
from plmail.calendar.writer import CalendarEventWriter, EventDraft
from plmail.db.database import Database
from plmail.domain.calendar import ACCEPTED_PROPOSAL_EVIDENCE, StoredProposal
from plmail.domain.errors import NotFoundError

log = logging.getLogger(__name__)


@dataclass(slots=True)
class ProposalRunReport:
    messages: int = 0
    offered: int = 0  # proposals the proposer made
    stored: int = 0  # rows added; the rest were there already (a rerun, a concurrent backfill)
    refusals: dict[str, int] = field(default_factory=dict)
    failed: list[tuple[int, str]] = field(default_factory=list)  # (message id, why), each cost only itself

    def count(self, decision: ProposalDecision) -> None:
        for refusal in decision.refusals():
            self.refusals[refusal.value] = self.refusals.get(refusal.value, 0) + 1

    def merge(self, other: ProposalRunReport) -> None:
        self.messages += other.messages
        self.offered += other.offered
        self.stored += other.stored
        for key, value in other.refusals.items():
            self.refusals[key] = self.refusals.get(key, 0) + value
        self.failed.extend(other.failed)

    def summary(self) -> dict[str, int]:
        return {"messages": self.messages, "offered": self.offered, "stored": self.stored,
                "failed": len(self.failed)}


@dataclass(frozen=True, slots=True)
class _Decided:
    source: ProposalSource
    decision: ProposalDecision


def _why(error: Exception) -> str:
    return f"{type(error).__name__}: {error}"[:500]


class ProposalService:
    """Reads each message, lets EventProposer decide, stores what it offers. Decisions are made outside
    the transaction; the writes go in one, each message in a savepoint: one broken message costs only
    itself, and nothing is retried for it, since a message that does not read will not read twice."""

    def __init__(
        self,
        db: Database,
        proposals: ProposalRepository,
        events: CalendarEventRepository,
        suppressor: EventSuppressor,
        writer: CalendarEventWriter,
        resolver: ExtractedEventCalendarResolver,
        proposer: EventProposer | None = None,
        links: EventSourceLinkRepository | None = None,
    ) -> None:
        self.db = db
        self.proposals = proposals
        self.events = events
        self.links = links or EventSourceLinkRepository(db)
        self.suppressor = suppressor
        self.writer = writer
        self.resolver = resolver
        self.proposer = proposer or EventProposer()

    async def run(self, user_id: int, message_ids: Sequence[int]) -> ProposalRunReport:
        report = ProposalRunReport()
        decided: list[_Decided] = []
        for source in await self.proposals.sources(user_id, message_ids):
            report.messages += 1
            try:
                decided.append(_Decided(source, self.proposer.decide(stored_input(source))))
            except Exception as error:  # the guard per message: log, count, go on
                log.exception("proposing failed for message %s", source.id)
                report.failed.append((source.id, _why(error)))
        decided = await self._with_decisions_taken(user_id, decided, report)
        async with self.db.transaction():
            for item in decided:
                report.count(item.decision)
                rows = [ProposalRow(
                    user_id=p.user_id, message_id=item.source.id, title=p.title, starts_at=p.start, ends_at=p.end,
                    is_all_day=p.all_day, time_zone=p.time_zone, confidence=p.confidence,
                    source_sentence=p.source_sentence, dedup_key_hash=p.dedup_key_hash, detector=p.detector,
                    location=p.location, stated_end=p.stated_end,
                ) for p in item.decision.proposals]  # fmt: skip
                if not rows:
                    continue
                try:
                    async with self.db.savepoint():
                        report.stored += await self.proposals.insert(rows)
                    report.offered += len(rows)
                except Exception as error:
                    log.exception("storing proposals of message %s failed", item.source.id)
                    report.failed.append((item.source.id, _why(error)))
        return report

    async def _with_decisions_taken(
        self, user_id: int, decided: list[_Decided], report: ProposalRunReport
    ) -> list[_Decided]:
        """Asks the proposer again, now knowing what the user declined or accepted, about the few messages
        whose proposals meet either. One query each for the whole batch; the rule itself stays in the
        proposer, which is told the answers instead of asking the database per candidate."""
        hashes = sorted({p.dedup_key_hash for item in decided for p in item.decision.proposals})
        if not hashes:
            return decided
        declined = await self.suppressor.suppressions.suppressed(user_id, hashes)
        uids = await self.proposals.accepted_uids(user_id, [accepted_uid(h) for h in hashes])
        accepted = {h for h in hashes if accepted_uid(h) in uids}
        if not declined and not accepted:
            return decided
        result: list[_Decided] = []
        for item in decided:
            if not any(p.dedup_key_hash in declined | accepted for p in item.decision.proposals):
                result.append(item)
                continue
            try:
                facts = stored_input(item.source, suppressed=suppressed_among(declined),
                                     accepted=suppressed_among(accepted))
                result.append(replace(item, decision=self.proposer.decide(facts)))
            except Exception as error:
                log.exception("proposing failed for message %s", item.source.id)
                report.failed.append((item.source.id, _why(error)))
        return result

    async def for_thread(self, user_id: int, thread_id: int) -> dict[int, list[StoredProposal]]:
        """Proposals by message id, one query for the whole conversation."""
        found: dict[int, list[StoredProposal]] = {}
        for proposal in await self.proposals.for_thread(user_id, thread_id):
            found.setdefault(proposal.message_id, []).append(proposal)
        return found

    async def accept(self, user_id: int, proposal_id: int, *, user_zone: str) -> int:
        """Writes the event and removes the proposal, in one transaction; returns the event's id.

        The source is AcceptedProposal, not Manual: the day, time and title were plmail's reading of
        someone else's sentence, which a person agreed to; if it turns out an hour off, the parser is the
        suspect, and only the source can still say so. Trusted, full confidence, never rewritten by mail.
        The evidence stays: a link to the message with the sentence it was read from, the place the
        sentence named as the location, and the end it wrote (else the default length).
        """
        async with self.db.transaction():
            proposal = await self.proposals.owned(user_id, proposal_id, lock=True)
            if proposal is None:
                raise NotFoundError("No such proposal.")
            start, end = event_times(proposal.starts_at, proposal.stated_end or proposal.ends_at,
                                     all_day=proposal.is_all_day, time_zone=proposal.time_zone)
            uid = accepted_uid(proposal.dedup_key_hash)
            draft = EventDraft(
                uid=uid, start=start, end=end, title=proposal.title, location=proposal.location,
                time_zone=proposal.time_zone, source=EventSource.ACCEPTED_PROPOSAL, confidence=100,
                dedup_key_version=DEDUP_KEY_VERSION,
            )
            calendar_id = await self.resolver.resolve(user_id, proposal.account_id)
            # The reference for materialising is the proposal's own start, never the clock.
            created = await self.writer.create(calendar_id, user_id, draft, user_zone=user_zone,
                                               reference=proposal.starts_at)
            # None: the same proposal, reached through another copy of the message, was accepted already.
            event_id = created if created is not None else (await self.events.by_uid(user_id, uid))[0].id
            await self.links.upsert(user_id, LinkValues(
                event_id=event_id, message_id=proposal.message_id, part_id=None,
                extractor=ACCEPTED_PROPOSAL_EVIDENCE, confidence=proposal.confidence, dedup_key=uid, applied=True,
                payload={"sentence": proposal.source_sentence, "detector": proposal.detector,
                         "title": proposal.title, "location": proposal.location},
            ))
            await self.proposals.delete_decided(user_id, proposal.dedup_key_hash)
        return event_id

    async def decline(self, user_id: int, proposal_id: int) -> None:
        """"Not an event": suppressed under the dedup key's hash in the table declined extracted events use,
        so no rerun or backfill offers it again, and the proposal removed."""
        async with self.db.transaction():
            proposal = await self.proposals.owned(user_id, proposal_id, lock=True)
            if proposal is None:
                raise NotFoundError("No such proposal.")
            await self.suppressor.suppressions.add(user_id, [proposal.dedup_key_hash])
            await self.proposals.delete_decided(user_id, proposal.dedup_key_hash)

