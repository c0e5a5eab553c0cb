"""The Gmail first import (the backfill): the inbox first, by name, then the whole mailbox including spam and
trash, one listing request per page, its page token kept on the account between jobs.

The history id the sync keeps means only "incremental sync resumes here", never "the history is in": that is
the backfill's own state, with its own cooldown of an hour and at most 24 attempts. Reading a present history
id as "fully synced" once stranded an account with whatever its first run happened to fetch.

A page lists up to 500 ids and fetches up to 100 of those neither stored nor noted; the token moves on only
when every id of the page has an answer. A page whose messages keep failing is passed after five tries; the
pass then ends incomplete and another starts after the cooldown. A pass in which every id has an answer ends
the backfill.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from plmail.db.database import Database
from plmail.db.repos.account_admin import AccountAdminRepository, AccountRecord
from plmail.db.repos.gmail_messages import GmailMessageRepository
from plmail.domain.enums import ProviderKind
from plmail.domain.errors import NotFoundError
from plmail.domain.models import Account
from plmail.domain.moments import parse_moment
from plmail.domain.providers import ImportPage
from plmail.providers.gmail.client import LIST_PAGE, GmailApi, GmailApiError
from plmail.providers.gmail.ingest import FETCH_BATCH, GmailMessageIngest
from plmail.providers.gmail.pacer import GmailQuotaDeferred, GmailTime, SystemTime

log = logging.getLogger(__name__)

STATE_KEY = "gmail_backfill"
BACKFILL_COOLDOWN = timedelta(hours=1)
BACKFILL_MAX_ATTEMPTS = 24
PAGE_TRIES = 5
INBOX, EVERYTHING = "inbox", "all"
PENDING, DONE, GIVEN_UP = "pending", "done", "given_up"


@dataclass(frozen=True, slots=True)
class BackfillState:
    status: str = PENDING
    phase: str = INBOX
    token: str | None = None
    in_pass: bool = False  # a pass has started and not ended
    attempts: int = 0  # passes started
    ran_at: datetime | None = None  # when the last pass started
    ended_at: datetime | None = None  # when the last incomplete pass ended: the cooldown runs from here
    incomplete: bool = False  # this pass passed a page it could not finish
    page_tries: int = 0
    total: int = 0  # Gmail's messagesTotal when the pass started (spam, trash and chats included)
    reason: str = ""

    @classmethod
    def of(cls, record: AccountRecord) -> BackfillState | None:
        raw = record.sync_state.get(STATE_KEY)
        if not isinstance(raw, dict):
            return None
        return cls(
            status=str(raw.get("status") or PENDING), phase=str(raw.get("phase") or INBOX),
            token=str(raw["token"]) if raw.get("token") else None, in_pass=bool(raw.get("in_pass")),
            attempts=int(raw.get("attempts") or 0), ran_at=parse_moment(raw.get("ran_at")),
            ended_at=parse_moment(raw.get("ended_at")), incomplete=bool(raw.get("incomplete")),
            page_tries=int(raw.get("page_tries") or 0), total=int(raw.get("total") or 0),
            reason=str(raw.get("reason") or ""),
        )

    def as_json(self) -> dict[str, Any]:
        return {"status": self.status, "phase": self.phase, "token": self.token, "in_pass": self.in_pass,
                "attempts": self.attempts, "ran_at": self.ran_at.isoformat() if self.ran_at else None,
                "ended_at": self.ended_at.isoformat() if self.ended_at else None, "incomplete": self.incomplete,
                "page_tries": self.page_tries, "total": self.total, "reason": self.reason}

    def cooling_until(self) -> datetime | None:
        """When the next pass may start, if an incomplete one ended less than the cooldown ago."""
        if self.in_pass or self.ended_at is None or self.attempts == 0:
            return None
        return self.ended_at + BACKFILL_COOLDOWN


class GmailBackfillState:
    """Reads and writes the backfill's state on the account (`sync_state.gmail_backfill`)."""

    def __init__(self, accounts: AccountAdminRepository, time: GmailTime) -> None:
        self.accounts = accounts
        self.time = time

    async def get(self, account_id: int) -> BackfillState | None:
        record = await self.accounts.for_job(account_id)
        return BackfillState.of(record) if record is not None else None

    async def put(self, account_id: int, state: BackfillState) -> None:
        await self.accounts.merge_state(account_id, STATE_KEY, state.as_json())

    async def request(self, account_id: int, *, total: int, reason: str) -> None:
        """A backfill is needed (a new account, or an expired history id): a fresh pass, attempts from zero."""
        await self.put(account_id, BackfillState(total=total, reason=reason))

    async def reopen(self, account_id: int, *, reason: str) -> None:
        """Some messages did not store: make sure a pass comes that fetches them again, without restarting one
        that is under way."""
        state = await self.get(account_id)
        if state is None or state.status != PENDING:
            await self.put(account_id, BackfillState(total=state.total if state else 0, reason=reason))
        elif state.in_pass:
            await self.put(account_id, replace(state, incomplete=True))

    async def needed(self, account_id: int) -> bool:
        state = await self.get(account_id)
        return state is None or state.status == PENDING


