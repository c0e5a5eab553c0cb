"""Gmail as a provider: the syncer, history importer, import-state probe, label propagator, raw fetcher,
fetch-batch job, and for writing mail its transport, draft store and send-as identities, built around one API
client and one quota pacer (OAuth shared with Graph)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from plmail.db.database import Database
from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.db.repos.gmail_messages import GmailMessageRepository, SkippedSummary
from plmail.db.repos.provider_push import ProviderPushRepository
from plmail.domain.account_services import OAuthProvider
from plmail.domain.ports import Enqueuer
from plmail.domain.registry import ProviderRegistry
from plmail.mail.pipeline import PostIngestPipeline
from plmail.providers.gmail.client import GmailApi
from plmail.providers.gmail.destroyer import GmailDestroyer
from plmail.providers.gmail.importer import GmailBackfillState, GmailHistoryImporter, GmailImportProbe
from plmail.providers.gmail.ingest import GmailMessageIngest
from plmail.providers.gmail.labels import GmailLabelSyncer
from plmail.providers.gmail.pacer import GmailQuotaPacer, GmailTime, SystemTime
from plmail.providers.gmail.propagator import GmailLabelPropagator
from plmail.providers.gmail.push import (
    GMAIL_RENEW_WATCHES,
    GmailPushConfig,
    GmailPushReceiver,
    GmailPushVerifier,
    GmailWatches,
    GoogleSigningKeys,
)
from plmail.providers.gmail.raw import GmailRawFetcher
from plmail.providers.gmail.repos.quota import GmailQuotaRepository
from plmail.providers.gmail.sending import GmailDraftStore, GmailIdentitySource, GmailTransport, GmailWrites
from plmail.providers.gmail.syncer import GMAIL_FETCH_BATCH, GmailAccountSyncer
from plmail.providers.oauth_accounts import OAuthServices, shared_oauth
from plmail.providers.plugins import PluginHost


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
    transport: GmailTransport
    draft_store: GmailDraftStore
    identities: GmailIdentitySource

    async def close(self) -> None:
        await self.api.close()

    async def forget_skipped(self, account_id: int) -> int:
        """Forget an account's notes and ask for a backfill pass, so the next listing asks Gmail about them."""
        forgotten = await self.messages.forget_account(account_id)
        if forgotten:
            await self.backfill.request(account_id, total=0, reason="skipped messages forgotten")
        return forgotten

    async def skipped_summary(self, account_id: int | None = None) -> list[SkippedSummary]:
        """Messages looked at and not stored, by account and kind (`plmail gmail skipped`)."""
        return await self.messages.skipped_summary(account_id)

    def install_roles(self, providers: ProviderRegistry) -> None:
        providers.syncers.add(self.syncer)
        providers.importers.add(self.importer)
        providers.import_probes.add(self.probe)
        providers.propagators.add(self.propagator)
        providers.raw_fetchers.add(self.raw)
        providers.transports.add(self.transport)
        providers.draft_stores.add(self.draft_store)
        providers.identity_sources.add(self.identities)

        async def fetch_batch(ctx: dict[str, Any], *, account_id: int, ids: list[str]) -> int:
            return await self.syncer.fetch_batch(int(account_id), [str(i) for i in ids])

        providers.jobs.append((GMAIL_FETCH_BATCH, fetch_batch))
        providers.closers.append(self.close)

    @classmethod
    def build(cls, db: Database, queues: Enqueuer | None, pipeline: PostIngestPipeline, oauth: OAuthServices,
              *, time: GmailTime | None = None) -> GmailServices:
        clock: GmailTime = time or SystemTime()
        admin = AccountAdminRepository(db)
        pacer = GmailQuotaPacer(GmailQuotaRepository(db), clock)
        api = GmailApi(oauth.http.config[OAuthProvider.GOOGLE].api_base, oauth.tokens, oauth.apps, pacer)
        ingest = GmailMessageIngest(db, pipeline, GmailLabelSyncer(db))
        backfill = GmailBackfillState(admin, clock)
        writes = GmailWrites(admin, api)
        return cls(
            api=api, pacer=pacer, ingest=ingest, backfill=backfill,
            syncer=GmailAccountSyncer(admin, api, ingest, backfill, queues, clock),
            importer=GmailHistoryImporter(db, admin, api, ingest, backfill, clock),
            probe=GmailImportProbe(backfill),
            propagator=GmailLabelPropagator(db, admin, api, queues, clock),
            raw=GmailRawFetcher(admin, api),
            messages=GmailMessageRepository(db),
            transport=GmailTransport(writes),
            draft_store=GmailDraftStore(writes),
            identities=GmailIdentitySource(api),
        )


def install(host: PluginHost) -> None:
    gmail = GmailServices.build(host.db, host.queues, host.pipeline, shared_oauth(host))
    gmail.install_roles(host.providers)
    host.providers.destroyers.add(GmailDestroyer(AccountAdminRepository(host.db), gmail.api))
    host.offer(gmail)
    config = GmailPushConfig.from_settings(host.settings)
    if config is not None:  # reachable from the internet: Gmail tells us of new mail instead of being polled
        push = ProviderPushRepository(host.db)
        watches = GmailWatches(config, push, AccountAdminRepository(host.db), gmail.api, SystemTime())
        verifier = GmailPushVerifier(config, GoogleSigningKeys(config.jwks_url, gmail.api.http))
        host.providers.push_receivers[GmailPushReceiver.name] = GmailPushReceiver(verifier, push, host.sync.request)

        async def renew_watches(ctx: dict[str, Any]) -> int:
            return await watches.renew_all()

        host.providers.jobs.append((GMAIL_RENEW_WATCHES, renew_watches))
        host.offer(watches)
