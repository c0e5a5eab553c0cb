"""Running syncs: one at a time per account, none lost, none for an account waiting on its user.

A sync asked for while another runs for the same account is not dropped: it leaves a "sync again" flag
before trying the lock, and the running sync looks at the flag after letting the lock go, so whichever
happens last sees the other. A sync asked for while a draft, a send or a propagation holds the account's lock
waits for that lock. Every sync ends by making sure the account's first import is running.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TypeVar

from plmail.accounts.importing import MailImporter
from plmail.db.repos.account_admin import SYNC_LOCK, AccountAdminRepository, AccountRecord
from plmail.domain.enums import AccountStatus
from plmail.domain.errors import PlmailError, is_retryable
from plmail.domain.jobs import PROPAGATE_PROVIDER_CHANGES, SYNC_ACCOUNT
from plmail.domain.ports import AccountSyncer, Enqueuer
from plmail.domain.providers import ImportProgress
from plmail.domain.registry import ProviderRegistry
from plmail.mail.identities import IdentityService

log = logging.getLogger(__name__)

_FOREGROUND_ATTEMPTS = 6
# A draft, a send or a propagation holds the account's lock for seconds and never looks at requests for a sync:
# a sync asked for meanwhile waits for the lock, unless a running sync takes the request first.
_WAIT_FOR_THE_LOCK_SECONDS = 60.0
_PROGRESS_EVERY = 0.5  # seconds between progress counts while pages keep coming

Progress = Callable[[ImportProgress], None]
T = TypeVar("T")


class AccountSyncService:
    def __init__(self, accounts: AccountAdminRepository, providers: ProviderRegistry, importer: MailImporter,
                 queues: Enqueuer | None, *, identities: IdentityService | None = None) -> None:
        self.accounts = accounts
        self.identities = identities
        self.syncers = providers.syncers
        self.importer = importer
        self.queues = queues
        self._after_sync: list[Callable[[int], None]] = []

    def on_synced(self, listener: Callable[[int], None]) -> None:
        """Call `listener(account_id)` after every sync that ran (IMAP IDLE re-reads what to watch)."""
        self._after_sync.append(listener)

    async def request(self, account_id: int) -> None:
        """Ask the ingest workers for a sync of this account."""
        if self.queues is not None:
            await self.queues.enqueue(SYNC_ACCOUNT, account_id=account_id)

    async def resume(self, account_id: int) -> None:
        """After the user fixed or re-enabled the account: sync it, and hand over the changes made in plmail
        that waited while it could not be reached."""
        await self.request(account_id)
        if self.queues is not None:
            await self.queues.enqueue(PROPAGATE_PROVIDER_CHANGES, account_id=account_id)

    async def request_all(self) -> int:
        """The fallback poll: every account that can be synced. One whose sign-in failed is left alone until
        its user edits it, so the server is not hammered with a wrong password."""
        ids = await self.accounts.syncable_ids()
        for account_id in ids:
            await self.request(account_id)
        return len(ids)

    async def run(self, account_id: int) -> list[int]:
        """Sync now, in this task; returns the touched mailbox ids."""
        record = await self.accounts.for_job(account_id)
        if record is None or not record.is_active or record.status is not AccountStatus.OK:
            return []
        syncer = self.syncers.get(record.provider_kind)
        if syncer is None:
            return []
        await self.accounts.request_resync(account_id)
        touched: set[int] = set()
        while True:
            async with self.accounts.session_lock(SYNC_LOCK, account_id, wait=_WAIT_FOR_THE_LOCK_SECONDS,
                                                  still_wanted=lambda: self.accounts.resync_requested(account_id)
                                                  ) as lock:
                if not lock.taken:
                    return sorted(touched)  # a running sync took our request and goes again (or the lock stayed busy)
                started = time.time()
                try:
                    stopped = not await self._sync_while_requested(record, syncer, touched)
                finally:
                    # Inside the lock: two nodes' lines for one account never overlap, which shows it held.
                    log.info("synced account %s in %.2f s", account_id, time.time() - started,
                             extra={"sync_started": started, "sync_ended": time.time()})
                if stopped:
                    return sorted(touched)
            if not await self.accounts.resync_requested(account_id):
                break
        await self.importer.ensure_running(account_id)
        if self.identities is not None:  # Gmail's send-as list is read again on every sync
            await self.identities.refresh(account_id)
        for listener in self._after_sync:
            listener(account_id)
        return sorted(touched)

    async def _sync_while_requested(self, record: AccountRecord, syncer: AccountSyncer, touched: set[int]) -> bool:
        """Sync until no request is left, under the caller's lock; False when a lasting failure stopped it."""
        account_id = record.id
        while await self.accounts.take_resync(account_id):
            try:
                touched |= set(await syncer.sync(record.account))
            except Exception as exc:
                # The account no longer says "Connected": what went wrong is shown until a sync works.
                await self.accounts.note_problem(account_id, _in_words(exc))
                if is_retryable(exc):
                    raise
                log.warning("sync of account %s stopped: %s", account_id, exc)
                return False
        return True

    async def run_until_done(self, account_id: int, *, progress: Progress | None = None) -> ImportProgress | None:
        """Sync, then import page after page in the foreground until the history is in (`plmail sync --wait`).
        Passing failures are retried with growing pauses; a failed sign-in ends it with the server's reason."""
        await self._retrying(lambda: self.run(account_id))
        # Counting costs a few queries, so it is done when a page says the import may have ended (or was
        # stopped), and otherwise only as often as the progress bar is redrawn.
        settle = True
        shown_at = -_PROGRESS_EVERY
        while True:
            if settle or (progress is not None and time.monotonic() - shown_at >= _PROGRESS_EVERY):
                current = await self.importer.progress(account_id)
                shown_at = time.monotonic()
                if current is not None and progress is not None:
                    progress(current)
                if current is None or not current.importing:
                    return current
            if settle:
                record = await self.accounts.for_job(account_id)
                if record is None or not record.is_active or record.status is not AccountStatus.OK:
                    detail = record.status_detail if record else "the account was removed"
                    raise PlmailError(f"The import stopped: {detail or 'the account is disabled'}")
            run = await self._retrying(lambda: self.importer.run_page(account_id, chain=False))
            settle = not run.ran or not run.page.more
            if not run.ran:
                await asyncio.sleep(0.5)  # a worker runs this account's import; watch it finish
            elif run.page.wait_until is not None:  # the provider's quota is spent until then
                await asyncio.sleep(max((run.page.wait_until - datetime.now(UTC)).total_seconds(), 0.0))

    async def _retrying(self, action: Callable[[], Awaitable[T]]) -> T:
        failures = 0
        while True:
            try:
                return await action()
            except Exception as exc:
                failures += 1
                if not is_retryable(exc) or failures >= _FOREGROUND_ATTEMPTS:
                    raise
                log.warning("retrying after a passing failure: %s", exc)
                await asyncio.sleep(min(2.0 ** failures, 30.0))


def _in_words(exc: BaseException) -> str:
    """plmail's own words for a failed sync: a provider error's summary (without what the server said), another
    PlmailError's message; never an unexpected exception's text."""
    summary = getattr(exc, "summary", None)
    if isinstance(summary, str) and summary:
        return summary
    if isinstance(exc, PlmailError):
        return str(exc)
    return "An unexpected error stopped the sync; it is in the server's log."