class GmailImportProbe:
    """Importing while the backfill is not done; in doubt (no state yet) importing too. A backfill whose last
    pass was incomplete counts as importing through its cooldown: finished up to an hour late, because the
    opposite mistake would queue a whole mailbox as live mail."""

    kind = ProviderKind.GMAIL

    def __init__(self, state: GmailBackfillState) -> None:
        self.state = state

    async def is_importing(self, account_id: int) -> bool:
        return await self.state.needed(account_id)


class GmailHistoryImporter:
    kind = ProviderKind.GMAIL

    def __init__(self, db: Database, accounts: AccountAdminRepository, api: GmailApi, ingest: GmailMessageIngest,
                 state: GmailBackfillState, time: GmailTime | None = None) -> None:
        self.accounts = accounts
        self.api = api
        self.ingest = ingest
        self.state = state
        self.time: GmailTime = time or SystemTime()
        self.repo = GmailMessageRepository(db)

    async def has_history(self, account_id: int) -> bool:
        state = await self.state.get(account_id)
        if state is None or state.status != PENDING:
            return False
        cooling = state.cooling_until()
        return cooling is None or cooling <= self.time.now()

    async def counts(self, account_id: int) -> tuple[int, int]:
        stored, skipped = await self.repo.counts(account_id)
        state = await self.state.get(account_id)
        return stored + skipped, max(state.total if state else 0, stored + skipped)

    async def import_page(self, account: Account) -> ImportPage:
        record = await self.accounts.for_job(account.id)
        if record is None:
            raise NotFoundError(f"Account {account.id} no longer exists.")
        state = BackfillState.of(record)
        if state is None or state.status != PENDING:
            return ImportPage()
        now = self.time.now()
        session = await self.api.session(account)
        try:
            if not state.in_pass:
                cooling = state.cooling_until()
                if cooling is not None and cooling > now:
                    return ImportPage()  # the next sync after the cooldown starts the next pass
                if state.attempts >= BACKFILL_MAX_ATTEMPTS:
                    await self.state.put(account.id, replace(state, status=GIVEN_UP))
                    log.warning("Gmail backfill of account %s gave up after %s passes", account.id, state.attempts)
                    return ImportPage()
                profile = await session.profile()
                state = replace(state, in_pass=True, attempts=state.attempts + 1, ran_at=now, incomplete=False,
                                phase=INBOX, token=None, page_tries=0, total=profile.messages_total)
                await self.state.put(account.id, state)
            return await self._page(session, record, state)
        except GmailQuotaDeferred as deferred:
            return ImportPage(folder=state.phase, more=True, wait_until=deferred.until)

    async def _page(self, session: Any, record: AccountRecord, state: BackfillState) -> ImportPage:
        inbox = state.phase == INBOX
        try:
            listed = await session.list_page(label_ids=("INBOX",) if inbox else (), include_spam_trash=not inbox,
                                             page_token=state.token, max_results=LIST_PAGE)
        except GmailApiError as exc:
            if state.token is not None and exc.status == 400:  # a page token Gmail no longer knows
                await self.state.put(record.id, replace(state, token=None, page_tries=0))
                return ImportPage(folder=state.phase, more=True)
            raise
        known = await self.repo.known(record.id, listed.ids)
        missing = [i for i in listed.ids if i not in known]
        if missing:
            outcome = await self.ingest.fetch_and_store(session, record, missing[:FETCH_BATCH])
            page = ImportPage(stored=outcome.stored + outcome.skipped, failed=len(outcome.failed),
                              folder=state.phase, more=True, wait_until=outcome.deferred_until)
            if outcome.deferred_until is not None:
                return page
            if outcome.failed:
                tries = state.page_tries + 1
                if tries < PAGE_TRIES:
                    await self.state.put(record.id, replace(state, page_tries=tries))
                    return page
                # the page's failing messages cost only themselves: this pass moves past them
                state = replace(state, incomplete=True)
            elif len(missing) > FETCH_BATCH:
                return page
            return replace(page, more=await self._advance(record.id, state, listed.next_token))
        return ImportPage(folder=state.phase, more=await self._advance(record.id, state, listed.next_token))

    async def _advance(self, account_id: int, state: BackfillState, next_token: str | None) -> bool:
        """Move to the next page; returns whether the backfill has more to do now."""
        if next_token is not None:
            await self.state.put(account_id, replace(state, token=next_token, page_tries=0))
            return True
        if state.phase == INBOX:
            await self.state.put(account_id, replace(state, phase=EVERYTHING, token=None, page_tries=0))
            return True
        now = self.time.now()
        if state.incomplete:
            await self.state.put(account_id, replace(state, in_pass=False, phase=INBOX, token=None, page_tries=0,
                                                     ended_at=now))
            log.info("Gmail backfill pass %s of account %s ended incomplete; the next starts after the cooldown",
                     state.attempts, account_id)
            return False
        await self.state.put(account_id, replace(state, status=DONE, in_pass=False, token=None, page_tries=0,
                                                 ended_at=now))
        return False
