"""Calendar reminders (issue 33): when each coming occurrence is to be reminded of.

An invitation's VALARM says when (RFC 5545 §3.6.6: ACTION:DISPLAY with a TRIGGER relative to the start); an event
without one is reminded of 10 minutes before it starts. Each occurrence is reminded of once: the record is
claimed before anything is sent, so two workers never both remind. All-day events get no reminder (there is no
moment to be 10 minutes early for).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from icalendar import Calendar

from plmail.calendar.repos.reminders import ReminderRepository, UpcomingOccurrence
from plmail.db.database import Database

log = logging.getLogger(__name__)

DEFAULT_LEAD: Final = timedelta(minutes=10)
# How far ahead occurrences are looked at: the longest VALARM lead honoured (a day-before reminder).
LOOKAHEAD: Final = timedelta(days=1)
KEEP_RECORDS: Final = timedelta(days=2)


def alarm_lead(ical: str | None) -> timedelta | None:
    """How long before the start the event's own display alarm rings: of its VALARMs with ACTION:DISPLAY and a
    duration TRIGGER related to the start (at or before it), the one nearest the start. None without one."""
    if not ical:
        return None
    try:
        calendar = Calendar.from_ical(ical)
    except Exception:  # an unreadable invitation has no usable alarm; the default applies
        return None
    leads: list[timedelta] = []
    for event in calendar.walk("VEVENT"):
        if "RECURRENCE-ID" in event:  # a changed instance's alarm: the series' own alarm is the rule
            continue
        for alarm in event.walk("VALARM"):
            trigger = alarm.get("TRIGGER")
            if str(alarm.get("ACTION", "")).upper() != "DISPLAY" or trigger is None:
                continue
            value = getattr(trigger, "dt", None)
            related = str(getattr(trigger, "params", {}).get("RELATED", "START")).upper()
            if isinstance(value, timedelta) and related == "START" and timedelta(0) <= -value <= LOOKAHEAD:
                leads.append(-value)
    return min(leads) if leads else None


@dataclass(frozen=True, slots=True)
class DueReminder:
    event_id: int
    user_id: int
    title: str | None
    location: str | None
    starts_at: datetime


class CalendarReminders:
    def __init__(self, db: Database) -> None:
        self.repo = ReminderRepository(db)

    async def due(self, user_ids: Sequence[int], now: datetime) -> list[DueReminder]:
        """Occurrences not yet begun whose reminder time has come and that were not reminded of yet."""
        if not user_ids:
            return []
        found = []
        for occurrence in await self.repo.upcoming(user_ids, now, now + LOOKAHEAD):
            if occurrence.starts_at - self._lead(occurrence) <= now:
                found.append(DueReminder(occurrence.event_id, occurrence.user_id, occurrence.title,
                                         occurrence.location, occurrence.starts_at))
        return found

    @staticmethod
    def _lead(occurrence: UpcomingOccurrence) -> timedelta:
        lead = alarm_lead(occurrence.ical)
        return DEFAULT_LEAD if lead is None else lead

    async def claim(self, reminder: DueReminder) -> bool:
        return await self.repo.claim(reminder.event_id, reminder.starts_at)

    async def prune(self, now: datetime) -> int:
        return await self.repo.prune(now - KEEP_RECORDS)
