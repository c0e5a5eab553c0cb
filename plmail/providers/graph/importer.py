"""The Microsoft first import: each scheduled folder's first delta round, newest first, fifty at a time.

Folders come in the order a person wants them (Inbox, Sent, Drafts, own folders, Archive, Spam, Trash).
The round's next link is kept on the account between pages; the page that ends the round brings the
folder's delta link, and from then on the sync follows it. An expired link starts the round again. A page
with a message that would not store is read again, until that message has failed five times.

While a page is stored, the next one is already asked for (`_ReadAhead`): Graph answers while PostgreSQL
writes, instead of the two taking turns. The next page's job takes that answer if it runs in the same process
soon after and its mark is the link that was read; otherwise it asks again. Nothing is asked twice at once, so
an account has at most two requests in flight, within Outlook's four.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from plmail.db.database import Database
from plmail.db.repos.account_admin import AccountAdminRepository, AccountRecord
from plmail.domain.enums import AccountStatus, ProviderKind
from plmail.domain.errors import NotFoundError
from plmail.domain.models import Account
from plmail.domain.providers import ImportPage
from plmail.providers.graph.client import PAGE_SIZE, GraphClient
from plmail.providers.graph.errors import GraphAuthError, GraphNotFound, GraphSyncStateGone, GraphThrottled
from plmail.providers.graph.folders import Folder, import_rank
from plmail.providers.graph.models import DeltaPage
from plmail.providers.graph.repos.messages import GraphMessageRepository
from plmail.providers.graph.repos.state import GraphStateRepository
from plmail.providers.graph.store import GraphIngest

log = logging.getLogger(__name__)

READ_AHEAD_KEEP = 60.0  # seconds a page read ahead waits for its job; older, it is asked for again


@dataclass(frozen=True, slots=True)
class _Ahead:
    folder_id: str
    link: str
    listed_at: datetime  # when it was asked for: changes made here after that are newer than what it says
    task: asyncio.Task[DeltaPage]
    started: float  # time.monotonic()


class _ReadAhead:
    """At most one page read ahead per account, in this process."""

    def __init__(self) -> None:
        self._pages: dict[int, _Ahead] = {}

    def start(self, account_id: int, folder_id: str, link: str, listed_at: datetime,
              read: asyncio.Task[DeltaPage]) -> None:
        self.drop(account_id)
        read.add_done_callback(_retrieve)
        self._pages[account_id] = _Ahead(folder_id, link, listed_at, read, time.monotonic())

    def take(self, account_id: int, folder_id: str, link: str | None) -> _Ahead | None:
        """The page read ahead for this folder and link, if there is a fresh one; any other is dropped."""
        now = time.monotonic()
        for stale in [a for a, ahead in self._pages.items() if now - ahead.started > READ_AHEAD_KEEP]:
            self.drop(stale)
        ahead = self._pages.pop(account_id, None)
        if ahead is None:
            return None
        if (ahead.folder_id, ahead.link) == (folder_id, link):
            return ahead
        ahead.task.cancel()
        return None

    def drop(self, account_id: int) -> None:
        ahead = self._pages.pop(account_id, None)
        if ahead is not None:
            ahead.task.cancel()


def _retrieve(task: asyncio.Task[DeltaPage]) -> None:
    """A read ahead that failed and was never taken is not an error to report: its job asks again."""
    if not task.cancelled():
        task.exception()


class GraphImportProbe:
    """A Microsoft account is importing unless every folder has its delta link and none is left to read;
    an account that has not discovered its folders yet is importing too (doubt counts as importing)."""

    kind = ProviderKind.GRAPH

    def __init__(self, db: Database) -> None:
        self.state = GraphStateRepository(db)

    async def is_importing(self, account_id: int) -> bool:
        return (await self.state.load(account_id)).importing


class GraphHistoryImporter:
    kind = ProviderKind.GRAPH

    def __init__(self, db: Database, accounts: AccountAdminRepository, client: GraphClient,
                 ingest: GraphIngest) -> None:
        self.accounts = accounts
        self.client = client
        self.ingest = ingest
        self.state = GraphStateRepository(db)
        self.messages = GraphMessageRepository(db)
        self.ahead = _ReadAhead()

    async def has_history(self, account_id: int) -> bool:
        return bool((await self.state.load(account_id)).imports)

    async def counts(self, account_id: int) -> tuple[int, int]:
        state = await self.state.load(account_id)
        return await self.messages.stored_count(account_id), sum(f.total for f in state.folders.values())

    async def import_page(self, account: Account) -> ImportPage:
        record = await self.accounts.for_job(account.id)
        if record is None:
            raise NotFoundError(f"Account {account.id} no longer exists.")
        state = await self.state.load(account.id)
        now = datetime.now(UTC)
        if state.throttled_until is not None and state.throttled_until > now:
            return ImportPage(more=True, wait_until=state.throttled_until)
        waiting = sorted((info for folder_id, info in state.folders.items() if folder_id in state.imports),
                         key=import_rank)
        orphans = sorted(set(state.imports) - set(state.folders))
        if orphans:  # scheduled, then gone from the listing before its turn
            await self.state.forget_folders(account.id, orphans)
        if not waiting:
            self.ahead.drop(account.id)
            return ImportPage()
        info = waiting[0]
        mark = state.imports[info.id]
        labels = {f.folder_id: f.label_id for f in await self.messages.folder_labels(account.id)}
        folder = Folder(info.id, info.path, info.role, labels.get(info.id), info.total)
        ahead = self.ahead.take(account.id, folder.id, mark.next_link)
        listed_at = ahead.listed_at if ahead is not None else await self.messages.now()
        started = mark.started if mark.next_link is not None and mark.started is not None else listed_at
        held = dict(state.removals)
        try:
            if ahead is not None:
                page = await ahead.task
            else:
                page = await self.client.delta(record.account, folder.id, link=mark.next_link, newest_first=True,
                                               page_size=PAGE_SIZE)
            if page.next_link is not None:
                self.ahead.start(account.id, folder.id, page.next_link, await self.messages.now(),
                                 asyncio.create_task(self.client.delta(record.account, folder.id,
                                                                       link=page.next_link, page_size=PAGE_SIZE)))
            if mark.next_link is None or mark.started is None:
                await self.state.import_started(account.id, folder.id, started)
            for removed in page.removed:  # not in a first round; kept in case Graph sends one anyway
                await self.ingest.hold_removals(record, folder.id, [removed], held)
            outcome = await self.ingest.store(record, folder, page.messages, held, listed_at)
        except GraphSyncStateGone:
            log.info("the import of folder %r of account %s expired; starting its round again", folder.name,
                     account.id)
            await self.state.import_moved_on(account.id, folder.id, None)
            return ImportPage(folder=folder.name, more=True)
        except GraphNotFound:
            log.info("folder %r of account %s went away during its import", folder.name, account.id)
            await self.state.forget_folders(account.id, [folder.id])
            return ImportPage(folder=folder.name, more=len(waiting) > 1)
        except GraphThrottled as exc:
            until = datetime.now(UTC) + timedelta(seconds=exc.retry_after)
            await self.state.throttled(account.id, until)
            log.info("Graph throttled the import of account %s; the next page in %.0f s", account.id,
                     exc.retry_after)
            return ImportPage(folder=folder.name, more=True, wait_until=until)
        except GraphAuthError as exc:
            await self.accounts.set_status(account.id, AccountStatus.RECONNECT, str(exc))
            raise
        if outcome.retry:
            more = True  # the same page again: the mark stays where it is
        elif page.next_link is not None:
            await self.state.import_moved_on(account.id, folder.id, page.next_link)
            more = True
        elif page.delta_link is not None:
            await self._finish(record, folder, page.delta_link, started, held)
            more = len(waiting) > 1
        else:  # a round that ends without a link: read it once more rather than follow nothing
            await self.state.import_moved_on(account.id, folder.id, None)
            more = True
        return ImportPage(stored=outcome.stored + outcome.matched, failed=int(outcome.retry), folder=folder.name,
                          more=more)

    async def _finish(self, record: AccountRecord, folder: Folder, delta_link: str, started: datetime,
                      held: dict[str, str]) -> None:
        """The round is over: its delta link goes to the sync, and what the folder was known to hold but the
        round did not list (removed while no link could say so) is held as removed, to be judged with the rest
        once every folder has answered."""
        missing = await self.messages.unlisted(record.id, folder.id, started)
        if missing:
            log.info("%d messages of folder %r of account %s were not in its listing; holding them as removed",
                     len(missing), folder.name, record.id)
            await self.state.hold_removals(record.id, missing)
            held.update(missing)
        await self.state.import_done(record.id, folder.id, delta_link)
