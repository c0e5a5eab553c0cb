"""A Gmail account on the fake Gmail server, with time that only moves when the pacer waits.

`settings` points Google's hosts at the fake, so the app's own OAuth and Gmail clients talk to it over
HTTP. The pacer's clock is the fake's manual clock: when plmail waits for quota it moves the fake's clock
instead of sleeping, and a quota window is crossed in no time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from plmail.accounts.importing import MailImporter
from plmail.accounts.sync import AccountSyncService
from plmail.config import Settings
from plmail.domain.account_services import OAuthProvider
from plmail.domain.enums import ProviderKind
from plmail.domain.models import User
from plmail.domain.providers import PageRun
from plmail.domain.registry import ProviderRegistry
from plmail.providers.gmail.plugin import GmailServices
from plmail.providers.oauth import ConnectedIdentity, TokenSet
from plmail.providers.oauth_accounts import OAuthServices
from plmail.services import Services
from tests.support.fakes import FakeServer, GmailFake, ManualClock
from tests.support.fakes.gmail import GmailMailbox
from tests.support.repos import account_admin


class FakeTime:
    """Plmail's Gmail time, read from (and moved on) the fake's manual clock."""

    def __init__(self, clock: ManualClock) -> None:
        self.clock = clock
        self.slept = 0.0

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.clock(), UTC)

    async def sleep(self, seconds: float) -> None:
        self.slept += seconds
        self.clock.advance(seconds)

    def until(self, moment: datetime) -> None:
        gap = (moment - self.now()).total_seconds()
        if gap > 0:
            self.slept += gap
            self.clock.advance(gap)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def gmail_server(clock: ManualClock) -> Iterator[FakeServer[GmailFake]]:
    fake = GmailFake(clock=clock)
    fake.quota.set_fetch_units(60)  # what plmail measured for format=raw
    with FakeServer(fake) as server:
        yield server


@pytest.fixture
def settings(settings: Settings, gmail_server: FakeServer[GmailFake]) -> Settings:
    return dataclasses.replace(settings, google_base_url=gmail_server.url,
                               google_client_id=gmail_server.app.client_id,
                               google_client_secret=gmail_server.app.client_secret)


@dataclass
class GmailSetup:
    services: Services
    user: User
    server: FakeServer[GmailFake]
    account_id: int
    time: FakeTime
    gmail: GmailServices
    importer: MailImporter
    sync_service: AccountSyncService
    pages: list[PageRun] = field(default_factory=list)

    @property
    def fake(self) -> GmailFake:
        return self.server.app

    @property
    def mailbox(self) -> GmailMailbox:
        return self.server.app.mailbox

    async def sync(self) -> list[int]:
        return await self.sync_service.run(self.account_id)

    async def import_page(self) -> PageRun:
        run = await self.importer.run_page(self.account_id, chain=False)
        self.pages.append(run)
        if run.page.wait_until is not None:
            self.time.until(run.page.wait_until)  # the job would be scheduled for then
        return run

    async def import_all(self, limit: int = 2000) -> int:
        count = 0
        while True:
            progress = await self.importer.progress(self.account_id)
            if progress is None or not progress.importing:
                return count
            await self.import_page()
            count += 1
            assert count < limit, "the import does not finish"

    async def count(self, where: str = "TRUE", *args: Any) -> int:
        return int(await self.services.db.fetchval(
            f"SELECT count(*) FROM message WHERE account_id = $1 AND ({where})", self.account_id, *args))

    async def gmail_ids(self) -> set[str]:
        rows = await self.services.db.fetch("SELECT provider_key AS gmail_id FROM message WHERE account_id = $1",
                                            self.account_id)
        return {r["gmail_id"] for r in rows}

    async def labels_of(self, gmail_id: str) -> set[str]:
        rows = await self.services.db.fetch(
            """SELECT coalesce(l.role, l.name) AS n FROM message m JOIN message_label ml ON ml.message_id = m.id
                 JOIN label l ON l.id = ml.label_id WHERE m.account_id = $1 AND m.provider_key = $2""",
            self.account_id, gmail_id)
        return {r["n"] for r in rows}

    async def message_id(self, gmail_id: str) -> int:
        value = await self.services.db.fetchval(
            "SELECT id FROM message WHERE account_id = $1 AND provider_key = $2", self.account_id, gmail_id)
        assert value is not None, f"{gmail_id} is not stored"
        return int(value)

    async def thread_of(self, gmail_id: str) -> int:
        value = await self.services.db.fetchval(
            "SELECT thread_id FROM message WHERE account_id = $1 AND provider_key = $2", self.account_id, gmail_id)
        assert value is not None
        return int(value)

    async def thread_category(self, gmail_id: str) -> str | None:
        value = await self.services.db.fetchval(
            "SELECT t.category FROM message m JOIN message_thread t ON t.id = m.thread_id "
            "WHERE m.account_id = $1 AND m.provider_key = $2", self.account_id, gmail_id)
        return str(value) if value is not None else None

    async def propagate(self) -> int:
        return await self.services.propagation.run(self.account_id)


def gmail_stack(services: Services, time: FakeTime) -> tuple[GmailServices, MailImporter, AccountSyncService]:
    """Gmail's services as the app builds them, but on the fake's clock."""
    admin = account_admin(services)
    gmail = GmailServices.build(services.db, None, services.pipeline, services.providers.get(OAuthServices), time=time)
    providers = ProviderRegistry()
    providers.syncers.add(gmail.syncer)
    providers.importers.add(gmail.importer)
    importer = MailImporter(admin, None, providers)
    sync = AccountSyncService(admin, providers, importer, None)
    return gmail, importer, sync


async def connect_account(services: Services, user: User, fake: GmailFake, email: str | None = None, *,
                          scope: str | None = None) -> int:
    """What a finished consent does: the account with tokens the fake issued for the mailbox (with the scope
    the user granted; the fake's default is gmail.modify, as accounts connected before full access had)."""
    address = email or fake.mailbox.email
    pair = fake.oauth.issue(address, scope=scope)
    tokens = TokenSet(pair.access_token, pair.refresh_token, datetime.now(UTC) + timedelta(seconds=pair.expires_in),
                      pair.scope)
    outcome = await services.providers.get(OAuthServices).connect.connect(
        user.id, ConnectedIdentity(OAuthProvider.GOOGLE, address, "Alice", tokens))
    return outcome.account_id


@pytest.fixture
async def gmail(services: Services, gmail_server: FakeServer[GmailFake], clock: ManualClock
                ) -> AsyncIterator[GmailSetup]:
    user = await services.users.create_user("owner@example.org", "correct horse", time_zone="Europe/Berlin")
    account_id = await connect_account(services, user, gmail_server.app)
    record = await account_admin(services).for_job(account_id)
    assert record is not None and record.provider_kind is ProviderKind.GMAIL
    time = FakeTime(clock)
    stack, importer, sync = gmail_stack(services, time)
    try:
        yield GmailSetup(services, user, gmail_server, account_id, time, stack, importer, sync)
    finally:
        await stack.close()
