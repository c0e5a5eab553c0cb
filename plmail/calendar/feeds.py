"""Private, read-only subscription feeds: a phone's calendar app shows plmail's calendar from one URL.

The URL carries a long random token: a selector the row is found by, and a verifier of which only the
SHA-256 is stored and compared in constant time, so neither a copy of the database nor a stopwatch yields a
working URL. A wrong, unknown or revoked token is a 404 like any other missing page. Feeds answer
conditional requests: the ETag and Last-Modified come from the calendar's change log, which also sees
deletions (an updated_at could not).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime

from plmail.calendar.ics_files import calendar_ics
from plmail.calendar.repos.events import CalendarEventRepository
from plmail.calendar.repos.feeds import CalendarFeedRepository, SubscriptionRow
from plmail.calendar.repos.objects import CalendarRepository
from plmail.calendar.sources import is_trusted_source
from plmail.db.repos.users import UserRepository
from plmail.domain.errors import NotFoundError

SELECTOR_BYTES = 12  # 16 URL-safe characters
VERIFIER_BYTES = 32  # 43 URL-safe characters: 256 bits nobody guesses
SELECTOR_CHARS = 16
MAX_FEED_EVENTS = 20_000


def _digest(verifier: str) -> str:
    return hashlib.sha256(verifier.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class NewSubscription:
    id: int
    token: str  # shown once; only its verifier's hash is kept


@dataclass(frozen=True, slots=True)
class Feed:
    body: bytes
    etag: str
    last_modified: datetime | None


@dataclass(frozen=True, slots=True)
class FeedVersion:
    """What a conditional request is answered from, read before (and without) building the body."""

    subscription: SubscriptionRow
    etag: str
    last_modified: datetime | None


class CalendarFeeds:
    def __init__(self, feeds: CalendarFeedRepository, calendars: CalendarRepository, events: CalendarEventRepository,
                 users: UserRepository) -> None:
        self.feeds = feeds
        self.calendars = calendars
        self.events = events
        self.users = users

    async def subscribe(self, user_id: int, calendar_id: int) -> NewSubscription:
        selector = secrets.token_urlsafe(SELECTOR_BYTES)[:SELECTOR_CHARS]
        verifier = secrets.token_urlsafe(VERIFIER_BYTES)
        created = await self.feeds.add(user_id, calendar_id, selector, _digest(verifier))
        if created is None:
            raise NotFoundError("No such calendar.")
        return NewSubscription(created, selector + verifier)

    async def subscriptions(self, user_id: int) -> list[SubscriptionRow]:
        return await self.feeds.for_user(user_id)

    async def revoke(self, user_id: int, subscription_id: int) -> None:
        if not await self.feeds.revoke(user_id, subscription_id):
            raise NotFoundError("No such subscription.")

    async def version(self, token: str) -> FeedVersion:
        """The subscription a token opens, and its feed's validators; NotFoundError for any token that does
        not open one, whatever the reason."""
        if len(token) <= SELECTOR_CHARS or len(token) > 200:
            raise NotFoundError("No such feed.")
        found = await self.feeds.by_selector(token[:SELECTOR_CHARS])
        presented = _digest(token[SELECTOR_CHARS:])
        # Compared even when nothing was found, so a missing selector and a wrong verifier take as long.
        stored = found.verifier_hash if found is not None else "0" * 64
        if not hmac.compare_digest(presented.encode(), stored.encode()) or found is None:
            raise NotFoundError("No such feed.")
        sequence, changed_at = await self.feeds.watermark(found.user_id, found.calendar_id)
        return FeedVersion(found, f'"{found.calendar_id}-{sequence}"', changed_at)

    async def body(self, version: FeedVersion) -> Feed:
        subscription = version.subscription
        user = await self.users.by_id(subscription.user_id)
        zone_name = user.time_zone if user is not None else "UTC"
        events = await self.events.in_calendar(subscription.user_id, subscription.calendar_id,
                                               limit=MAX_FEED_EVENTS)
        await self.feeds.fetched(subscription.id)
        # The seed: an untrusted source's event is never pushed outward; a feed is read by other calendars.
        events = [e for e in events if is_trusted_source(e.values.source)]
        body = calendar_ics(events, name=subscription.calendar_name or "plmail", user_zone=zone_name)
        return Feed(body, version.etag, version.last_modified)
