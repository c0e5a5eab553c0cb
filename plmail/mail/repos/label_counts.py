"""The kept label counts: re-deriving them, and comparing them with a fresh count of the mail.

The triggers of migration 2026-12-01T21:30 keep `label_count` in step with every write; this repository
is for the periodic repair and for tests that check the triggers against `count(*)`.
"""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from plmail.db.database import Database
from plmail.domain.mailstore import CountDrift

_COUNT_COLUMNS = ("threads", "unread_threads", "emails", "unread_emails", "email_threads", "unread_email_threads")
_KEY = ("label_id", "account_id", "category", "binned")

# Every count as it would be computed from scratch, straight from the mail (not from the shares).
FRESH_COUNTS = """
WITH tl AS (
    SELECT tl.label_id, t.account_id, coalesce(t.user_category, t.category, '') AS category, t.binned,
           count(*) AS threads, count(*) FILTER (WHERE t.unread_count > 0) AS unread_threads
      FROM thread_label tl JOIN message_thread t ON t.id = tl.thread_id
     GROUP BY 1, 2, 3, 4
), ml AS (
    SELECT ml.label_id, t.account_id, coalesce(t.user_category, t.category, '') AS category, t.binned,
           count(*) AS emails,
           count(*) FILTER (WHERE m.seen_at IS NULL AND NOT (m.flags ? '\\Draft' OR m.flags ? '$draft'))
               AS unread_emails,
           count(DISTINCT m.thread_id) AS email_threads,
           count(DISTINCT m.thread_id) FILTER (
               WHERE m.seen_at IS NULL AND NOT (m.flags ? '\\Draft' OR m.flags ? '$draft')) AS unread_email_threads
      FROM message_label ml JOIN message m ON m.id = ml.message_id JOIN message_thread t ON t.id = m.thread_id
     GROUP BY 1, 2, 3, 4
)
SELECT coalesce(tl.label_id, ml.label_id) AS label_id, coalesce(tl.account_id, ml.account_id) AS account_id,
       coalesce(tl.category, ml.category) AS category, coalesce(tl.binned, ml.binned) AS binned,
       coalesce(tl.threads, 0)::int AS threads, coalesce(tl.unread_threads, 0)::int AS unread_threads,
       coalesce(ml.emails, 0)::int AS emails, coalesce(ml.unread_emails, 0)::int AS unread_emails,
       coalesce(ml.email_threads, 0)::int AS email_threads,
       coalesce(ml.unread_email_threads, 0)::int AS unread_email_threads
  FROM tl FULL JOIN ml ON ml.label_id = tl.label_id AND ml.account_id = tl.account_id
   AND ml.category = tl.category AND ml.binned = tl.binned
"""

_SHARE_TOTALS = f"""
SELECT label_id, account_id, category, binned, {', '.join(f'sum({c})::int AS {c}' for c in _COUNT_COLUMNS)}
  FROM label_count_share s
 WHERE EXISTS (SELECT 1 FROM label l WHERE l.id = s.label_id)
   AND EXISTS (SELECT 1 FROM account a WHERE a.id = s.account_id)
 GROUP BY label_id, account_id, category, binned
"""

_KEPT = f"SELECT {', '.join(_KEY + _COUNT_COLUMNS)} FROM label_count"

_DIFFERENT = " OR ".join(f"coalesce(k.{c}, 0) <> coalesce(s.{c}, 0)" for c in _COUNT_COLUMNS)

# Counts that disagree with the sum of the shares, set to that sum (returned as they were and are).
_REPAIR_TOTALS = f"""
WITH sums AS ({_SHARE_TOTALS}), kept AS ({_KEPT}), wrong AS (
    SELECT coalesce(s.label_id, k.label_id) AS label_id, coalesce(s.account_id, k.account_id) AS account_id,
           coalesce(s.category, k.category) AS category, coalesce(s.binned, k.binned) AS binned,
           {', '.join(f'coalesce(k.{c}, 0) AS kept_{c}, coalesce(s.{c}, 0) AS {c}' for c in _COUNT_COLUMNS)}
      FROM sums s FULL JOIN kept k ON k.label_id = s.label_id AND k.account_id = s.account_id
       AND k.category = s.category AND k.binned = s.binned
     WHERE {_DIFFERENT}
), fixed AS (
    INSERT INTO label_count AS c ({', '.join(_KEY + _COUNT_COLUMNS)})
    SELECT {', '.join(_KEY + _COUNT_COLUMNS)} FROM wrong
    ON CONFLICT (label_id, account_id, category, binned) DO UPDATE
       SET {', '.join(f'{c} = EXCLUDED.{c}' for c in _COUNT_COLUMNS)}
)
SELECT * FROM wrong
"""


class LabelCountRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def thread_ids_after(self, after: int, limit: int) -> list[int]:
        rows = await self.db.fetch(
            "SELECT id FROM message_thread WHERE id > $1 ORDER BY id LIMIT $2", after, limit)
        return [r["id"] for r in rows]

    async def orphaned_share_threads(self) -> list[int]:
        """Threads that still have shares but no longer exist (a share the triggers missed)."""
        rows = await self.db.fetch(
            """SELECT DISTINCT s.thread_id FROM label_count_share s
                WHERE NOT EXISTS (SELECT 1 FROM message_thread t WHERE t.id = s.thread_id)""")
        return [r["thread_id"] for r in rows]

    async def refresh_threads(self, thread_ids: list[int]) -> int:
        """Re-derive these threads' shares, adding any difference to the counts; returns the shares that moved."""
        if not thread_ids:
            return 0
        async with self.db.transaction():
            moved = await self.db.fetchval("SELECT plmail_refresh_label_counts($1::bigint[])", thread_ids)
        return int(moved)

    async def repair_totals(self) -> list[CountDrift]:
        """Set every count that disagrees with the sum of its shares to that sum. Writers are held back for
        the moment it takes, so the sum and the counts are read at one point in the mail's history."""
        async with self.db.transaction():
            await self.db.execute("SET LOCAL lock_timeout = '10s'")
            await self.db.execute("LOCK TABLE label_count IN EXCLUSIVE MODE")
            rows = await self.db.fetch(_REPAIR_TOTALS)
        return [
            CountDrift(r["label_id"], r["account_id"], r["category"], r["binned"],
                       tuple(r[f"kept_{c}"] for c in _COUNT_COLUMNS), tuple(r[c] for c in _COUNT_COLUMNS))
            for r in rows
        ]

    async def kept_counts(self) -> dict[tuple[int, int, str, bool], tuple[int, ...]]:
        """Every non-zero kept count, by (label, account, tab, binned)."""
        rows = await self.db.fetch(_KEPT)
        return _by_key(rows)

    async def fresh_counts(self) -> dict[tuple[int, int, str, bool], tuple[int, ...]]:
        """The same counts computed from the mail with count(*), for checks and tests."""
        rows = await self.db.fetch(FRESH_COUNTS)
        return _by_key(rows)


def _by_key(rows: Sequence[asyncpg.Record]) -> dict[tuple[int, int, str, bool], tuple[int, ...]]:
    counts: dict[tuple[int, int, str, bool], tuple[int, ...]] = {}
    for r in rows:
        values = tuple(int(r[c]) for c in _COUNT_COLUMNS)
        if any(values):
            counts[(r["label_id"], r["account_id"], r["category"], r["binned"])] = values
    return counts
