"""Which calendar an extracted event goes to: the user's default, unless an account says otherwise."""

from __future__ import annotations

import logging

from plmail.calendar.repos.objects import CalendarRepository

log = logging.getLogger(__name__)

DEFAULT_NAME = "Calendar"


class ExtractedEventCalendarResolver:
    """The calendar is the user's, not the account's: a person keeps one diary, and that a flight
    confirmation reached the work address rather than the private one is a fact about the message,
    not about the flight. Filing by account split one day across as many calendars as mailboxes.

    ``calendar.target_id`` on an account is the override for whoever wants one mailbox's bookings
    kept apart. It is a string in a jsonb bag, so it is checked against the user, never believed: a
    calendar since deleted, or someone else's, falls back to the default instead of raising or leaking.
    """

    def __init__(self, calendars: CalendarRepository) -> None:
        self.calendars = calendars

    async def resolve(self, user_id: int, account_id: int | None) -> int:
        if account_id is not None:
            target = _calendar_id(await self.calendars.account_target(user_id, account_id))
            if target is not None:
                owned = await self.calendars.owned(user_id, target)
                if owned is not None:
                    return owned.id
                log.info("account %s points at calendar %s, which is not user %s's; using the default",
                         account_id, target, user_id)
        return await self.calendars.ensure_default(user_id, DEFAULT_NAME)


def _calendar_id(raw: object) -> int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw if raw > 0 else None
    if isinstance(raw, str) and raw.strip().isdigit() and len(raw.strip()) < 12:
        return int(raw.strip())
    return None
