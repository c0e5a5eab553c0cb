"""A user's "not an event", remembered, so that no replay or re-send brings back what they dismissed."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from plmail.calendar.repos.events import CalendarEventRepository
from plmail.calendar.repos.links import EventSourceLinkRepository
from plmail.calendar.repos.objects import SuppressionRepository
from plmail.calendar.sources import EventSource
from plmail.db.database import Database
from plmail.domain.errors import NotFoundError


def suppression_hash(dedup_key: str) -> str:
    """Keyed by sha256(dedup key), not by event id: the refusal must outlive the deleted event, and it
    must catch the next message about the same booking before an event exists to point at."""
    return hashlib.sha256(dedup_key.encode("utf-8")).hexdigest()


_ACCEPTED_PREFIX = "proposal-"


def accepted_uid(dedup_key_hash: str) -> str:
    """The UID of the event an accepted proposal becomes: found again by it, so a rerun offers nothing twice."""
    return f"{_ACCEPTED_PREFIX}{dedup_key_hash}"


def accepted_hash(uid: str) -> str | None:
    """The proposal's dedup hash carried in an accepted event's UID (it has no source links to suppress)."""
    return uid[len(_ACCEPTED_PREFIX):] if uid.startswith(_ACCEPTED_PREFIX) else None


class EventSuppressor:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.suppressions = SuppressionRepository(db)
        self.events = CalendarEventRepository(db)
        self.links = EventSourceLinkRepository(db)

    async def suppressed_keys(self, user_id: int, dedup_keys: Sequence[str]) -> set[str]:
        """Which of these dedup keys the user has dismissed."""
        by_hash = {suppression_hash(key): key for key in dedup_keys}
        found = await self.suppressions.suppressed(user_id, list(by_hash))
        return {by_hash[h] for h in found}

    async def suppress_keys(self, user_id: int, dedup_keys: Sequence[str]) -> int:
        return await self.suppressions.add(user_id, [suppression_hash(key) for key in dedup_keys])

    async def not_an_event(self, user_id: int, event_id: int) -> int:
        """Suppress every key the event's sources were read under, then remove the event: the user said
        it is not one, and the suppression (not the row) is what keeps it from coming back."""
        async with self.db.transaction():
            event = await self.events.owned(user_id, event_id)
            if event is None:
                raise NotFoundError("No such event.")
            # An accepted proposal's evidence link is keyed by its event's UID, not by anything mail claims.
            keys = [key for key in await self.links.dedup_keys(user_id, event_id) if accepted_hash(key) is None]
            added = await self.suppress_keys(user_id, keys)
            proposal = accepted_hash(event.uid) if event.values.source == EventSource.ACCEPTED_PROPOSAL else None
            if proposal is not None:
                added += await self.suppressions.add(user_id, [proposal])
            await self.events.delete(user_id, event_id)
        return added
