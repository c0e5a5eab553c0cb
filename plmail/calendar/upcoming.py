""""Happening soon": the next days of the calendar beside the inbox, each row leading to the mail it came from."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from plmail.calendar.repos.events import CalendarEventRepository, RangeEntry
from plmail.calendar.repos.links import EventSourceLinkRepository

SOON_DAYS = 14
SOON_ROWS = 12


@dataclass(frozen=True, slots=True)
class SoonEntry:
    entry: RangeEntry
    message_id: int | None  # the earliest message applied to the event; None for one a person made
    thread_id: int | None


class UpcomingEvents:
    def __init__(self, events: CalendarEventRepository, links: EventSourceLinkRepository) -> None:
        self.events = events
        self.links = links

    async def soon(self, user_id: int, now: datetime, *, days: int = SOON_DAYS, limit: int = SOON_ROWS
                   ) -> list[SoonEntry]:
        """Occurrences still to end in the next ``days`` days, soonest first, cancelled ones left out."""
        found = [e for e in await self.events.between(user_id, now, now + timedelta(days=days), limit=limit * 4)
                 if not e.cancelled][:limit]
        sources = await self.links.first_sources(user_id, [e.event_id for e in found])
        return [SoonEntry(e, *sources.get(e.event_id, (None, None))) for e in found]
