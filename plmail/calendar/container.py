"""The calendar services of one process, built once from the shared database and blob store."""

from __future__ import annotations

from dataclasses import dataclass

from plmail.calendar.backfill import EventBackfill
from plmail.calendar.browse import CalendarBrowser
from plmail.calendar.extraction import EventExtractionRunner, default_registry
from plmail.calendar.invites import InviteReader
from plmail.calendar.proposals.backfill import ProposalBackfill
from plmail.calendar.proposals.service import ProposalService
from plmail.calendar.proposals.step import ProposeEventsStep, ProposeOnRelease
from plmail.calendar.reconciler import EventReconciler
from plmail.calendar.resolver import ExtractedEventCalendarResolver
from plmail.calendar.service import EventExtractionService
from plmail.calendar.step import ExtractEventsStep
from plmail.calendar.stored import StoredContextBuilder
from plmail.calendar.suppression import EventSuppressor
from plmail.calendar.writer import CalendarEventWriter
from plmail.db.database import Database
from plmail.db.repos.accounts import AccountRepository
from plmail.db.repos.calendar_events import CalendarEventRepository
from plmail.db.repos.calendar_links import EventSourceLinkRepository
from plmail.db.repos.calendar_proposals import ProposalRepository
from plmail.db.repos.calendar_sources import CalendarSourceRepository
from plmail.db.repos.calendar_store import CalendarRepository
from plmail.domain.ports import Enqueuer
from plmail.mail.blobs import BlobStore, RawMessageResolver


@dataclass(frozen=True, slots=True)
class CalendarServices:
    resolver: ExtractedEventCalendarResolver
    writer: CalendarEventWriter
    suppressor: EventSuppressor
    reconciler: EventReconciler
    extraction: EventExtractionService
    backfill: EventBackfill
    invites: InviteReader
    browser: CalendarBrowser
    proposals: ProposalService
    proposal_backfill: ProposalBackfill

    @classmethod
    def build(cls, db: Database, blobs: BlobStore, raw_messages: RawMessageResolver) -> CalendarServices:
        calendars = CalendarRepository(db)
        events = CalendarEventRepository(db)
        links = EventSourceLinkRepository(db)
        sources = CalendarSourceRepository(db)
        resolver = ExtractedEventCalendarResolver(calendars)
        writer = CalendarEventWriter(events)
        suppressor = EventSuppressor(db)
        reconciler = EventReconciler(events, links, writer, resolver, suppressor)
        extraction = EventExtractionService(
            db, sources, links, StoredContextBuilder(sources, blobs, raw_messages),
            EventExtractionRunner(default_registry()), reconciler,
        )
        proposal_rows = ProposalRepository(db)
        proposals = ProposalService(db, proposal_rows, events, suppressor, writer, resolver)
        return cls(
            resolver=resolver, writer=writer,
            suppressor=suppressor, reconciler=reconciler, extraction=extraction,
            backfill=EventBackfill(sources, extraction), invites=InviteReader(events, links),
            browser=CalendarBrowser(calendars, events, links, AccountRepository(db)),
            proposals=proposals, proposal_backfill=ProposalBackfill(sources, proposal_rows, proposals),
        )

    def step(self, queues: Enqueuer) -> ExtractEventsStep:
        """The post-ingest step that queues this extraction for new mail."""
        return ExtractEventsStep(queues)

    def proposal_step(self, queues: Enqueuer) -> ProposeEventsStep:
        """The post-ingest step that queues the proposal pass for new mail."""
        return ProposeEventsStep(queues)

    def proposal_release_listener(self, queues: Enqueuer) -> ProposeOnRelease:
        """Queues the proposal pass for mail the assistant held, once it is released."""
        return ProposeOnRelease(queues)
