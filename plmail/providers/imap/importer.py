"""The IMAP first import: each folder read from the top down, fifty messages per call.

A page asks the server which UIDs exist below the folder's import floor and leaves out the ones stored
already, so a message that is here is never fetched twice, and a page that died half-way is simply asked
for again. Folders come in the order a person wants them: Inbox, Sent, Drafts, own folders, Archive,
Spam, Trash.
"""

from __future__ import annotations

from plmail.db.database import Database
from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.db.repos.imap_messages import ImapMessageRepository
from plmail.db.repos.mailboxes import MailboxRepository
from plmail.domain.enums import ProviderKind
from plmail.domain.errors import NotFoundError
from plmail.domain.models import Account
from plmail.providers.base import ImportPage
from plmail.providers.imap.errors import ImapProtocolError
from plmail.providers.imap.folders import import_rank
from plmail.providers.imap.ingest import FolderIngest
from plmail.providers.imap.messages import MessageSyncer
from plmail.providers.imap.session import ImapConnector

PAGE_SIZE = 50


class ImapImportProbe:
    """"Is this account still importing" is read off the folders' import floors: a folder's synced_at no
    longer says it, because its first sync now ends at once while its history is still to come."""

    kind = ProviderKind.IMAP

    def __init__(self, mailboxes: MailboxRepository) -> None:
        self.mailboxes = mailboxes

    async def is_importing(self, account_id: int) -> bool:
        return await self.mailboxes.importing(account_id)


class ImapHistoryImporter:
    kind = ProviderKind.IMAP

    def __init__(self, db: Database, accounts: AccountAdminRepository, connector: ImapConnector,
                 ingest: FolderIngest, messages: MessageSyncer) -> None:
        self.accounts = accounts
        self.connector = connector
        self.ingest = ingest
        self.syncer = messages
        self.mailboxes = MailboxRepository(db)
        self.rows = ImapMessageRepository(db)

    async def has_history(self, account_id: int) -> bool:
        return await self.mailboxes.history_waiting(account_id)

    async def counts(self, account_id: int) -> tuple[int, int]:
        return await self.mailboxes.import_counts(account_id)

    async def import_page(self, account: Account) -> ImportPage:
        record = await self.accounts.for_job(account.id)
        if record is None:
            raise NotFoundError(f"Account {account.id} no longer exists.")
        waiting = sorted((f for f in await self.mailboxes.for_account(account.id)
                          if f.is_sync_enabled and f.contacted and f.importing), key=import_rank)
        if not waiting:
            return ImportPage()
        folder = waiting[0]
        floor = folder.import_floor_uid
        assert floor is not None
        async with self.connector.session(record) as client:
            try:
                state = await client.select(folder.full_path, readonly=True)
            except ImapProtocolError as exc:
                if exc.retryable:
                    raise
                # the folder went away; the next sync finds it gone and settles its mail
                await self.mailboxes.lower_floor(folder.id, 1)
                return ImportPage(folder=folder.full_path, more=len(waiting) > 1)
            if state.uidvalidity != folder.uid_validity:
                await self.syncer.renumbered(client, record, folder, state)
                return ImportPage(folder=folder.full_path, more=True)
            below = await client.uids_below(floor)
            skip = (await self.rows.stored_uids_between(folder.id, 1, floor - 1)
                    | await self.rows.given_up_uids(account.id, folder.full_path))
            candidates = [u for u in below if u not in skip]
            if not candidates:
                await self.mailboxes.lower_floor(folder.id, 1)
                return ImportPage(folder=folder.full_path, more=len(waiting) > 1)
            page = candidates[-PAGE_SIZE:]
            listed_at = await self.rows.now()
            fetched = await client.fetch_raw(page)
        outcome = await self.ingest.store(account.id, folder, fetched, listed_at=listed_at)
        if outcome.failed:
            # The floor stays above a message that failed, so the next page asks for it again; after its
            # fifth failure it counts as done and the floor moves past it.
            new_floor = max(outcome.failed) + 1
        elif len(candidates) <= PAGE_SIZE:
            new_floor = 1
        else:
            new_floor = page[0]
        await self.mailboxes.lower_floor(folder.id, new_floor)
        return ImportPage(stored=outcome.stored + outcome.adopted, failed=len(outcome.failed),
                          folder=folder.full_path, more=new_floor > 1 or len(waiting) > 1)
