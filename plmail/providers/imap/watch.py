"""IDLE on the Inbox (and Junk) of every active IMAP account, supervised.

One process of the installation watches (it holds a database advisory lock), one connection per folder.
A change the server pushes asks for a sync; a dropped connection is reconnected with growing pauses and,
once back, asks for a sync too, so what arrived meanwhile is fetched. The sync itself is what stores mail,
and it leaves out what is stored already, so a connection that drops never loses or duplicates a message.
The fallback poll (a cron job) covers servers without IDLE and anything this misses.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from plmail.aio import wait_at_most
from plmail.db.repos.account_admin import IDLE_LEADER_LOCK, IDLE_POKE_CHANNEL, AccountAdminRepository
from plmail.domain.enums import AccountStatus
from plmail.providers.imap.errors import ImapError
from plmail.providers.imap.repos.mailboxes import IdleTarget, MailboxRepository
from plmail.providers.imap.session import ImapConnector

log = logging.getLogger(__name__)
STOP_SECONDS = 10.0  # for a cancelled watcher to end at shutdown

SyncRequest = Callable[[int], Awaitable[None]]
_DEBOUNCE_SECONDS = 0.2  # a burst of pushes (EXISTS, RECENT, FETCH) becomes one sync


class IdleSupervisor:
    def __init__(self, accounts: AccountAdminRepository, mailboxes: MailboxRepository, connector: ImapConnector,
                 request_sync: SyncRequest, *, refresh_seconds: float = 30.0, backoff_max: float = 300.0) -> None:
        self.accounts = accounts
        self.mailboxes = mailboxes
        self.connector = connector
        self.request_sync = request_sync
        self.refresh_seconds = refresh_seconds
        self.backoff_max = backoff_max
        self._task: asyncio.Task[None] | None = None
        self._poke = asyncio.Event()
        self._watchers: dict[int, tuple[IdleTarget, asyncio.Task[None]]] = {}
        self._pending: dict[int, asyncio.Task[None]] = {}
        self._announcing: set[asyncio.Task[None]] = set()
        self.idling: set[int] = set()  # mailbox ids whose IDLE is established right now

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="imap-idle")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await _ended(task, "the IMAP IDLE supervisor")
        await self._stop_all()
        for pending in list(self._pending.values()):
            pending.cancel()
        self._pending.clear()

    def poke(self) -> None:
        """Look at the accounts again now (one was added, edited or synced for the first time)."""
        self._poke.set()
        # The leader may be another node (two machines, one database): it hears this through NOTIFY.
        announcing = asyncio.get_running_loop().create_task(self._announce())
        self._announcing.add(announcing)
        announcing.add_done_callback(self._announcing.discard)

    async def _announce(self) -> None:
        try:
            await self.accounts.announce(IDLE_POKE_CHANNEL)
        except Exception:  # the database is away: the leader's own refresh finds the change a little later
            log.warning("could not tell the IMAP IDLE leader to look again", exc_info=True)

    async def _run(self) -> None:
        while True:
            try:
                async with self.accounts.session_lock(IDLE_LEADER_LOCK, 0) as lock:
                    unlisten = await lock.listen(IDLE_POKE_CHANNEL, self._poke.set) if lock.taken else None
                    try:
                        while lock.taken and await lock.still_held():
                            self._poke.clear()
                            await self._reconcile()
                            with contextlib.suppress(TimeoutError):
                                await wait_at_most(self._poke.wait(), self.refresh_seconds)
                    finally:
                        if unlisten is not None:
                            await unlisten()
            except asyncio.CancelledError:
                raise
            except Exception:  # the database went away for a moment; watch again when it is back
                _raise_if_stopping()
                log.exception("IMAP IDLE supervision failed; retrying")
            await self._stop_all()
            with contextlib.suppress(TimeoutError):
                await wait_at_most(self._poke.wait(), self.refresh_seconds)
            self._poke.clear()

    async def _reconcile(self) -> None:
        wanted = {t.mailbox_id: t for t in await self.mailboxes.idle_targets()}
        for mailbox_id, (target, task) in list(self._watchers.items()):
            # A watcher that ended by itself (a server without IDLE, say) stays ended until its account changes;
            # the fallback poll covers that folder meanwhile.
            if wanted.get(mailbox_id) != target:
                task.cancel()
                del self._watchers[mailbox_id]
                self.idling.discard(mailbox_id)
        for mailbox_id, target in wanted.items():
            if mailbox_id not in self._watchers:
                task = asyncio.create_task(self._watch(target), name=f"imap-idle:{mailbox_id}")
                self._watchers[mailbox_id] = (target, task)

    async def _stop_all(self) -> None:
        tasks = [task for _, task in self._watchers.values()]
        self._watchers.clear()
        self.idling.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            await _ended(task, "an IMAP IDLE watcher")

    async def _watch(self, target: IdleTarget) -> None:
        delay = 1.0
        while self._still_wanted(target):
            record = await self.accounts.for_job(target.account_id)
            if record is None or not record.is_active or record.status is not AccountStatus.OK:
                return
            try:
                async with self.connector.session(record, reuse=False) as client, client.idle(target.path) as changes:
                    self.idling.add(target.mailbox_id)
                    delay = 1.0
                    self._sync_soon(target.account_id)  # catch up on whatever came while we were not watching
                    async for event in changes:
                        if event.kind != "recent":
                            self._sync_soon(target.account_id)
            except asyncio.CancelledError:
                raise
            except ImapError as exc:
                _raise_if_stopping()
                if not exc.retryable:
                    log.warning("IDLE on %r of account %s stopped: %s", target.path, target.account_id, exc)
                    return
                log.info("IDLE on %r of account %s dropped (%s); reconnecting in %.0f s",
                         target.path, target.account_id, exc, delay)
            except Exception:
                _raise_if_stopping()
                log.exception("IDLE on %r of account %s failed", target.path, target.account_id)
            finally:
                self.idling.discard(target.mailbox_id)
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.backoff_max)

    def _still_wanted(self, target: IdleTarget) -> bool:
        """A watcher taken off the list (stopped, or its account changed) does not connect again, even if the
        cancellation meant for it was lost on the way."""
        entry = self._watchers.get(target.mailbox_id)
        return entry is not None and entry[1] is asyncio.current_task()

    def _sync_soon(self, account_id: int) -> None:
        if account_id in self._pending:
            return
        self._pending[account_id] = asyncio.create_task(self._fire(account_id))

    async def _fire(self, account_id: int) -> None:
        try:
            await asyncio.sleep(_DEBOUNCE_SECONDS)
        finally:
            self._pending.pop(account_id, None)
        try:
            await self.request_sync(account_id)
        except Exception:
            log.exception("could not ask for a sync of account %s", account_id)


def _raise_if_stopping() -> None:
    """Inside a task being cancelled, an error raised on the way out (a connection that was dropped) is no reason
    to try again: the retry would swallow the cancellation and hold the shutdown forever."""
    current = asyncio.current_task()
    if current is not None and current.cancelling():
        raise asyncio.CancelledError


async def _ended(task: asyncio.Task[None], what: str) -> None:
    """Wait for a cancelled task, but not forever: a server that never answers the end of an IDLE must not hold the
    shutdown (the connection goes with the process)."""
    done, _ = await asyncio.wait({task}, timeout=STOP_SECONDS)
    if not done:
        log.warning("%s did not stop within %.0f s after it was cancelled; left behind", what, STOP_SECONDS)
        return
    if not task.cancelled():
        with contextlib.suppress(Exception):
            task.result()
