"""The Graph services of one process, built once around one API client."""

from __future__ import annotations

from dataclasses import dataclass

from plmail.accounts.sync import SYNC_DEFAULTS, SYNC_JOB
from plmail.db.database import Database
from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.domain.enums import QueueName
from plmail.jobs.queues import JobDefaults, QueueSet
from plmail.mail.labels import LabelResolver
from plmail.mail.operations import PROPAGATE_JOB, PROPAGATION_QUEUE
from plmail.mail.pipeline import PostIngestPipeline
from plmail.providers.graph.client import GraphClient, TokenSource
from plmail.providers.graph.folders import GraphFolderSyncer
from plmail.providers.graph.importer import GraphHistoryImporter, GraphImportProbe
from plmail.providers.graph.propagator import GraphLabelPropagator
from plmail.providers.graph.raw import GraphRawFetcher
from plmail.providers.graph.store import GraphIngest
from plmail.providers.graph.syncer import GraphAccountSyncer

_PROPAGATE_DEFAULTS = JobDefaults(timeout=600, retries=8, retry_delay=10.0, retry_backoff=True)


@dataclass(slots=True)
class GraphServices:
    client: GraphClient
    syncer: GraphAccountSyncer
    importer: GraphHistoryImporter
    propagator: GraphLabelPropagator
    probe: GraphImportProbe
    raw: GraphRawFetcher

    async def close(self) -> None:
        await self.client.close()

    @classmethod
    def build(cls, db: Database, accounts: AccountAdminRepository, tokens: TokenSource, api_base: str,
              pipeline: PostIngestPipeline, queues: QueueSet | None) -> GraphServices:
        async def sync_later(account_id: int, delay: float) -> None:
            """A throttled sync runs again when Graph said to come back."""
            if queues is not None:
                await queues.enqueue(QueueName.INGEST, SYNC_JOB, defaults=SYNC_DEFAULTS, delay_seconds=delay,
                                     account_id=account_id)

        async def propagate_later(account_id: int, delay: float) -> None:
            if queues is not None:
                await queues.enqueue(PROPAGATION_QUEUE, PROPAGATE_JOB, defaults=_PROPAGATE_DEFAULTS,
                                     delay_seconds=delay, account_id=account_id)

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
        )
