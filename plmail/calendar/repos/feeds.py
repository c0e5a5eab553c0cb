"""Calendar subscriptions (private read-only feeds) and what a feed's caching headers are made of."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg

from plmail.db.database import Database

_COLUMNS = """s.id, s.user_id, s.calendar_id, c.name AS calendar_name, s.selector, s.verifier_hash, s.created_at,
              s.last_fetched_at"""


@dataclass(frozen=True, slots=True)
class SubscriptionRow:
    id: int
    user_id: int
    calendar_id: int
    calendar_name: str
    selector: str
    verifier_hash: str
    created_at: datetime
    last_fetched_at: datetime | None


def _row(row: asyncpg.Record) -> SubscriptionRow:
    return SubscriptionRow(row["id"], row["user_id"], row["calendar_id"], row["calendar_name"], row["selector"],
                           row["verifier_hash"], row["created_at"], row["last_fetched_at"])


class CalendarFeedRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def add(self, user_id: int, calendar_id: int, selector: str, verifier_hash: str) -> int | None:
        """The new subscription's id, or None when the calendar is not the user's."""
        created = await self.db.fetchval(
            """INSERT INTO calendar_subscription (user_id, calendar_id, selector, verifier_hash, created_at)
               SELECT c.user_id, c.id, $3, $4, now() FROM calendar c WHERE c.id = $2 AND c.user_id = $1
               RETURNING id""",
            user_id, calendar_id, selector, verifier_hash,
        )
        return int(created) if created is not None else None

    async def for_user(self, user_id: int) -> list[SubscriptionRow]:
        rows = await self.db.fetch(
            f"""SELECT {_COLUMNS} FROM calendar_subscription s JOIN calendar c ON c.id = s.calendar_id
                 WHERE s.user_id = $1 AND s.revoked_at IS NULL ORDER BY c.is_default DESC, c.id, s.id""",
            user_id,
        )
        return [_row(r) for r in rows]

    async def revoke(self, user_id: int, subscription_id: int) -> bool:
        status = await self.db.execute(
            "UPDATE calendar_subscription SET revoked_at = now() WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL",
            subscription_id, user_id,
        )
        return status.endswith(" 1")

    async def by_selector(self, selector: str) -> SubscriptionRow | None:
        """The live subscription a URL's selector names. Not scoped to a user: the token is the credential,
        and its verifier is checked by the caller."""
        row = await self.db.fetchrow(
            f"""SELECT {_COLUMNS} FROM calendar_subscription s JOIN calendar c ON c.id = s.calendar_id
                 WHERE s.selector = $1 AND s.revoked_at IS NULL AND c.user_id = s.user_id
                   AND NOT EXISTS (SELECT 1 FROM app_user u WHERE u.id = s.user_id AND u.disabled_at IS NOT NULL)""",
            selector,
        )
        return _row(row) if row is not None else None

    async def fetched(self, subscription_id: int) -> None:
        await self.db.execute("UPDATE calendar_subscription SET last_fetched_at = now() WHERE id = $1",
                              subscription_id)

    async def watermark(self, user_id: int, calendar_id: int) -> tuple[int, datetime | None]:
        """The newest change to the calendar or any of its events (a delete included), and when it was made."""
        row = await self.db.fetchrow(
            """SELECT coalesce(max(sequence), 0) AS sequence, max(created_at) AS changed_at FROM calendar_change
                WHERE user_id = $1 AND calendar_id = $2""",
            user_id, calendar_id,
        )
        assert row is not None
        return int(row["sequence"]), row["changed_at"]
