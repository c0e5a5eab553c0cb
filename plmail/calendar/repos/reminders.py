"""Rows for calendar reminders: the occurrences about to start of the given users' events, with the iCalendar
text their invitation came in (for its VALARMs), and the record of each occurrence reminded of."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from plmail.db.database import Database


@dataclass(frozen=True, slots=True)
class UpcomingOccurrence:
    event_id: int
    user_id: int
    title: str | None
    location: str | None
    starts_at: datetime
    ical: str | None  # the latest applied invitation's iCalendar text; None for an event made in plmail


class ReminderRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def upcoming(self, user_ids: Sequence[int], after: datetime, until: datetime
                       ) -> list[UpcomingOccurrence]:
        """Timed occurrences starting in (after, until] not reminded of yet; cancelled ones and invitations the
        user declined left out."""
        rows = await self.db.fetch(
            """SELECT e.id, e.user_id, coalesce(o.title, e.title) AS title,
                      coalesce(o.location, e.location) AS location, o.starts_at,
                      (SELECT l.payload ->> 'ical' FROM event_source_link l
                        WHERE l.event_id = e.id AND l.applied AND l.extractor = 'ics'
                        ORDER BY l.updated_at DESC LIMIT 1) AS ical
                 FROM calendar_event_occurrence o
                 JOIN calendar_event e ON e.id = o.event_id
                 JOIN calendar c ON c.id = o.calendar_id AND c.user_id = e.user_id
                WHERE e.user_id = ANY($1::integer[]) AND o.starts_at > $2 AND o.starts_at <= $3
                  AND NOT e.is_all_day AND NOT o.cancelled AND e.status <> 'cancelled'
                  AND e.my_participation IS DISTINCT FROM 'declined'
                  AND NOT EXISTS (SELECT 1 FROM calendar_reminder_sent s
                                   WHERE s.event_id = e.id AND s.starts_at = o.starts_at)
                ORDER BY o.starts_at, e.id""",
            list(user_ids), after, until)
        return [UpcomingOccurrence(r["id"], r["user_id"], r["title"], r["location"], r["starts_at"], r["ical"])
                for r in rows]

    async def claim(self, event_id: int, starts_at: datetime) -> bool:
        """Records the reminder of this occurrence; False when one was recorded already (by any process)."""
        status = await self.db.execute(
            """INSERT INTO calendar_reminder_sent (event_id, starts_at) VALUES ($1, $2)
               ON CONFLICT DO NOTHING""", event_id, starts_at)
        return status.endswith(" 1")

    async def prune(self, before: datetime) -> int:
        status = await self.db.execute("DELETE FROM calendar_reminder_sent WHERE starts_at < $1", before)
        return int(status.split()[-1])
