"""IMAP as a provider: the syncer, history importer, label propagator, import-state probe and IDLE watcher,
built around one connector that parks signed-in connections; SMTP as its transport, its Drafts and Sent as the
draft store; plus the account form's service."""

from __future__ import annotations

from plmail.accounts.connection_tests import ConnectionTestGate
from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.domain.account_services import MAIL_SERVER_ACCOUNTS
from plmail.mail.labels import LabelResolver
from plmail.mail.parse_worker import ParserProcess, spare_cpu
from plmail.providers.imap.accounts import ImapAccountService
from plmail.providers.imap.autoconfig import AUTOCONFIG_URLS, MailDiscovery
from plmail.providers.imap.destroyer import ImapDestroyer
from plmail.providers.imap.drafts import ImapDraftStore, ImapIdentitySource
from plmail.providers.imap.folders import MailboxSyncer
from plmail.providers.imap.importer import ImapHistoryImporter, ImapImportProbe
from plmail.providers.imap.ingest import FolderIngest
from plmail.providers.imap.messages import MessageSyncer
from plmail.providers.imap.propagator import ImapLabelPropagator
from plmail.providers.imap.repos.mailboxes import MailboxRepository
from plmail.providers.imap.session import ImapConnector
from plmail.providers.imap.smtp import SmtpTransport
from plmail.providers.imap.syncer import ImapAccountSyncer
from plmail.providers.imap.watch import IdleSupervisor
from plmail.providers.plugins import PluginHost


def install(host: PluginHost) -> None:
    db, providers = host.db, host.providers
    admin = AccountAdminRepository(db)
    mailboxes = MailboxRepository(db)
    connector = ImapConnector(admin, host.keys.credentials)
    settings = host.settings
    # the first import's pages read ahead are parsed there: always, never, or while the machine has room for it
    choice = settings.parse_process if settings is not None else False
    parser = None if choice is False else ParserProcess(when=spare_cpu if choice is None else None)
    ingest = FolderIngest(db, host.pipeline, parser)
    messages = MessageSyncer(db, mailboxes, ingest)
    history = ImapHistoryImporter(db, admin, connector, ingest, messages)
    providers.syncers.add(ImapAccountSyncer(db, admin, connector, MailboxSyncer(db, mailboxes, LabelResolver(db)),
                                            messages))
    providers.importers.add(history)
    providers.propagators.add(ImapLabelPropagator(db, admin, connector))
    providers.destroyers.add(ImapDestroyer(admin, mailboxes, connector))
    providers.import_probes.add(ImapImportProbe(mailboxes))
    providers.transports.add(SmtpTransport(admin, host.keys.credentials))
    providers.draft_stores.add(ImapDraftStore(admin, mailboxes, connector))
    providers.identity_sources.add(ImapIdentitySource())
    idle = IdleSupervisor(admin, mailboxes, connector, host.sync.request)
    host.sync.on_synced(lambda _account_id: idle.poke())
    providers.watchers.append(idle)
    gate = host.shared(ConnectionTestGate, lambda: ConnectionTestGate(db))  # SMTP's test shares the gate
    discovery = MailDiscovery() if settings is None else MailDiscovery(
        autoconfig_urls=settings.autoconfig_urls or AUTOCONFIG_URLS, dns_servers=settings.dns_servers,
        allow=settings.test_fetch_allow)
    accounts = ImapAccountService(admin, mailboxes, connector, host.sync, host.importer, gate, changed=idle.poke,
                                  discovery=discovery)
    host.offer(accounts)
    host.offer(accounts, as_=MAIL_SERVER_ACCOUNTS)  # the account pages' form (web/controllers/accounts.py)
    host.offer(connector)
    host.offer(history)
    host.offer(idle)

    async def close() -> None:
        await idle.stop()
        await history.close()
        if parser is not None:
            await parser.close()
        await connector.close()

    providers.closers.append(close)
