"""The calendar services of one process, built once from the shared database and blob store."""

from __future__ import annotations

from dataclasses import dataclass

from plmail.calendar.backfill import EventBackfill
from plmail.calendar.browse import CalendarBrowser
from plmail.calendar.calendar_objects import CalendarObjects
from plmail.calendar.dav import CalendarDavStore
from plmail.calendar.editor import CalendarEditor
from plmail.calendar.extraction import (
    EngineStatus,
    EventExtractionRunner,
    ExtractorRegistry,
    KItineraryEngine,
    KItineraryExtractor,
    default_registry,
)
from plmail.calendar.feeds import CalendarFeeds
from plmail.calendar.ics_files import IcsImporter
from plmail.calendar.invites import InviteReader
from plmail.calendar.organiser import GuestInvitations
from plmail.calendar.proposals.backfill import ProposalBackfill
from plmail.calendar.proposals.service import ProposalService
from plmail.calendar.proposals.step import ProposeEventsStep, ProposeOnRelease
from plmail.calendar.reconciler import EventReconciler
from plmail.calendar.repos.changes import CalendarChangeRepository
from plmail.calendar.repos.dav import CalendarDavRepository
from plmail.calendar.repos.events import CalendarEventRepository
from plmail.calendar.repos.feeds import CalendarFeedRepository
from plmail.calendar.repos.links import EventSourceLinkRepository
from plmail.calendar.repos.objects import CalendarRepository
from plmail.calendar.repos.proposals import ProposalRepository
from plmail.calendar.repos.sources import CalendarSourceRepository
from plmail.calendar.resolver import ExtractedEventCalendarResolver
from plmail.calendar.service import EventExtractionService
from plmail.calendar.step import ExtractEventsStep
from plmail.calendar.stored import StoredContextBuilder
from plmail.calendar.suppression import EventSuppressor
from plmail.calendar.upcoming import UpcomingEvents
from plmail.calendar.writer import CalendarEventWriter
from plmail.db.database import Database
from plmail.db.repos.accounts import AccountRepository
from plmail.db.repos.identities import IdentityRepository
from plmail.db.repos.users import UserRepository
from plmail.domain.ports import Enqueuer
from plmail.mail.public import BlobStore, DraftService, IdentityService, OutboxService, RawMessageResolver


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
    extractors: ExtractorRegistry
    kitinerary: KItineraryEngine
    editor: CalendarEditor
    importer: IcsImporter
    feeds: CalendarFeeds
    objects: CalendarObjects
    upcoming: UpcomingEvents
    dav: CalendarDavStore

    @classmethod
    def build(
        cls, db: Database, blobs: BlobStore, raw_messages: RawMessageResolver, *, kitinerary: str | None = None
    ) -> CalendarServices:
        """``kitinerary``: the binary's path, ``off``, or None to look for it where Debian installs it."""
        calendars = CalendarRepository(db)
        events = CalendarEventRepository(db)
        links = EventSourceLinkRepository(db)
        sources = CalendarSourceRepository(db)
        resolver = ExtractedEventCalendarResolver(calendars)
        writer = CalendarEventWriter(events)
        suppressor = EventSuppressor(db)
        reconciler = EventReconciler(events, links, writer, resolver, suppressor)
        engine = KItineraryEngine.discover(kitinerary)
        extractors = default_registry(engine)
        extraction = EventExtractionService(
            db, sources, links, StoredContextBuilder(sources, blobs, raw_messages),
            EventExtractionRunner(extractors), reconciler,
        )
        proposal_rows = ProposalRepository(db)
        proposals = ProposalService(db, proposal_rows, events, suppressor, writer, resolver, links=links)
        accounts = AccountRepository(db)
        editor = CalendarEditor(db, calendars, events, writer, suppressor)
        objects = CalendarObjects(calendars, events, CalendarChangeRepository(db), accounts, editor)
        users = UserRepository(db)
        return cls(
            resolver=resolver, writer=writer,
            suppressor=suppressor, reconciler=reconciler, extraction=extraction,
            backfill=EventBackfill(sources, extraction, bookings=engine.available),
            invites=InviteReader(events, links, IdentityRepository(db)),
            browser=CalendarBrowser(calendars, events, links, accounts),
            proposals=proposals, proposal_backfill=ProposalBackfill(sources, proposal_rows, proposals),
            extractors=extractors, kitinerary=engine,
            editor=editor,
            importer=IcsImporter(db, calendars, events, writer),
            feeds=CalendarFeeds(CalendarFeedRepository(db), calendars, events, users),
            objects=objects,
            upcoming=UpcomingEvents(events, links),
            dav=CalendarDavStore(db, objects, events, links, CalendarDavRepository(db), writer, editor, users),
        )

    def send_invitations_with(self, db: Database, identities: IdentityService, drafts: DraftService,
                              outbox: OutboxService) -> None:
        """Let the editor invite guests: the mail services are built after the calendar (its post-ingest steps
        come first), so they are handed in once they exist."""
        self.editor.invitations = GuestInvitations(UserRepository(db), identities, drafts, outbox)

    def step(self, queues: Enqueuer) -> ExtractEventsStep:
        """The post-ingest step that queues this extraction for new mail."""
        return ExtractEventsStep(queues, bookings=self.kitinerary.available)

    def extractor_statuses(self) -> list[tuple[str, EngineStatus]]:
        """Extractors that depend on something outside plmail, and whether it is there (the admin page)."""
        return [(extractor.name, extractor.status()) for extractor in self.extractors.ordered()
                if isinstance(extractor, KItineraryExtractor)]

    def proposal_step(self, queues: Enqueuer) -> ProposeEventsStep:
        """The post-ingest step that queues the proposal pass for new mail."""
        return ProposeEventsStep(queues)

    def proposal_release_listener(self, queues: Enqueuer) -> ProposeOnRelease:
        """Queues the proposal pass for mail the assistant held, once it is released."""
        return ProposeOnRelease(queues)
