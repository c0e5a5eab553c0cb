"""GraphAccountSyncer: folder discovery, then one delta chain per folder.

Graph has no account-wide cursor; each folder's delta link is kept on the account. Following a link is
the sync's business; the enumeration that brings a folder its first link is the import's: a folder
without a link is scheduled for import, and until its link arrives the sync asks it only for what was
received since it was scheduled. An expired link (410) hands its folder back to the import.

A sync reads every folder's round before applying any, and applies every removal before any arrival, so a
move under a changing id (a removal here, an unknown message there) is recognised whichever folder Graph
lists first. Removals are judged only by a sync in which every folder answered and none is still being
imported. A 429 ends the sync early and reschedules it for when Graph said to come back: not an error.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from plmail.db.database import Database
from plmail.db.repos.account_admin import AccountAdminRepository, AccountRecord
from plmail.domain.enums import AccountStatus, ProviderKind
from plmail.domain.errors import NotFoundError
from plmail.domain.models import Account
from plmail.providers.graph.client import GraphClient
from plmail.providers.graph.errors import (
    GraphAuthError,
    GraphError,
    GraphNotFound,
    GraphSyncStateGone,
    GraphThrottled,
)
from plmail.providers.graph.folders import Folder, GraphFolderSyncer
from plmail.providers.graph.models import RemoteMessage
from plmail.providers.graph.repos.messages import GraphMessageRepository
from plmail.providers.graph.repos.state import GraphState, GraphStateRepository
from plmail.providers.graph.store import GraphIngest

log = logging.getLogger(__name__)

SYNC_PAGE = 100
# A folder being imported is asked for mail received since it was scheduled, less this much: clocks of
# plmail and Exchange disagree a little, and what the margin re-reads is matched to stored rows.
SINCE_MARGIN = timedelta(minutes=10)

Reschedule = Callable[[int, float], Awaitable[None]]


@dataclass(slots=True)
class FolderRound:
    """One folder's answer in this sync: what it listed, what it removed, and its next delta link."""

    folder: Folder
    messages: list[RemoteMessage] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    delta_link: str | None = None  # None for a folder still being imported: its listing has no link to keep


class GraphAccountSyncer:
    kind = ProviderKind.GRAPH

    def __init__(self, db: Database, accounts: AccountAdminRepository, client: GraphClient,
                 folders: GraphFolderSyncer, ingest: GraphIngest, *, reschedule: Reschedule | None = None) -> None:
        self.db = db
        self.accounts = accounts
        self.client = client
        self.folders = folders
        self.ingest = ingest
        self.reschedule = reschedule
        self.state = GraphStateRepository(db)
        self.messages = GraphMessageRepository(db)

    async def sync(self, account: Account) -> list[int]:
        """Returns no mailbox ids: Graph folders have no mailbox rows (they are label bindings)."""
        record = await self.accounts.for_job(account.id)
        if record is None:
            raise NotFoundError(f"Account {account.id} no longer exists.")
        state = await self.state.load(account.id)
        now = datetime.now(UTC)
        if state.throttled_until is not None and state.throttled_until > now:
            await self._later(account.id, (state.throttled_until - now).total_seconds())
            return []
        try:
            await self._sync(record, state)
        except GraphThrottled as exc:
            await self._throttled(account.id, exc)
            return []
        except GraphAuthError as exc:
            await self.accounts.set_status(account.id, AccountStatus.RECONNECT, str(exc))
            raise
        except GraphError as exc:
            await self.accounts.note_problem(account.id, str(exc))  # shown with the account; the job decides
            raise
        await self.accounts.synced(account.id)
        return []

    async def _sync(self, record: AccountRecord, state: GraphState) -> None:
        discovery = await self.folders.discover(record, state)
        now = datetime.now(UTC)
        held = dict(state.removals)
        await self._forget_gone(record, discovery.gone, held)
        waiting = [f.id for f in discovery.folders if f.id not in state.links and f.id not in state.imports]
        await self.state.schedule_imports(record.id, waiting, now)
        state = await self.state.load(record.id)
        listed_at = await self.messages.now()
        rounds: list[FolderRound] = []
        answered = True
        throttled: GraphThrottled | None = None
        for folder in discovery.folders:
            try:
                rounds.append(await self._read(record, state, folder))
            except GraphSyncStateGone:
                log.info("delta link of folder %r of account %s expired; the folder goes back to the import",
                         folder.name, record.id)
                await self.state.link_expired(record.id, folder.id, now)
                answered = False
            except GraphNotFound:
                log.info("folder %r of account %s went away during the sync", folder.name, record.id)
                answered = False
            except GraphThrottled as exc:
                throttled = exc
                answered = False
                break
        retry = await self._apply(record, rounds, held, listed_at)
        links = {r.folder.id: r.delta_link for r in rounds if r.delta_link and r.folder.id not in retry}
        await self.state.set_links(record.id, links)
        if throttled is not None:
            raise throttled
        if answered and not retry and not (await self.state.load(record.id)).importing:
            await self.ingest.judge_removals(record, held)
        if state.throttled_until is not None:
            await self.state.throttled(record.id, None)

    async def _read(self, record: AccountRecord, state: GraphState, folder: Folder) -> FolderRound:
        """The folder's whole round: the changes since its delta link, or, while it is being imported, what was
        received since it was scheduled."""
        answer = FolderRound(folder)
        link = state.links.get(folder.id)
        mark = state.imports.get(folder.id)
        following = link is not None and mark is None
        page = await self.client.delta(
            record.account, folder.id, link=link if following else None, page_size=SYNC_PAGE,
            since=None if following else (mark.since if mark else datetime.now(UTC)) - SINCE_MARGIN)
        while True:
            answer.messages.extend(page.messages)
            answer.removed.extend(page.removed)
            if page.next_link is None:
                answer.delta_link = page.delta_link if following else None
                return answer
            page = await self.client.delta(record.account, folder.id, link=page.next_link, page_size=SYNC_PAGE)

    async def _apply(self, record: AccountRecord, rounds: list[FolderRound], held: dict[str, str],
                     listed_at: datetime) -> set[str]:
        """Removals of every folder first, then arrivals folder by folder. Returns the folders with a message
        that failed to store, whose rounds are read again next time."""
        for answer in rounds:
            if answer.removed:
                await self.ingest.hold_removals(record, answer.folder.id, answer.removed, held)
        retry: set[str] = set()
        for answer in rounds:
            if answer.messages:
                outcome = await self.ingest.store(record, answer.folder, answer.messages, held, listed_at)
                if outcome.retry:
                    retry.add(answer.folder.id)
        return retry

    async def _forget_gone(self, record: AccountRecord, gone: list[str], held: dict[str, str]) -> None:
        """A folder Graph no longer lists takes its links along; its mail is held as removed, so mail that turns
        up in another folder keeps its row and the rest goes once every folder has answered."""
        if not gone:
            return
        await self.state.forget_folders(record.id, gone)
        orphans = await self.messages.in_folders(record.id, gone)
        if orphans:
            await self.state.hold_removals(record.id, orphans)
            held.update(orphans)

    async def _throttled(self, account_id: int, exc: GraphThrottled) -> None:
        until = datetime.now(UTC) + timedelta(seconds=exc.retry_after)
        log.info("Graph throttled account %s; syncing again in %.0f s", account_id, exc.retry_after)
        await self.state.throttled(account_id, until)
        await self._later(account_id, exc.retry_after)

    async def _later(self, account_id: int, delay: float) -> None:
        if self.reschedule is not None:
            await self.reschedule(account_id, max(delay, 1.0))
