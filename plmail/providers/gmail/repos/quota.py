"""The Gmail quota pacer's shared state: the limit Google named per OAuth client, and per account the next
moment it may spend, when it was last rejected and how much slower it runs since.

Raw SQL because taking units must be one conditional UPDATE: two workers pacing the same account must not
both see the same free moment.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from plmail.db.database import Database


@dataclass(frozen=True, slots=True)
class QuotaState:
    limit_units: int | None  # learned, or None
    learned_at: datetime | None
    next_at: datetime | None
    blocked_until: datetime | None
    rejected_at: datetime | None
    rejections: int
    slow_factor: float
    slow_until: datetime | None


class GmailQuotaRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def state(self, account_id: int, client_id: str) -> QuotaState:
        row = await self.db.fetchrow(
            """SELECT l.limit_units, l.learned_at, q.next_at, q.blocked_until, q.rejected_at,
                      coalesce(q.rejections, 0) AS rejections, coalesce(q.slow_factor, 1.0) AS slow_factor,
                      q.slow_until
                 FROM (SELECT 1) AS one
                 LEFT JOIN gmail_quota_limit l ON l.client_id = $2
                 LEFT JOIN gmail_quota_account q ON q.account_id = $1""",
            account_id, client_id,
        )
        assert row is not None
        return QuotaState(row["limit_units"], row["learned_at"], row["next_at"], row["blocked_until"],
                          row["rejected_at"], row["rejections"], float(row["slow_factor"]), row["slow_until"])

    async def take(self, account_id: int, now: datetime, cost: timedelta, tolerance: timedelta) -> bool:
        """Spend `cost` of the account's time if its next free moment (less `tolerance`) has come and it is not
        blocked by a rejection; returns whether it was taken."""
        await self.db.execute(
            """INSERT INTO gmail_quota_account (account_id, next_at, blocked_until, rejected_at, rejections,
                                                slow_factor, slow_until, updated_at)
               VALUES ($1, NULL, NULL, NULL, 0, 1.0, NULL, $2) ON CONFLICT (account_id) DO NOTHING""",
            account_id, now,
        )
        status = await self.db.execute(
            """UPDATE gmail_quota_account
                  SET next_at = greatest(coalesce(next_at, $2::timestamptz), $2::timestamptz) + $3::interval,
                      updated_at = $2::timestamptz
                WHERE account_id = $1
                  AND coalesce(blocked_until, '-infinity'::timestamptz) <= $2::timestamptz
                  AND greatest(coalesce(next_at, $2::timestamptz), $2::timestamptz) - $4::interval
                      <= $2::timestamptz""",
            account_id, now, cost, tolerance,
        )
        return status.endswith(" 1")

    async def learn(self, client_id: str, limit_units: int, now: datetime) -> None:
        await self.db.execute(
            """INSERT INTO gmail_quota_limit (client_id, limit_units, learned_at) VALUES ($1, $2, $3)
               ON CONFLICT (client_id) DO UPDATE SET limit_units = EXCLUDED.limit_units,
                                                      learned_at = EXCLUDED.learned_at""",
            client_id, limit_units, now,
        )

    async def rejected(self, account_id: int, now: datetime, blocked_until: datetime, slow_factor: float,
                       slow_until: datetime | None) -> None:
        await self.db.execute(
            """INSERT INTO gmail_quota_account (account_id, next_at, blocked_until, rejected_at, rejections,
                                                slow_factor, slow_until, updated_at)
               VALUES ($1, $3, $3, $2, 1, $4, $5, $2)
               ON CONFLICT (account_id) DO UPDATE
                  SET next_at = greatest(coalesce(gmail_quota_account.next_at, $3), $3),
                      blocked_until = greatest(coalesce(gmail_quota_account.blocked_until, $3), $3),
                      rejected_at = $2, rejections = gmail_quota_account.rejections + 1,
                      slow_factor = $4, slow_until = $5, updated_at = $2""",
            account_id, now, blocked_until, slow_factor, slow_until,
        )
