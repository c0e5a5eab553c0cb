"""GmailAccountSyncer: the label list first, then the history delta since the stored history id.

Gmail has no mailbox rows: the work is planned on the account. The account's history id is snapshotted
before any message is fetched, and it means only "incremental sync resumes here" — never "the history is in";
that is the backfill's own state (see importer.py). A first sync takes the snapshot and asks for a backfill;
later syncs apply history.list: messages added are fetched (in fetch jobs of 100 ids when there are many),
deleted ones removed, and label changes re-read on the stored mail (the relabel pass). A history id Gmail no
longer keeps (404) falls back to a resumable backfill from a new snapshot.

A quota refusal is not an error: the sync leaves the history id where it was and is asked for again when the
account's minute is over.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime

from plmail.db.repos.account_admin import AccountAdminRepository, AccountRecord
from plmail.db.repos.gmail_messages import GmailMessageRepository
from plmail.domain.enums import AccountStatus, ProviderKind, QueueName
from plmail.domain.errors import NotFoundError, is_retryable
from plmail.domain.jobs import SYNC_ACCOUNT, JobSpec
from plmail.domain.models import Account
from plmail.domain.ports import Enqueuer
from plmail.providers.gmail.client import GmailApi, GmailNotFound, GmailSession
from plmail.providers.gmail.importer import GmailBackfillState
from plmail.providers.gmail.ingest import FETCH_BATCH, BatchOutcome, GmailMessageIngest
from plmail.providers.gmail.pacer import GmailQuotaDeferred, GmailTime, SystemTime

log = logging.getLogger(__name__)

STATE_KEY = "gmail"
INLINE_FETCH = 500  # more new messages than this are fetched by jobs of FETCH_BATCH ids
# Gmail's own job: fetching a batch of new message ids that a sync found too many of to fetch itself.
GMAIL_FETCH_BATCH = JobSpec("gmail_fetch_batch", QueueName.INGEST, timeout=900, retries=5, retry_delay=10.0)


class GmailAccountSyncer:
    kind = ProviderKind.GMAIL

    def __init__(self, accounts: AccountAdminRepository, api: GmailApi, ingest: GmailMessageIngest,
                 backfill: GmailBackfillState, queues: Enqueuer | None, time: GmailTime | None = None, *,
                 inline_fetch: int = INLINE_FETCH) -> None:
        self.accounts = accounts
        self.api = api
        self.ingest = ingest
        self.backfill = backfill
        self.queues = queues
        self.time: GmailTime = time or SystemTime()
        self.inline_fetch = inline_fetch
        self.repo = GmailMessageRepository(accounts.db)

    async def sync(self, account: Account) -> list[int]:
        record = await self.accounts.for_job(account.id)
        if record is None:
            raise NotFoundError(f"Account {account.id} no longer exists.")
        try:
            session = await self.api.session(account)
            await self.ingest.labels.sync(session, record)
            history_id = (record.sync_state.get(STATE_KEY) or {}).get("history_id")
            if not history_id:
                await self._snapshot(session, record, reason="first import")
            else:
                await self._delta(session, record, str(history_id))
        except GmailQuotaDeferred as deferred:
            await self._again_at(account.id, deferred.until)
            return []
        await self.accounts.synced(account.id)
        return []  # Gmail has no mailbox rows

    async def _snapshot(self, session: GmailSession, record: AccountRecord, *, reason: str) -> None:
        """The history id first, before anything is fetched: whatever arrives from here on, the next sync sees."""
        profile = await session.profile()
        await self.accounts.merge_state(record.id, STATE_KEY, {"history_id": profile.history_id,
                                                               "snapshot_at": self.time.now().isoformat()})
        await self.backfill.request(record.id, total=profile.messages_total, reason=reason)

    async def _delta(self, session: GmailSession, record: AccountRecord, history_id: str) -> None:
        try:
            changes = await session.history(history_id)
        except GmailNotFound:
            log.info("Gmail no longer keeps history %s of account %s; falling back to a backfill",
                     history_id, record.id)
            await self._snapshot(session, record, reason="history expired")
            return
        await self.ingest.delete(record, sorted(changes.deleted))
        added = list(changes.added)
        stored = await self.repo.stored(record.id, added)
        relabel = sorted(set(changes.relabelled) | stored)  # added again, or relabelled since the import read it
        new = [i for i in added if i not in stored]
        failed: set[str] = set()
        if len(new) > self.inline_fetch and self.queues is not None:
            await self.fetch_later(record.id, new)
        else:
            for start in range(0, len(new), FETCH_BATCH):
                outcome = await self.ingest.fetch_and_store(session, record, new[start:start + FETCH_BATCH])
                failed |= outcome.failed
                if outcome.deferred_until is not None:
                    raise GmailQuotaDeferred(outcome.deferred_until)
        if relabel:
            result = await self.ingest.enrich_existing(session, record, relabel)
            if result.gone:
                await self.ingest.delete(record, sorted(result.gone))
            if result.deferred_until is not None:
                raise GmailQuotaDeferred(result.deferred_until)
        if failed:
            # the history moves on; the messages that would not store are fetched again by a backfill pass
            await self.backfill.reopen(record.id, reason="messages from a sync would not store")
        if changes.history_id:
            await self.accounts.merge_state(record.id, STATE_KEY, {"history_id": changes.history_id})

    async def fetch_later(self, account_id: int, ids: Sequence[str]) -> None:
        assert self.queues is not None
        for start in range(0, len(ids), FETCH_BATCH):
            batch = list(ids[start:start + FETCH_BATCH])
            await self.queues.enqueue(GMAIL_FETCH_BATCH, account_id=account_id, ids=batch)

    async def _again_at(self, account_id: int, until: datetime) -> None:
        """The sync runs again when the account's minute is over."""
        if self.queues is None:
            return
        delay = max((until - self.time.now()).total_seconds(), 1.0)
        await self.queues.enqueue(SYNC_ACCOUNT, delay_seconds=delay, unique_key=f"gmail-sync-later:{account_id}",
                                  account_id=account_id)

    async def fetch_batch(self, account_id: int, ids: Sequence[str]) -> int:
        """The fetch job: store these ids; on a quota refusal the rest is put back for when the minute is over."""
        record = await self.accounts.for_job(account_id)
        if record is None or not record.is_active or record.status is not AccountStatus.OK:
            return 0
        try:
            session = await self.api.session(record.account)
            outcome = await self.ingest.fetch_and_store(session, record, ids)
        except GmailQuotaDeferred as deferred:
            outcome = BatchOutcome(deferred_until=deferred.until)
        except Exception as exc:
            if is_retryable(exc):
                raise
            log.warning("fetching Gmail messages of account %s stopped: %s", account_id, exc)
            return 0
        if outcome.deferred_until is not None and self.queues is not None:
            rest = [i for i in ids if i not in outcome.answered]
            delay = max((outcome.deferred_until - self.time.now()).total_seconds(), 1.0)
            await self.queues.enqueue(GMAIL_FETCH_BATCH, delay_seconds=delay, account_id=account_id, ids=rest)
        elif outcome.failed:
            await self.backfill.reopen(account_id, reason="messages from a sync would not store")
        return outcome.stored
