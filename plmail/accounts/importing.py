"""First imports: each provider's history importer (found in the registry by the account's kind) reads one
page per call; `MailImporter` runs those pages as a chain of jobs on `ingest_backlog`, one page per job,
each enqueueing the next. The import job knows no provider.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

from plmail.db.repos.account_admin import IMPORT_LOCK, AccountAdminRepository
from plmail.domain.enums import AccountStatus
from plmail.domain.errors import is_retryable
from plmail.domain.jobs import IMPORT_MAIL_PAGE
from plmail.domain.moments import parse_moment
from plmail.domain.ports import Enqueuer
from plmail.domain.providers import ImportPage, ImportProgress, PageRun
from plmail.domain.registry import ProviderRegistry

log = logging.getLogger(__name__)

IMPORT_SILENCE = timedelta(minutes=5)
_STATE_KEY = "import"


def _stamp(moment: datetime) -> str:
    return moment.isoformat()


class MailImporter:
    """Runs first imports as chains of one-page jobs, so pages of several accounts take turns in the queue
    and every account has a usable inbox before any has its archive."""

    def __init__(self, accounts: AccountAdminRepository, queues: Enqueuer | None, providers: ProviderRegistry
                 ) -> None:
        self.accounts = accounts
        self.queues = queues
        self.importers = providers.importers

    async def ensure_running(self, account_id: int, *, now: datetime | None = None) -> bool:
        """Start an import that has work and has been silent for five minutes: that starts a new account's
        import, and restarts one whose chain of jobs broke. Returns whether a page was enqueued."""
        record = await self.accounts.for_job(account_id)
        if record is None or not record.is_active or record.status is not AccountStatus.OK:
            return False
        importer = self.importers.get(record.provider_kind)
        if importer is None:
            return False
        moment = now or datetime.now(UTC)
        state = record.sync_state.get(_STATE_KEY) or {}
        if not await importer.has_history(account_id):
            if state.get("started_at") and not state.get("finished_at"):
                await self.accounts.merge_state(account_id, _STATE_KEY, {"finished_at": _stamp(moment)})
            return False
        last = max((t for t in (parse_moment(state.get("last_page_at")), parse_moment(state.get("enqueued_at")))
                    if t),
                   default=None)
        if not state.get("finished_at") and last is not None and moment - last < IMPORT_SILENCE:
            return False  # a chain is running (or was, moments ago)
        stamp: dict[str, Any] = {"enqueued_at": _stamp(moment)}
        if not state.get("started_at") or state.get("finished_at"):
            done, _ = await importer.counts(account_id)
            stamp.update(started_at=_stamp(moment), start_done=done, finished_at=None)
        await self.accounts.merge_state(account_id, _STATE_KEY, stamp)
        await self._enqueue(account_id)
        return True

    async def _enqueue(self, account_id: int, *, at: datetime | None = None) -> None:
        if self.queues is not None:
            delay = max((at - datetime.now(UTC)).total_seconds(), 0.0) if at is not None else 0.0
            await self.queues.enqueue(IMPORT_MAIL_PAGE, delay_seconds=delay, account_id=account_id)

    async def run_page(self, account_id: int, *, chain: bool = True) -> PageRun:
        """One page; with `chain`, enqueue the next when there is more. An account whose sign-in fails, or
        that was disabled, ends its chain here; a passing failure is raised for the job to be retried."""
        record = await self.accounts.for_job(account_id)
        if record is None or not record.is_active or record.status is not AccountStatus.OK:
            return PageRun(True, ImportPage())
        importer = self.importers.get(record.provider_kind)
        if importer is None:
            return PageRun(True, ImportPage())
        async with self.accounts.session_lock(IMPORT_LOCK, account_id) as lock:
            if not lock.taken:
                return PageRun(False, ImportPage(more=True))  # another chain is on it; this one ends
            try:
                page = await importer.import_page(record.account)
            except Exception as exc:
                await self.accounts.merge_state(account_id, _STATE_KEY, {"last_error": str(exc)[:500]})
                if is_retryable(exc):
                    raise
                log.warning("import of account %s stopped: %s", account_id, exc)
                return PageRun(True, ImportPage())
            stamp: dict[str, Any] = {"last_page_at": _stamp(datetime.now(UTC)), "last_error": None}
            if not page.more:
                stamp["finished_at"] = _stamp(datetime.now(UTC))
            # A page's time stamp lost in a crash costs nothing; the one saying the import finished must hold.
            await self.accounts.merge_state(account_id, _STATE_KEY, stamp, flush=not page.more)
        if page.more and chain:
            await self._enqueue(account_id, at=page.wait_until)
        return PageRun(True, page)

    async def progress(self, account_id: int, *, now: datetime | None = None) -> ImportProgress | None:
        record = await self.accounts.for_job(account_id)
        if record is None:
            return None
        importer = self.importers.get(record.provider_kind)
        if importer is None:
            return None
        # Before the first sync has even listed the folders there is nothing to count yet, and that is not
        # "all mail is in": doubt means still importing.
        importing = record.last_synced_at is None or await importer.has_history(account_id)
        done, total = await importer.counts(account_id)
        state = record.sync_state.get(_STATE_KEY) or {}
        started = parse_moment(state.get("started_at"))
        eta: float | None = None
        if importing and started is not None:
            elapsed = ((now or datetime.now(UTC)) - started).total_seconds()
            gained = done - int(state.get("start_done") or 0)
            if gained > 0 and elapsed > 0 and total > done:
                eta = (total - done) * elapsed / gained
        return ImportProgress(importing, done, max(total, done), started, eta)
