"""The IMAP first import: each folder read from the top down, fifty messages per call (fewer when they are
large: a page holds at most `batches.BATCH_BYTES` by the server's sizes, or one larger message alone).

A page asks the server which UIDs exist below the folder's import floor, with their sizes, and leaves out
the ones stored already, so a message that is here is never fetched twice, and a page that died half-way
is simply asked for again. Folders come in the order a person wants them: Inbox, Sent, Drafts, own
folders, Archive, Spam, Trash.

While a page is being stored, the next two are read ahead on the account's parked connection, parsed and
their rows prepared (`plmail.mail.rows`) in the gaps, so the server, the parser and the database work at the
same time. Two, because reading a page ahead takes about as long as storing one: with one ahead, each page
waited for the rest of its own read; with two, the parser starts the page after next while the next one waits.
A page read ahead is used only if it is exactly the page its call would fetch; otherwise it is dropped and
fetched as usual.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from plmail.db.database import Database
from plmail.db.repos.account_admin import AccountAdminRepository, AccountRecord
from plmail.db.repos.imap_messages import ImapMessageRepository
from plmail.domain.enums import ProviderKind
from plmail.domain.errors import NotFoundError
from plmail.domain.models import Account
from plmail.domain.providers import ImportPage
from plmail.providers.imap.batches import BATCH_MESSAGES, batches
from plmail.providers.imap.client import ImapClient
from plmail.providers.imap.errors import ImapProtocolError
from plmail.providers.imap.folders import import_rank
from plmail.providers.imap.ingest import FolderIngest, ParsedPage
from plmail.providers.imap.messages import MessageSyncer
from plmail.providers.imap.models import FetchedMessage, MailboxState
from plmail.providers.imap.repos.mailboxes import MailboxRepository, MailboxRow
from plmail.providers.imap.session import ImapConnector

log = logging.getLogger(__name__)

PAGE_SIZE = BATCH_MESSAGES
PAGES_AHEAD = 2
READ_AHEAD_SECONDS = 60.0  # a page read ahead and not asked for within this long is dropped


@dataclass(frozen=True, slots=True)
class _PageKey:
    """What a page read ahead was read for; it is used only if the next page is exactly this."""

    folder_id: int
    path: str
    label_id: int | None
    uid_validity: int
    uids: tuple[int, ...]

    @classmethod
    def of(cls, folder: MailboxRow, uid_validity: int, uids: Sequence[int]) -> _PageKey:
        return cls(folder.id, folder.full_path, folder.label_id, uid_validity, tuple(uids))


@dataclass(frozen=True, slots=True)
class _ReadPage:
    fetched: list[FetchedMessage]
    parsed: ParsedPage
    listed_at: datetime


@dataclass(frozen=True, slots=True)
class _ReadAhead:
    key: _PageKey
    task: asyncio.Task[_ReadPage | None]
    started: float

    def result(self) -> _ReadPage | None:
        if not self.task.done() or self.task.cancelled():
            return None
        return self.task.result()


async def _open_folder(client: ImapClient, path: str) -> MailboxState:
    """Read-write, because Dovecot keeps what it learns about a Maildir only then (measured on a 10,000-message
    folder: 9 ms of server work per fetch under EXAMINE, 1 ms under SELECT). The import only searches and peeks,
    so it changes no flags."""
    return await client.select(path)


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
        self._ahead: dict[int, list[_ReadAhead]] = {}  # per account, in the order the pages come
        # The account's one parked connection serves its page and the pages read ahead, one at a time: without
        # this, a page asking while a read ahead holds it would sign in a second connection.
        self._connection: dict[int, asyncio.Lock] = {}
        self._closing = False

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
        ahead = await self._take_ahead(account.id)
        async with self._connection_of(account.id), self.connector.session(record) as client:
            try:
                state = await _open_folder(client, folder.full_path)
            except ImapProtocolError as exc:
                if exc.retryable:
                    raise
                # the folder went away; the next sync finds it gone and settles its mail
                await self.mailboxes.lower_floor(folder.id, 1)
                return ImportPage(folder=folder.full_path, more=len(waiting) > 1)
            if state.uidvalidity != folder.uid_validity:
                await self.syncer.renumbered(client, record, folder, state)
                return ImportPage(folder=folder.full_path, more=True)
            candidates, sizes, low = await self._candidates(client, account.id, folder, floor)
            if not candidates:
                await self.mailboxes.lower_floor(folder.id, 1)
                return ImportPage(folder=folder.full_path, more=len(waiting) > 1)
            # Downward: the page is the top of what is left, and the pages after it the runs below that.
            runs = batches(candidates[::-1], sizes, count=PAGE_SIZE)
            page = sorted(next(runs))
            coming = [sorted(run) for run in itertools.islice(runs, PAGES_AHEAD)]
            key = _PageKey.of(folder, state.uidvalidity, page)
            read = ahead.result() if ahead is not None and ahead.key == key else None
            if read is None:
                listed_at = await self.rows.now()
                fetched, parsed = await client.fetch_raw(page), None
            else:
                listed_at, fetched, parsed = read.listed_at, read.fetched, read.parsed
        self._read_ahead(record, folder, [_PageKey.of(folder, state.uidvalidity, run) for run in coming if run])
        # The floor is lowered after the page commits: a page lost unflushed in a crash is below the floor again.
        outcome = await self.ingest.store(account.id, folder, fetched, listed_at=listed_at, page=parsed,
                                          refetchable=True)
        if outcome.failed:
            # The floor stays above a message that failed, so the next page asks for it again; after its
            # fifth failure it counts as done and the floor moves past it.
            new_floor = max(outcome.failed) + 1
        elif low == 1 and len(page) == len(candidates):
            new_floor = 1
        else:
            new_floor = page[0]
        await self.mailboxes.lower_floor(folder.id, new_floor)
        return ImportPage(stored=outcome.stored + outcome.adopted, failed=len(outcome.failed),
                          folder=folder.full_path, more=new_floor > 1 or len(waiting) > 1)

    async def _candidates(self, client: ImapClient, account_id: int, folder: MailboxRow, floor: int
                          ) -> tuple[list[int], dict[int, int], int]:
        """UIDs under the floor still to import, the server's sizes of the window, and the lowest UID asked
        about. The server is asked about a window under the floor that widens until it holds this page and the
        pages to read ahead, or reaches UID 1: asking about all of the folder's history on every page made each
        page cost as much as the folder is large."""
        given_up = await self.rows.given_up_uids(account_id, folder.full_path)
        span = 2 * PAGE_SIZE
        while True:
            low = max(floor - span, 1)
            sizes = await client.sizes_below(floor, low=low)
            skip = await self.rows.stored_uids_between(folder.id, low, floor - 1) | given_up
            candidates = [u for u in sizes if u not in skip]
            if len(candidates) >= (1 + PAGES_AHEAD) * PAGE_SIZE or low == 1:
                return candidates, sizes, low
            span *= 4

    def _connection_of(self, account_id: int) -> asyncio.Lock:
        return self._connection.setdefault(account_id, asyncio.Lock())

    def _read_ahead(self, record: AccountRecord, folder: MailboxRow, keys: Sequence[_PageKey]) -> None:
        """Read `keys` ahead, in order: a page already being read ahead is kept, one no longer coming is dropped."""
        self._drop_stale()
        queued = {ahead.key: ahead for ahead in self._ahead.pop(record.id, [])}
        wanted: list[_ReadAhead] = []
        for key in keys if not self._closing else ():
            ahead = queued.pop(key, None)
            if ahead is None:
                task = asyncio.create_task(self._read(record, folder, key), name=f"imap-read-ahead-{record.id}")
                ahead = _ReadAhead(key, task, time.monotonic())
            wanted.append(ahead)
        for dropped in queued.values():
            dropped.task.cancel()
        if wanted:
            self._ahead[record.id] = wanted

    async def _read(self, record: AccountRecord, folder: MailboxRow, key: _PageKey) -> _ReadPage | None:
        """Fetch and parse a page ahead of its call; any trouble leaves it to the call, which reports it."""
        try:
            # The connection is asked for first, so the pages ahead are fetched in the order they were asked for.
            async with self._connection_of(record.id), self.connector.session(record) as client:
                listed_at = await self.rows.now()
                state = await _open_folder(client, key.path)
                if state.uidvalidity != key.uid_validity:
                    return None
                fetched = await client.fetch_raw(key.uids)
            parsed = await self.ingest.parse(record.id, folder, fetched, yielding=True)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.info("reading ahead for account %s failed; the page is fetched when it is due: %s", record.id, exc)
            return None
        return _ReadPage(fetched, parsed, listed_at)

    async def _take_ahead(self, account_id: int) -> _ReadAhead | None:
        """The account's next page read ahead, finished; the pages after it go on being read."""
        queue = self._ahead.get(account_id)
        if not queue:
            return None
        ahead = queue.pop(0)
        if not queue:
            del self._ahead[account_id]
        await asyncio.wait([ahead.task])
        return ahead

    def _drop_stale(self) -> None:
        now = time.monotonic()
        for account_id, queue in list(self._ahead.items()):
            kept = [ahead for ahead in queue if now - ahead.started <= READ_AHEAD_SECONDS]
            for ahead in queue:
                if ahead not in kept:
                    ahead.task.cancel()
            if kept:
                self._ahead[account_id] = kept
            else:
                del self._ahead[account_id]

    async def close(self) -> None:
        """Stop reading ahead (at shutdown), before the connections are closed."""
        self._closing = True
        pending, self._ahead = [ahead for queue in self._ahead.values() for ahead in queue], {}
        for ahead in pending:
            ahead.task.cancel()
        if pending:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(5):
                    await asyncio.wait([ahead.task for ahead in pending])
