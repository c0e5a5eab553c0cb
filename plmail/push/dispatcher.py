"""Delivering push messages off the request path, driven by the change feed (`mail/change_feed.py`).

One task per process that runs workers. It listens to every committed change-log batch (PostgreSQL NOTIFY, so
changes made by any process arrive), finds the users with live subscriptions, reads their states and sends each
verified subscription a StateChange with the states that moved for the types it asked for. What was sent last is
kept in the row and each push is claimed there, so two processes never push the same states twice, and a
subscription gets at most one push a second: what arrives meanwhile goes out once the second is over, as the
latest states. A new subscription gets its PushVerification and nothing else until the client has set the code.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from plmail.aio import wait_at_most
from plmail.calendar.reminders import CalendarReminders
from plmail.db.database import Database
from plmail.db.repos.jmap_auth import AppPasswordRepository
from plmail.domain.enums import JmapObjectType
from plmail.domain.push import (
    PUSH_INTERVAL,
    PUSHABLE_TYPES,
    PushedStates,
    PushOutcome,
    PushSubscriptionRow,
)
from plmail.mail.change_feed import CLOSED, RESYNC, ChangeFeed
from plmail.mail.states import ChangeLog
from plmail.push.browser import BrowserPushService
from plmail.push.repos.subscriptions import BrowserPushRepository, PushSubscriptionRepository
from plmail.push.sender import WebPushSender
from plmail.push.subscriptions import user_states

log = logging.getLogger(__name__)

SWEEP_SECONDS = 60.0  # every user looked at again (and expired subscriptions removed), whatever was missed
MAX_BACKOFF_SECONDS = 3600.0
CONCURRENT_SENDS = 16
RETRY_SECONDS = 5.0
_RESTART_DELAY_MAX = 30.0


def state_change(changed: PushedStates) -> dict[str, Any]:
    """The StateChange object (RFC 8620 §7.1): accountId -> {type: state}."""
    by_account: dict[str, dict[str, str]] = {}
    for key, state in sorted(changed.items()):
        account_id, _, kind = key.rpartition("/")
        by_account.setdefault(account_id, {})[kind] = state
    return {"@type": "StateChange", "changed": by_account}


def backoff_seconds(failures: int, retry_after: float | None) -> float:
    """Retry-After when the push service gave one; otherwise 2, 4, 8 … seconds, at most an hour."""
    if retry_after is not None:
        return min(max(retry_after, 1.0), MAX_BACKOFF_SECONDS)
    return min(2.0 ** (failures + 1), MAX_BACKOFF_SECONDS)


class PushDispatcher:
    def __init__(self, db: Database, feed: ChangeFeed, changes: ChangeLog, sender: WebPushSender,
                 browser: BrowserPushService | None = None) -> None:
        self.repo = PushSubscriptionRepository(db)
        self.reminders = CalendarReminders(db)
        self.browser = browser
        self.browser_repo = BrowserPushRepository(db)
        self.accounts = AppPasswordRepository(db)
        self.feed = feed
        self.changes = changes
        self.sender = sender
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._due: dict[int, float] = {}  # user id -> loop time to look at the user again
        self._sends = asyncio.Semaphore(CONCURRENT_SENDS)
        self._contact: str | None = None

    def start(self) -> None:
        if self._task is None or self._task.done():
            self._stopping = False
            self._task = asyncio.create_task(self._run(), name="push-dispatcher")

    async def stop(self) -> None:
        """Python 3.11's wait_for can swallow a cancellation that lands as its queue.get() completes (fixed in
        3.12), so the loop also checks a flag, and the cancellation is repeated until the task has ended."""
        self._stopping = True
        task, self._task = self._task, None
        while task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task}, timeout=1.0)
        if task is not None and not task.cancelled():
            with contextlib.suppress(Exception):
                task.exception()
        await self.sender.close()

    async def _run(self) -> None:
        delay = 1.0
        while True:
            try:
                if await self._serve() or self._stopping:
                    return
                delay = 1.0
            except asyncio.CancelledError:
                raise
            except Exception:  # the database may be away for a moment: look again, and miss nothing (a sweep)
                log.exception("push delivery failed; starting again in %.0f s", delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, _RESTART_DELAY_MAX)

    async def _serve(self) -> bool:
        """Until the feed closes (True); an error propagates and the loop starts again with a sweep."""
        loop = asyncio.get_running_loop()
        async with self.feed.subscribe_all() as queue:
            next_sweep = 0.0
            while not self._stopping:
                now = loop.time()
                users: set[int] = set()
                if now >= next_sweep:
                    await self.repo.delete_expired()
                    users.update(await self.repo.users_with_subscriptions())
                    next_sweep = now + SWEEP_SECONDS
                users.update(u for u, at in self._due.items() if at <= now)
                for user in users:
                    self._due.pop(user, None)
                if users:
                    await self._push_users(users)
                wait = min([next_sweep, *self._due.values()]) - loop.time()
                try:
                    item = await wait_at_most(queue.get(), max(wait, 0.0))
                except TimeoutError:
                    continue
                items = [item]
                while not queue.empty():  # a burst of batches is looked at once
                    items.append(queue.get_nowait())
                if CLOSED in items or self._stopping:
                    return True
                if RESYNC in items:
                    next_sweep = 0.0
                    continue
                for user in await self.repo.users_with_subscriptions(items):
                    self._due[user] = 0.0
        return True

    def _look_again(self, user_id: int, at: datetime) -> None:
        delay = max((at - datetime.now(UTC)).total_seconds(), 0.0) + 0.005
        when = asyncio.get_running_loop().time() + delay
        self._due[user_id] = min(self._due.get(user_id, when), when)

    async def _push_users(self, users: Iterable[int]) -> None:
        await asyncio.gather(*(self._push_user_safely(u) for u in users))

    async def _push_user_safely(self, user_id: int) -> None:
        """One user's failure (a bug, a lost connection) is retried later and never holds up the others."""
        try:
            await self._push_user(user_id)
        except Exception:
            log.exception("pushing to the devices of user %s failed; trying again shortly", user_id)
            self._due[user_id] = asyncio.get_running_loop().time() + RETRY_SECONDS

    async def _push_user(self, user_id: int) -> None:
        subscriptions = await self.repo.live_for_users([user_id])
        if not subscriptions:
            return
        browsers = [s for s in subscriptions if s.browser]
        if browsers and self.browser is not None:
            await self._new_mail(user_id, browsers)
        subscriptions = [s for s in subscriptions if not s.browser]
        waiting = [s for s in subscriptions if not s.verified]
        verified = [s for s in subscriptions if s.verified]
        kinds = [k for k in PUSHABLE_TYPES if any(s.wants(k) for s in verified)]
        states = await user_states(self.changes, self.accounts, user_id, kinds) if kinds else {}
        await asyncio.gather(*(self._verify(s) for s in waiting if s.verification_sent_at is None),
                             *(self._state_change(s, states) for s in verified))

    async def _new_mail(self, user_id: int, browsers: list[PushSubscriptionRow]) -> None:
        """A browser is told of each new message once (the newest per conversation), not of state changes. A
        push service answering 429 or 5xx holds the browser back (Retry-After, else 2, 4, 8 … s) and the
        notices not delivered are announced again after it, as the JMAP path keeps its states pending."""
        assert self.browser is not None
        newest = await self.browser_repo.newest_message_id(user_id)
        preference = await self.browser_repo.preference(user_id)
        locale = await self.browser_repo.locale(user_id)
        now = datetime.now(UTC)
        for subscription in browsers:
            before = subscription.notified_message_id
            if before is not None and before >= newest:
                continue
            if subscription.failures and subscription.next_push_at > now:  # backing off: come back then
                self._look_again(user_id, subscription.next_push_at)
                continue
            notices = await self.browser.notices(user_id, before or 0, newest, preference)
            if not await self.browser_repo.claim_notified(subscription.id, before, newest):
                continue  # another process took this round
            announced = before or 0
            for notice in reversed(notices):  # oldest first, so the newest ends on top
                payload = self.browser.payload(subscription, notice, preference, locale)
                if not await self._deliver(subscription, payload, restore_states=None, verification=False,
                                           urgency="high"):
                    # This notice and the newer ones wait for the back-off to end (a gone browser is deleted).
                    await self.browser_repo.rewind_notified(subscription.id, newest, announced)
                    break
                announced = notice.message_id

    async def remind(self, now: datetime | None = None) -> int:
        """Calendar reminders to the browsers (run each minute by a cron job): each occurrence whose reminder
        time has come, once (recorded before it is sent), unless the user turned reminders off or it is their
        quiet hours. Returns how many occurrences were reminded of."""
        if self.browser is None:
            return 0
        now = now or datetime.now(UTC)
        await self.reminders.prune(now)
        sent = 0
        for reminder in await self.reminders.due(await self.browser_repo.users_with_browsers(), now):
            if not await self.reminders.claim(reminder):
                continue  # another worker reminded of it
            preference = await self.browser_repo.preference(reminder.user_id)
            if not preference.reminders or await self.browser.quiet(reminder.user_id, preference, now):
                continue
            payload = self.browser.reminder_payload(reminder, await self.browser.zone(reminder.user_id),
                                                    await self.browser_repo.locale(reminder.user_id))
            browsers = [s for s in await self.repo.live_for_users([reminder.user_id]) if s.browser]
            await asyncio.gather(*(self._deliver(s, payload, restore_states=None, verification=False,
                                                 urgency="high") for s in browsers))
            sent += 1
        return sent

    async def contact(self) -> str:
        """VAPID's `sub` (RFC 8292 §2.1): who runs this server, for the push service to reach: the first
        administrator's address."""
        if self._contact is None:
            address = await self.repo.contact_address()
            self._contact = f"mailto:{address}" if address else "mailto:postmaster@localhost"
        return self._contact

    async def _verify(self, subscription: PushSubscriptionRow) -> None:
        if not await self.repo.claim_verification(subscription.id):
            return
        payload = {"@type": "PushVerification", "pushSubscriptionId": str(subscription.id),
                   "verificationCode": subscription.verification_code}
        await self._deliver(subscription, payload, restore_states=None, verification=True)

    async def _state_change(self, subscription: PushSubscriptionRow, states: PushedStates) -> None:
        wanted = {k: v for k, v in states.items() if subscription.wants(JmapObjectType(k.rpartition("/")[2]))}
        claimed, before, next_at = await self.repo.claim_push(subscription.id, wanted,
                                                              PUSH_INTERVAL.total_seconds())
        if next_at is not None:
            self._look_again(subscription.user_id, next_at)
        if not claimed:
            return
        changed = {k: v for k, v in wanted.items() if before.get(k) != v}
        await self._deliver(subscription, state_change(changed), restore_states=before, verification=False)

    async def _deliver(self, subscription: PushSubscriptionRow, payload: dict[str, Any], *,
                       restore_states: PushedStates | None, verification: bool, urgency: str = "normal") -> bool:
        """True when the push service took the message."""
        async with self._sends:
            result = await self.sender.send(subscription, payload, contact=await self.contact(), urgency=urgency)
        if result.outcome is PushOutcome.DELIVERED:
            if subscription.failures:
                await self.repo.delivered(subscription.id)
            return True
        if result.outcome is PushOutcome.GONE:
            log.info("push subscription %s removed: its push service answered %s", subscription.id, result.status)
            await self.repo.destroy(subscription.id)
        else:
            seconds = backoff_seconds(subscription.failures, result.retry_after)
            at = await self.repo.hold_back(subscription.id, seconds, restore_states=restore_states,
                                           verification=verification)
            if at is not None:
                self._look_again(subscription.user_id, at)
        return False
