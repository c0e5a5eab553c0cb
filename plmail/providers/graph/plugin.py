"""Microsoft Graph as a provider: the syncer, history importer, label propagator, import-state probe, raw
fetcher, and for writing mail its transport, draft store and identity, built once around one API client (OAuth
shared with Gmail)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from plmail.db.database import Database
from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.db.repos.provider_push import ProviderPushRepository
from plmail.domain.account_services import OAuthProvider
from plmail.domain.jobs import PROPAGATE_PROVIDER_CHANGES, SYNC_ACCOUNT
from plmail.domain.ports import Enqueuer
from plmail.domain.registry import ProviderRegistry
from plmail.mail.labels import LabelResolver
from plmail.mail.pipeline import PostIngestPipeline
from plmail.providers.graph.client import GraphClient, TokenSource
from plmail.providers.graph.destroyer import GraphDestroyer
from plmail.providers.graph.folders import GraphFolderSyncer
from plmail.providers.graph.importer import GraphHistoryImporter, GraphImportProbe
from plmail.providers.graph.propagator import GraphLabelPropagator
from plmail.providers.graph.push import (
    GRAPH_RENEW_SUBSCRIPTIONS,
    GraphPushConfig,
    GraphPushReceiver,
    GraphSubscriptions,
)
from plmail.providers.graph.raw import GraphRawFetcher
from plmail.providers.graph.sending import GraphDraftStore, GraphIdentitySource, GraphTransport, SendPermission
from plmail.providers.graph.store import GraphIngest
from plmail.providers.graph.syncer import GraphAccountSyncer
from plmail.providers.oauth_accounts import shared_oauth
from plmail.providers.plugins import PluginHost


@dataclass(slots=True)
class GraphServices:
    client: GraphClient
    syncer: GraphAccountSyncer
    importer: GraphHistoryImporter
    propagator: GraphLabelPropagator
    probe: GraphImportProbe
    raw: GraphRawFetcher
    transport: GraphTransport
    draft_store: GraphDraftStore
    identities: GraphIdentitySource

    async def close(self) -> None:
        await self.client.close()

    def install_roles(self, providers: ProviderRegistry) -> None:
        providers.syncers.add(self.syncer)
        providers.importers.add(self.importer)
        providers.import_probes.add(self.probe)
        providers.propagators.add(self.propagator)
        providers.raw_fetchers.add(self.raw)
        providers.transports.add(self.transport)
        providers.draft_stores.add(self.draft_store)
        providers.identity_sources.add(self.identities)
        providers.closers.append(self.close)

    @classmethod
    def build(cls, db: Database, accounts: AccountAdminRepository, tokens: TokenSource, api_base: str,
              pipeline: PostIngestPipeline, queues: Enqueuer | None, may_send: SendPermission) -> GraphServices:
        async def sync_later(account_id: int, delay: float) -> None:
            """A throttled sync runs again when Graph said to come back."""
            if queues is not None:
                await queues.enqueue(SYNC_ACCOUNT, delay_seconds=delay, account_id=account_id)

        async def propagate_later(account_id: int, delay: float) -> None:
            if queues is not None:
                await queues.enqueue(PROPAGATE_PROVIDER_CHANGES, delay_seconds=delay, account_id=account_id)

        client = GraphClient(tokens, api_base)
        resolver = LabelResolver(db)
        ingest = GraphIngest(db, client, pipeline, resolver)
        return cls(
            client=client,
            syncer=GraphAccountSyncer(db, accounts, client, GraphFolderSyncer(db, client, resolver), ingest,
                                      reschedule=sync_later),
            importer=GraphHistoryImporter(db, accounts, client, ingest),
            propagator=GraphLabelPropagator(db, accounts, client, later=propagate_later),
            probe=GraphImportProbe(db),
            raw=GraphRawFetcher(db, accounts, client),
            transport=GraphTransport(db, accounts, client, may_send),
            draft_store=GraphDraftStore(client),
            identities=GraphIdentitySource(db, client),
        )


def install(host: PluginHost) -> None:
    oauth = shared_oauth(host)
    graph = GraphServices.build(host.db, AccountAdminRepository(host.db), oauth.tokens,
                                oauth.http.config[OAuthProvider.MICROSOFT].api_base, host.pipeline, host.queues,
                                oauth.tokens.may_send)
    graph.install_roles(host.providers)
    host.providers.destroyers.add(GraphDestroyer(AccountAdminRepository(host.db), graph.client))
    host.offer(graph)
    config = GraphPushConfig.from_settings(host.settings)
    if config is not None:  # reachable from the internet: Graph tells us of new mail instead of being polled
        push = ProviderPushRepository(host.db)
        subscriptions = GraphSubscriptions(config, push, AccountAdminRepository(host.db), graph.client)
        host.providers.push_receivers[GraphPushReceiver.name] = GraphPushReceiver(push, host.sync.request)

        async def renew_subscriptions(ctx: dict[str, Any]) -> int:
            return await subscriptions.renew_all()

        host.providers.jobs.append((GRAPH_RENEW_SUBSCRIPTIONS, renew_subscriptions))
        host.offer(subscriptions)
