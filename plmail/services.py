"""The services of one process, built once and shared by the web app, JMAP and the job workers."""

from __future__ import annotations

from dataclasses import dataclass

from plmail.admin.service import QueueOverviewService, QueueProbeService
from plmail.config import Settings
from plmail.db.database import Database
from plmail.db.engine import close_engine, open_engine
from plmail.db.migrate import migrate
from plmail.db.repos.accounts import AccountRepository
from plmail.db.repos.labels import LabelRepository
from plmail.jobs.queues import QueueSet
from plmail.keys import InstallationKeys
from plmail.mail.archive_import import ArchiveImporter
from plmail.mail.blobs import BlobStore, RawMessageResolver
from plmail.mail.pipeline import PostIngestPipeline
from plmail.mail.reader import MailReader
from plmail.mail.steps import InitialImportState, StepRegistry
from plmail.users.service import UserService


@dataclass(slots=True)
class Services:
    settings: Settings
    keys: InstallationKeys
    db: Database
    queues: QueueSet
    users: UserService
    probes: QueueProbeService
    queue_overview: QueueOverviewService
    accounts: AccountRepository
    labels: LabelRepository
    blobs: BlobStore
    steps: StepRegistry
    import_state: InitialImportState
    pipeline: PostIngestPipeline
    archive_importer: ArchiveImporter
    reader: MailReader
    raw_messages: RawMessageResolver

    async def close(self) -> None:
        await self.queues.disconnect()
        await close_engine()


async def open_services(settings: Settings, dsn: str, *, keys: InstallationKeys | None = None) -> Services:
    """Connect to the database, bring its schema up to date, and connect the queues."""
    keys = keys or InstallationKeys.load(settings.secret_key_path)
    engine = await open_engine(dsn, max_size=settings.db_pool_max)
    db = Database(engine)
    queues = QueueSet(dsn, pool_max=settings.db_pool_max)
    try:
        await migrate(db)
        await queues.connect()
    except BaseException:
        await queues.disconnect()
        await close_engine()
        raise
    blobs = BlobStore(settings.blob_dir)
    steps = StepRegistry()
    import_state = InitialImportState()
    pipeline = PostIngestPipeline(db, blobs, steps=steps, import_state=import_state)
    return Services(
        settings=settings,
        keys=keys,
        db=db,
        queues=queues,
        users=UserService(db),
        probes=QueueProbeService(db, queues),
        queue_overview=QueueOverviewService(db),
        accounts=AccountRepository(db),
        labels=LabelRepository(db),
        blobs=blobs,
        steps=steps,
        import_state=import_state,
        pipeline=pipeline,
        archive_importer=ArchiveImporter(db, pipeline),
        reader=MailReader(db, blobs),
        raw_messages=RawMessageResolver(blobs),
    )
