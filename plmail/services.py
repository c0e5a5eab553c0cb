"""The composition root: the services of one process, built once and shared by the web app, JMAP and the job
workers. It builds each area's services, then installs the provider plugins (`providers/plugins.py`), which
fill the provider registry every provider-driving service looks implementations up in."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from plmail.accounts.connection_tests import ConnectionTestGate
from plmail.accounts.importing import MailImporter
from plmail.accounts.service import AccountService
from plmail.accounts.sync import AccountSyncService
from plmail.admin.service import HealthService, QueueOverviewService, QueueProbeService
from plmail.assistant.hold import ClassificationHold
from plmail.assistant.release import HeldMailReleaser
from plmail.assistant.service import AssistantService, ClassificationCatchUp
from plmail.assistant.settings import AssistantSettingsStore
from plmail.calendar.container import CalendarServices
from plmail.calendar.rsvp import RsvpService
from plmail.config import Settings
from plmail.contacts.books import AddressBookStore
from plmail.db.database import Database
from plmail.db.engine import close_engine, open_engine
from plmail.db.migrate import migrate
from plmail.db.queues import QueueSet
from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.db.repos.settings import SettingsRepository
from plmail.db.repos.users import UserRepository
from plmail.domain.registry import ProviderRegistry
from plmail.keys import InstallationKeys, VapidKey
from plmail.mail.archive_import import ArchiveImporter
from plmail.mail.authentication import SenderAuthentication
from plmail.mail.backfill import CategoryBackfill
from plmail.mail.blobs import BlobStore, RawMessageResolver
from plmail.mail.change_feed import ChangeFeed
from plmail.mail.composer import ComposerService
from plmail.mail.contacts import ContactService
from plmail.mail.counts import LabelCountKeeper
from plmail.mail.destroy import MailDestroyer
from plmail.mail.downloads import BlobService
from plmail.mail.drafts import DraftService
from plmail.mail.email_query import EmailQueryService
from plmail.mail.email_reader import EmailReader
from plmail.mail.email_writes import EmailWriter
from plmail.mail.idempotency import AppliedActions
from plmail.mail.identities import IdentityService
from plmail.mail.labels import LabelManager
from plmail.mail.mailboxes import MailboxService
from plmail.mail.operations import ThreadOperations
from plmail.mail.outbox import OutboxService
from plmail.mail.pipeline import PostIngestPipeline
from plmail.mail.previews import AttachmentPreviews
from plmail.mail.propagation import PropagationService
from plmail.mail.quota import QuotaService
from plmail.mail.reader import MailReader
from plmail.mail.replies import ReplyService
from plmail.mail.rules.engine import MailRuleEngine
from plmail.mail.search_index import SearchIndexer
from plmail.mail.sending_preferences import SendingPreferencesService
from plmail.mail.sorting import SortingService
from plmail.mail.states import ChangeLog
from plmail.mail.steps import InitialImportState, StepRegistry
from plmail.mail.unsubscribe import UnsubscribeService
from plmail.mail.vacation import VacationService
from plmail.ops.metrics import MetricsService
from plmail.post_ingest import post_ingest_steps
from plmail.providers.catalog import PLUGINS
from plmail.providers.network import GuardedOneClick
from plmail.providers.plugins import (
    OfferedServices,
    PluginHost,
    ProviderPlugin,
    load_plugins,
)
from plmail.push.browser import BrowserPushService
from plmail.push.dispatcher import PushDispatcher
from plmail.push.sender import WebPushSender
from plmail.push.subscriptions import PushSubscriptionService
from plmail.users.app_passwords import AppPasswordService
from plmail.users.passwords import check_profile
from plmail.users.service import UserService
from plmail.users.sessions import SessionService, TrustedDevices
from plmail.users.throttle import LoginThrottle
from plmail.users.two_factor import TwoFactorService

if TYPE_CHECKING:
    from litestar.connection import ASGIConnection


@dataclass(slots=True)
class Services:
    settings: Settings
    keys: InstallationKeys
    db: Database
    queues: QueueSet
    users: UserService
    sessions: SessionService
    two_factor: TwoFactorService
    connection_tests: ConnectionTestGate
    probes: QueueProbeService
    queue_overview: QueueOverviewService
    health: HealthService
    accounts: AccountService
    sync: AccountSyncService
    importer: MailImporter
    provider_roles: ProviderRegistry
    providers: OfferedServices
    labels: LabelManager
    label_counts: LabelCountKeeper
    blobs: BlobStore
    steps: StepRegistry
    import_state: InitialImportState
    pipeline: PostIngestPipeline
    archive_importer: ArchiveImporter
    reader: MailReader
    previews: AttachmentPreviews
    search_index: SearchIndexer
    raw_messages: RawMessageResolver
    operations: ThreadOperations
    rules: MailRuleEngine
    propagation: PropagationService
    calendar: CalendarServices
    address_books: AddressBookStore
    app_passwords: AppPasswordService
    emails: EmailReader
    email_query: EmailQueryService
    email_writer: EmailWriter
    mailboxes: MailboxService
    downloads: BlobService
    changes: ChangeLog
    change_feed: ChangeFeed
    assistant_settings: AssistantSettingsStore
    assistant: AssistantService
    classification_catch_up: ClassificationCatchUp
    sorting: SortingService
    category_backfill: CategoryBackfill
    identities: IdentityService
    drafts: DraftService
    outbox: OutboxService
    replies: ReplyService
    contacts: ContactService
    sending_preferences: SendingPreferencesService
    composer: ComposerService
    rsvp: RsvpService
    unsubscribe: UnsubscribeService
    metrics: MetricsService
    destroyer: MailDestroyer
    vacation: VacationService
    sender_auth: SenderAuthentication
    quota: QuotaService
    vapid: VapidKey
    push_subscriptions: PushSubscriptionService
    browser_push: BrowserPushService
    applied_actions: AppliedActions
    push_dispatcher: PushDispatcher

    def start_watchers(self) -> None:
        """What asks for syncs between polls (IMAP IDLE), and what pushes the news on to phones; started beside
        the ingest workers."""
        for watcher in self.provider_roles.watchers:
            watcher.start()
        self.push_dispatcher.start()

    async def stop_watchers(self) -> None:
        await self.push_dispatcher.stop()
        for watcher in self.provider_roles.watchers:
            await watcher.stop()

    async def close(self) -> None:
        for close in reversed(self.provider_roles.closers):
            await close()
        await self.change_feed.close()
        await self.assistant.close()
        await self.queues.disconnect()
        await close_engine()


async def open_services(settings: Settings, dsn: str, *, keys: InstallationKeys | None = None,
                        plugins: Sequence[str | ProviderPlugin] = PLUGINS) -> Services:
    """Connect to the database, bring its schema up to date, connect the queues, install the provider plugins.

    A wrong setting or plugin is refused before a connection is opened, and a failure after that closes what was
    opened: the caller may be a long-lived process (a test run, `plmail worker`) that opens services again."""
    check_profile()
    keys = keys or InstallationKeys.load(settings.secret_key_path)
    chosen = load_plugins(plugins)
    engine = await open_engine(dsn, max_size=settings.db_pool_max)
    db = Database(engine)
    queues = QueueSet(dsn, pool_max=settings.db_pool_max)
    try:
        await migrate(db)
        await queues.connect()
        return _assemble(settings, keys, db, queues, chosen)
    except BaseException:
        await queues.disconnect()
        await close_engine()
        raise


def _assemble(settings: Settings, keys: InstallationKeys, db: Database, queues: QueueSet,
              plugins: Sequence[ProviderPlugin]) -> Services:
    blobs = BlobStore(db, legacy_root=settings.blob_dir)
    providers = ProviderRegistry()
    operations = ThreadOperations(db, queues)
    rules = MailRuleEngine(db, operations)
    steps = StepRegistry()
    import_state = InitialImportState(providers)
    assistant_settings = AssistantSettingsStore(SettingsRepository(db), keys.credentials)
    pipeline = PostIngestPipeline(db, blobs, steps=steps, import_state=import_state, rules=rules,
                                  hold=ClassificationHold(assistant_settings))
    raw_messages = RawMessageResolver(blobs, providers)
    calendar = CalendarServices.build(db, blobs, raw_messages, kitinerary=settings.kitinerary)
    for step in post_ingest_steps(db, queues, assistant_settings=assistant_settings, calendar=calendar):
        steps.register(step)
    releaser = HeldMailReleaser(db)
    releaser.register(calendar.proposal_release_listener(queues))
    admin = AccountAdminRepository(db)
    importer = MailImporter(admin, queues, providers)
    identities = IdentityService(db, providers)
    sync = AccountSyncService(admin, providers, importer, queues, identities=identities)
    host = PluginHost(providers=providers, db=db, keys=keys, settings=settings, pipeline=pipeline, queues=queues,
                      sync=sync, importer=importer)
    for plugin in plugins:
        plugin.install(host)
    throttle = LoginThrottle(db)
    sessions = SessionService(db)
    two_factor = TwoFactorService(db, keys.credentials)
    downloads = BlobService(db, blobs, raw_messages)
    drafts = DraftService(db, pipeline, blobs, identities, providers, queues)
    outbox = OutboxService(db, blobs, identities, drafts, operations, providers, queues,
                           sends_per_hour=settings.sends_per_hour)
    calendar.send_invitations_with(db, identities, drafts, outbox)
    queue_overview = QueueOverviewService(db, queues)
    destroyer = MailDestroyer(db, providers, queues)
    replies = ReplyService(db, downloads, identities)
    address_books = AddressBookStore(db)
    contacts = ContactService(db, address_books)
    sending_preferences = SendingPreferencesService(db, identities, outbox)
    users = UserService(db, throttle, sessions=sessions, devices=TrustedDevices(db), two_factor=two_factor)
    users.on_disabled.append(outbox.stop_disabled)
    vapid = VapidKey.load(settings.vapid_key_path)
    applied_actions = AppliedActions(db)
    browser_push = BrowserPushService(db, operations, applied_actions, action_key=keys.push_actions,
                                      vapid_public_key=vapid.public_key, allow_loopback=settings.push_allow_loopback)
    changes = ChangeLog(db)
    change_feed = ChangeFeed(db)
    return Services(
        settings=settings,
        keys=keys,
        db=db,
        queues=queues,
        users=users,
        sessions=sessions,
        two_factor=two_factor,
        connection_tests=host.shared(ConnectionTestGate, lambda: ConnectionTestGate(db)),
        probes=QueueProbeService(db, queues),
        queue_overview=queue_overview,
        health=HealthService(db),
        accounts=AccountService(db),
        sync=sync,
        importer=importer,
        provider_roles=providers,
        providers=host.offered(),
        labels=LabelManager(db),
        label_counts=LabelCountKeeper(db),
        blobs=blobs,
        steps=steps,
        import_state=import_state,
        pipeline=pipeline,
        archive_importer=ArchiveImporter(db, pipeline),
        reader=MailReader(db, blobs),
        previews=AttachmentPreviews(db, blobs),
        search_index=SearchIndexer(db),
        raw_messages=raw_messages,
        operations=operations,
        rules=rules,
        propagation=PropagationService(db, providers, destroyer),
        calendar=calendar,
        address_books=address_books,
        app_passwords=AppPasswordService(db, throttle),
        emails=EmailReader(db, downloads),
        email_query=EmailQueryService(db),
        email_writer=EmailWriter(db, operations, pipeline),
        mailboxes=MailboxService(db),
        downloads=downloads,
        changes=changes,
        change_feed=change_feed,
        assistant_settings=assistant_settings,
        assistant=AssistantService(db, assistant_settings, queues, releaser=releaser),
        classification_catch_up=ClassificationCatchUp(db, assistant_settings, queues, import_state),
        sorting=SortingService(UserRepository(db), queues),
        category_backfill=CategoryBackfill(db),
        identities=identities,
        drafts=drafts,
        replies=replies,
        outbox=outbox,
        contacts=contacts,
        sending_preferences=sending_preferences,
        composer=ComposerService(drafts, replies, identities, outbox, sending_preferences, contacts),
        rsvp=RsvpService(db, identities, drafts, outbox),
        unsubscribe=UnsubscribeService(db, identities, drafts, outbox,
                                       GuardedOneClick(allow=settings.test_fetch_allow),
                                       test_http=settings.test_fetch_allow),
        metrics=MetricsService(db, queue_overview, importer),
        destroyer=destroyer,
        vacation=VacationService(db, identities, replies, drafts, outbox,
                                 reply_interval_days=settings.vacation_reply_days),
        sender_auth=SenderAuthentication(db),
        quota=QuotaService(db, settings.data_dir),
        vapid=vapid,
        push_subscriptions=PushSubscriptionService(db, changes, allow_loopback=settings.push_allow_loopback),
        browser_push=browser_push,
        applied_actions=applied_actions,
        push_dispatcher=PushDispatcher(db, change_feed, changes,
                                       WebPushSender(vapid, allow_loopback=settings.push_allow_loopback),
                                       browser_push),
    )


async def migrate_database(dsn: str) -> int:
    """Bring the schema up to date without building the services; returns how many migrations ran."""
    engine = await open_engine(dsn, max_size=2)
    try:
        report = await migrate(Database(engine))
    finally:
        await close_engine()
    return len(report.applied)


def services_from(connection: ASGIConnection[Any, Any, Any, Any]) -> Services:
    """The process's services, as the app factory put them in the app's state (web pages and JMAP alike)."""
    return connection.app.state.services  # type: ignore[no-any-return]
