"""Gmail's syncer, importer, probe, propagator and raw fetcher, wired once per process."""

from __future__ import annotations

from dataclasses import dataclass

from plmail.accounts.oauth import OAuthServices
from plmail.db.database import Database
from plmail.db.queues import QueueSet
from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.db.repos.gmail_messages import GmailMessageRepository
from plmail.db.repos.gmail_quota import GmailQuotaRepository
from plmail.mail.pipeline import PostIngestPipeline
from plmail.providers.gmail.client import GmailApi
from plmail.providers.gmail.importer import GmailBackfillState, GmailHistoryImporter, GmailImportProbe
from plmail.providers.gmail.ingest import GmailMessageIngest
from plmail.providers.gmail.labels import GmailLabelSyncer
from plmail.providers.gmail.pacer import GmailQuotaPacer, GmailTime, SystemTime
from plmail.providers.gmail.propagator import GmailLabelPropagator
from plmail.providers.gmail.raw import GmailRawFetcher
from plmail.providers.gmail.syncer import GmailAccountSyncer
from plmail.providers.oauth import OAuthProvider


@dataclass(slots=True)
class GmailServices:
    api: GmailApi
    pacer: GmailQuotaPacer
    ingest: GmailMessageIngest
    backfill: GmailBackfillState
    syncer: GmailAccountSyncer
    importer: GmailHistoryImporter
    probe: GmailImportProbe
    propagator: GmailLabelPropagator
    raw: GmailRawFetcher
    messages: GmailMessageRepository

    async def close(self) -> None:
        await self.api.close()

    async def forget_skipped(self, account_id: int) -> int:
        """Forget an account's notes and ask for a backfill pass, so the next listing asks Gmail about them."""
        forgotten = await self.messages.forget_account(account_id)
        if forgotten:
            await self.backfill.request(account_id, total=0, reason="skipped messages forgotten")
        return forgotten

    @classmethod
    def build(cls, db: Database, queues: QueueSet | None, pipeline: PostIngestPipeline, oauth: OAuthServices,
              *, time: GmailTime | None = None) -> GmailServices:
        clock: GmailTime = time or SystemTime()
        admin = AccountAdminRepository(db)
        pacer = GmailQuotaPacer(GmailQuotaRepository(db), clock)
        api = GmailApi(oauth.http.config[OAuthProvider.GOOGLE].api_base, oauth.tokens, oauth.apps, pacer)
        ingest = GmailMessageIngest(db, pipeline, GmailLabelSyncer(db))
        backfill = GmailBackfillState(admin, clock)
        return cls(
            api=api, pacer=pacer, ingest=ingest, backfill=backfill,
            syncer=GmailAccountSyncer(admin, api, ingest, backfill, queues, clock),
            importer=GmailHistoryImporter(db, admin, api, ingest, backfill, clock),
            probe=GmailImportProbe(backfill),
            propagator=GmailLabelPropagator(db, admin, api, queues, clock),
            raw=GmailRawFetcher(admin, api),
            messages=GmailMessageRepository(db),
        )
