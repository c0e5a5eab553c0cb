"""GmailQuotaPacer: Gmail's quota is learnt, not configured.

Google allows each user a number of quota units per minute and says how many only when it refuses a
request. The pacer starts at 15,000, reads the real limit from the first refusal (a project created since
May 2026 has 6,000) and from then on paces every account at 85 % of it, five messages per request —
Google refuses what spends a minute's supply in one second — and, after every refusal at a limit it already
knew, runs slower for a while. A message counts 60 units: Google's table says 20, which is what a fetch
without content costs; raw and full measured 60. A learnt limit is forgotten after a day, so a raised one is
found again.

What an account has spent (as the next moment it may spend again) and when it was last refused live in the
database, so every worker draws from one quota. A refusal is nowhere an error on this path: the batch, the
import page or the sync that meets one is put back and runs when the account's minute is over
(`GmailQuotaDeferred.until`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

from plmail.domain.errors import PlmailError
from plmail.providers.gmail.repos.quota import GmailQuotaRepository, QuotaState

START_LIMIT = 15_000  # units per user and minute until Google names its own
SHARE = 0.85  # of the limit each account is paced at
MESSAGES_PER_REQUEST = 5
UNITS_PER_MESSAGE = 60  # raw or full fetch, measured
UNITS_LABEL_READ = 20  # a fetch without content (format=minimal)
UNITS_LIST = 5
UNITS_HISTORY = 2
UNITS_SMALL = 1  # profile, labels.list
UNITS_BATCH_MODIFY = 50
UNITS_LABEL_CREATE = 5
# Writing mail, as Google's table counts it.
UNITS_SEND = 100  # messages.send
UNITS_DRAFT_CREATE = 10
UNITS_DRAFT_UPDATE = 15
UNITS_DRAFT_DELETE = 10
UNITS_DRAFT_LIST = 5
UNITS_SEND_AS_LIST = 1
FORGET_AFTER = timedelta(days=1)
SLOWDOWN = 0.7  # after a refusal at a known limit, per refusal
MIN_FACTOR = 0.25
SLOW_FOR = timedelta(minutes=10)
MAX_INLINE_WAIT = 15.0  # seconds a call waits in place; longer, and its work is put back
DEFAULT_BLOCK = 60.0  # a refusal without Retry-After: the rest of a minute


class GmailQuotaDeferred(PlmailError):
    """The account's quota is spent for now; the work is to be done again at `until`. Not a failure."""

    def __init__(self, until: datetime) -> None:
        super().__init__(f"Gmail's quota for this account is used up until {until.isoformat(timespec='seconds')}.")
        self.until = until

    @property
    def retryable(self) -> bool:
        return True


class GmailTime(Protocol):
    """Where the pacer reads the time and how it waits; tests pass one that moves a fake's clock."""

    def now(self) -> datetime: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemTime:
    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


@dataclass(frozen=True, slots=True)
class Budget:
    limit: int  # units per minute Google allows (learnt or assumed)
    learned: bool
    units_per_minute: float  # what this account is paced at now

    def cost(self, units: int) -> timedelta:
        return timedelta(seconds=units * 60.0 / self.units_per_minute)


class GmailQuotaPacer:
    def __init__(self, repo: GmailQuotaRepository, time: GmailTime | None = None, *,
                 max_inline_wait: float = MAX_INLINE_WAIT) -> None:
        self.repo = repo
        self.time: GmailTime = time or SystemTime()
        self.max_inline_wait = max_inline_wait

    def budget_of(self, state: QuotaState, now: datetime) -> Budget:
        learned = (state.limit_units is not None and state.learned_at is not None
                   and now - state.learned_at < FORGET_AFTER)
        limit = state.limit_units if learned and state.limit_units else START_LIMIT
        factor = state.slow_factor if state.slow_until is not None and state.slow_until > now else 1.0
        return Budget(limit, learned, limit * SHARE * factor)

    async def budget(self, account_id: int, client_id: str) -> Budget:
        return self.budget_of(await self.repo.state(account_id, client_id), self.time.now())

    async def spend(self, account_id: int, client_id: str, units: int) -> None:
        """Wait until `units` may be spent now; a wait longer than a short pause raises GmailQuotaDeferred."""
        while True:
            now = self.time.now()
            state = await self.repo.state(account_id, client_id)
            budget = self.budget_of(state, now)
            # A burst of one five-message request may go at once; beyond it, requests are spread over the minute.
            tolerance = budget.cost(MESSAGES_PER_REQUEST * UNITS_PER_MESSAGE)
            if await self.repo.take(account_id, now, budget.cost(units), tolerance):
                return
            state = await self.repo.state(account_id, client_id)
            ready = max((t for t in (state.blocked_until,
                                     state.next_at - tolerance if state.next_at is not None else None) if t),
                        default=now)
            wait = (ready - now).total_seconds()
            if wait > self.max_inline_wait:
                raise GmailQuotaDeferred(ready)
            await self.time.sleep(max(wait, 0.001))

    async def rejected(self, account_id: int, client_id: str, *, limit_value: int | None,
                       retry_after: float | None) -> datetime:
        """Google refused a request: learn its limit, slow down when the limit was known already, and block the
        account until its minute is over. Returns when work may go on."""
        now = self.time.now()
        state = await self.repo.state(account_id, client_id)
        budget = self.budget_of(state, now)
        # Requests already in flight when the first refusal came are refused in the same minute: that is one
        # refusal, not a reason to slow down again.
        same_minute = state.blocked_until is not None and state.blocked_until > now
        known = budget.learned and (limit_value is None or limit_value == budget.limit) and not same_minute
        if limit_value is not None and limit_value > 0 and (not budget.learned or limit_value != budget.limit):
            await self.repo.learn(client_id, limit_value, now)
        slow_factor, slow_until = (state.slow_factor, state.slow_until)
        if known or (limit_value is None and not budget.learned and state.rejections > 0 and not same_minute):
            active = state.slow_until is not None and state.slow_until > now
            slow_factor = max(MIN_FACTOR, (state.slow_factor if active else 1.0) * SLOWDOWN)
            slow_until = now + SLOW_FOR
        until = now + timedelta(seconds=retry_after if retry_after and retry_after > 0 else DEFAULT_BLOCK)
        if same_minute and state.blocked_until is not None:
            until = max(until, state.blocked_until)
        await self.repo.rejected(account_id, now, until, slow_factor, slow_until)
        return until
