"""ImapAccountSyncer: folders first, then messages folder by folder, over one connection.

Messages are synced in two passes over the folders: every folder's deletions are marked before any
folder's new mail is read, so a message another client moved from one folder to another is recognised
and re-pointed rather than stored a second time.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable

from plmail.db.database import Database
from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.db.repos.imap_messages import ImapMessageRepository
from plmail.db.repos.threads import ThreadRepository
from plmail.domain.enums import ProviderKind
from plmail.domain.errors import NotFoundError
from plmail.domain.models import Account
from plmail.mail.settle import settle_deleted
from plmail.providers.imap.errors import ImapProtocolError
from plmail.providers.imap.folders import MailboxSyncer, import_rank
from plmail.providers.imap.messages import CheckResult, MessageSyncer
from plmail.providers.imap.repos.mailboxes import MailboxRepository, MailboxRow
from plmail.providers.imap.session import ImapConnector

log = logging.getLogger(__name__)


class ImapAccountSyncer:
    kind = ProviderKind.IMAP

    def __init__(self, db: Database, accounts: AccountAdminRepository, connector: ImapConnector,
                 folders: MailboxSyncer, messages: MessageSyncer) -> None:
        self.db = db
        self.accounts = accounts
        self.connector = connector
        self.folders = folders
        self.messages = messages
        self.mailboxes = MailboxRepository(db)
        self.rows = ImapMessageRepository(db)
        self.threads = ThreadRepository(db)

    async def sync(self, account: Account) -> list[int]:
        record = await self.accounts.for_job(account.id)
        if record is None:
            raise NotFoundError(f"Account {account.id} no longer exists.")
        touched: set[int] = set()
        async with self.connector.session(record) as client:
            discovery = await self.folders.discover(client, record)
            for gone in discovery.gone:
                await self.mailboxes.lower_floor(gone.id, 1)  # nothing left to import from a folder that is gone
                if await self.rows.vanish_folder(gone.id):
                    touched.add(gone.id)
            folders = sorted((f for f in discovery.listed if f.is_sync_enabled), key=import_rank)
            for folder in folders:
                if await self._folder(folder, self.messages.check(client, record, folder)):
                    touched.add(folder.id)
            for folder in folders:
                fresh = await self.mailboxes.get(folder.id)
                if fresh is not None and await self._folder(fresh, self.messages.new_mail(client, record, fresh)):
                    touched.add(folder.id)
        await self._remove_vanished(account.id, discovery.gone)
        await self.accounts.synced(account.id)
        return sorted(touched)

    async def _folder(self, folder: MailboxRow, step: Awaitable[CheckResult | int]) -> bool:
        """One folder's step; a folder the server refuses (deleted between LIST and SELECT, say) is skipped
        so the others still sync. Returns whether the folder was touched."""
        try:
            result = await step
        except ImapProtocolError as exc:
            if exc.retryable:
                raise
            log.warning("skipping folder %r this time: %s", folder.full_path, exc)
            return False
        return result.touched if isinstance(result, CheckResult) else bool(result)

    async def _remove_vanished(self, account_id: int, gone: list[MailboxRow]) -> None:
        """A vanished message is deleted only when no folder holds it, and a folder still being imported
        cannot say that yet: until every import floor is down, vanished rows wait."""
        if await self.mailboxes.importing(account_id) or not await self.rows.has_vanished(account_id):
            for folder in gone:
                await self.mailboxes.delete_if_empty(folder.id)
            return
        async with self.db.transaction():
            labels = await self.rows.vanished_labels(account_id)
            deleted = await self.rows.delete_vanished(account_id)
            await settle_deleted(self.db, account_id, {m.id: m.thread_id for m in deleted}, labels)
        for folder in gone:
            await self.mailboxes.delete_if_empty(folder.id)
