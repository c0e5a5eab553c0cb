"""The account, sync and import services of one process, wired once (see plmail/services.py)."""

from __future__ import annotations

from dataclasses import dataclass

from plmail.accounts.oauth import OAuthServices
from plmail.accounts.service import ImapAccountService
from plmail.accounts.sync import AccountSyncService
from plmail.config import Settings
from plmail.db.database import Database
from plmail.db.queues import QueueSet
from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.db.repos.mailboxes import MailboxRepository
from plmail.keys import InstallationKeys
from plmail.mail.labels import LabelResolver
from plmail.mail.pipeline import PostIngestPipeline
from plmail.providers.base import MailImporter, SyncerRegistry
from plmail.providers.gmail.container import GmailServices
from plmail.providers.graph.container import GraphServices
from plmail.providers.imap.folders import MailboxSyncer
from plmail.providers.imap.importer import ImapHistoryImporter, ImapImportProbe
from plmail.providers.imap.ingest import FolderIngest
from plmail.providers.imap.messages import MessageSyncer
from plmail.providers.imap.propagator import ImapLabelPropagator
from plmail.providers.imap.session import ImapConnector
from plmail.providers.imap.syncer import ImapAccountSyncer
from plmail.providers.imap.watch import IdleSupervisor


@dataclass(slots=True)
class AccountServices:
    admin: AccountAdminRepository
    mailboxes: MailboxRepository
    connector: ImapConnector
    syncers: SyncerRegistry
    importer: MailImporter
    imap_history: ImapHistoryImporter
    sync: AccountSyncService
    imap: ImapAccountService
    idle: IdleSupervisor
    propagator: ImapLabelPropagator
    probe: ImapImportProbe
    oauth: OAuthServices
    graph: GraphServices
    gmail: GmailServices

    async def close(self) -> None:
        await self.idle.stop()
        await self.imap_history.close()
        await self.connector.close()
        await self.graph.close()
        await self.gmail.close()
        await self.oauth.close()

    @classmethod
    def build(cls, db: Database, keys: InstallationKeys, queues: QueueSet | None,
              pipeline: PostIngestPipeline, *, settings: Settings | None = None) -> AccountServices:
        admin = AccountAdminRepository(db)
        mailboxes = MailboxRepository(db)
        connector = ImapConnector(admin, keys.credentials)
        ingest = FolderIngest(db, pipeline)
        messages = MessageSyncer(db, mailboxes, ingest)
        syncers = SyncerRegistry([
            ImapAccountSyncer(db, admin, connector, MailboxSyncer(db, mailboxes, LabelResolver(db)), messages),
        ])
        history = ImapHistoryImporter(db, admin, connector, ingest, messages)
        importer = MailImporter(admin, queues, [history])
        sync = AccountSyncService(admin, syncers, importer, queues)
        idle = IdleSupervisor(admin, mailboxes, connector, sync.request)
        sync.after_sync = lambda _account_id: idle.poke()
        oauth = OAuthServices.build(db, keys.credentials, settings, resume=sync.resume)
        graph = GraphServices.build(db, admin, oauth.tokens, oauth.http.config.microsoft.api_base, pipeline, queues)
        syncers.register(graph.syncer)
        importer.register(graph.importer)
        gmail = GmailServices.build(db, queues, pipeline, oauth)
        syncers.register(gmail.syncer)
        importer.register(gmail.importer)
        return cls(
            admin=admin, mailboxes=mailboxes, connector=connector, syncers=syncers, importer=importer,
            imap_history=history, sync=sync,
            imap=ImapAccountService(admin, mailboxes, connector, sync, importer, changed=idle.poke),
            idle=idle, propagator=ImapLabelPropagator(db, admin, connector), probe=ImapImportProbe(mailboxes),
            oauth=oauth, graph=graph, gmail=gmail,
        )
