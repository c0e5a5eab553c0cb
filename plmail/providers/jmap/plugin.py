"""JMAP accounts as a provider: the syncer, first import, import-state probe, propagator, transport, identity
source, draft store and destroyer, built around one JMAP client; the account service is offered to the pages
and the command line."""

from __future__ import annotations

from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.mail.labels import LabelResolver
from plmail.providers.jmap.accounts import JmapAccountForm, JmapAccountService
from plmail.providers.jmap.client import JmapClient
from plmail.providers.jmap.connection import JmapConnector
from plmail.providers.jmap.drafts import JmapDestroyer, JmapDraftStore
from plmail.providers.jmap.propagator import JmapPropagator
from plmail.providers.jmap.push import EventSourceWatcher
from plmail.providers.jmap.sending import JmapIdentitySource, JmapTransport
from plmail.providers.jmap.sync import JmapImporter, JmapImportState, JmapMail, JmapSyncer
from plmail.providers.plugins import PluginHost


def install(host: PluginHost) -> None:
    accounts = AccountAdminRepository(host.db)
    client = JmapClient(allow=host.settings.test_fetch_allow if host.settings is not None else ())
    connector = JmapConnector(accounts, host.keys.credentials, client)
    mail = JmapMail(host.db, accounts, connector, host.pipeline, LabelResolver(host.db))
    importer = JmapImporter(mail)
    host.providers.syncers.add(JmapSyncer(mail))
    host.providers.importers.add(importer)
    host.providers.import_probes.add(JmapImportState(importer))
    host.providers.propagators.add(JmapPropagator(mail))
    identities = JmapIdentitySource(mail)
    host.providers.identity_sources.add(identities)
    host.providers.transports.add(JmapTransport(mail, identities))
    host.providers.draft_stores.add(JmapDraftStore(mail))
    host.providers.destroyers.add(JmapDestroyer(mail))
    host.providers.closers.append(client.close)
    # the upstream pushes its changes (EventSource) instead of waiting for the poll
    host.providers.watchers.append(EventSourceWatcher(host.db, connector, host.sync.request))
    service = JmapAccountService(accounts, connector, host.sync)
    host.offer(service)
    host.providers.account_forms.add(JmapAccountForm(service))
