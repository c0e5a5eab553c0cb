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
    )
