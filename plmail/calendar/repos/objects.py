"""The calendars a user owns, the account setting that may point at one, and the user's suppressions.

Every query names the user: a calendar id out of a jsonb settings bag is only a claim until the
row it names is found under the same user.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg

from plmail.db.database import Database

TARGET_SETTING = "calendar.target_id"
_COLUMNS = ("id, user_id, account_id, name, color, time_zone, is_default, description, sort_order, is_visible, "
            "is_subscribed")
# What a person may change of a calendar (JMAP Calendar/set), as the columns that keep it.
EDITABLE = ("name", "color", "description", "sort_order", "is_visible", "is_subscribed", "time_zone")


@dataclass(frozen=True, slots=True)
class CalendarRow:
    id: int
    user_id: int
    account_id: int | None
    name: str
    color: str
    time_zone: str | None
    is_default: bool
    description: str | None = None
    sort_order: int | None = None  # None: the default calendar first, the others after
    is_visible: bool = True
    is_subscribed: bool = True


def _calendar(row: asyncpg.Record) -> CalendarRow:
    return CalendarRow(
        row["id"], row["user_id"], row["account_id"], row["name"], row["color"], row["time_zone"], row["is_default"],
        row["description"], row["sort_order"], row["is_visible"], row["is_subscribed"],
    )


class CalendarRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def for_user(self, user_id: int) -> list[CalendarRow]:
        rows = await self.db.fetch(
            f"SELECT {_COLUMNS} FROM calendar WHERE user_id = $1 ORDER BY is_default DESC, id", user_id
        )
        return [_calendar(r) for r in rows]

    async def owned(self, user_id: int, calendar_id: int) -> CalendarRow | None:
        row = await self.db.fetchrow(
            f"SELECT {_COLUMNS} FROM calendar WHERE id = $1 AND user_id = $2", calendar_id, user_id
        )
        return _calendar(row) if row else None

    async def ensure_default(self, user_id: int, name: str) -> int:
        """The user's default calendar, created on first use; the partial unique index settles a race."""
        created = await self.db.fetchval(
            """INSERT INTO calendar (user_id, account_id, name, color, time_zone, is_default, created_at, updated_at)
               VALUES ($1, NULL, $2, 'blue', NULL, true, now(), now())
               ON CONFLICT (user_id) WHERE is_default DO NOTHING RETURNING id""",
            user_id, name,
        )
        if created is not None:
            return int(created)
        return int(await self.db.fetchval("SELECT id FROM calendar WHERE user_id = $1 AND is_default", user_id))

    async def ensure_for_account(self, user_id: int, account_id: int, name: str) -> int | None:
        """The account's own calendar (an override target), or None when the account is not the user's."""
        created = await self.db.fetchval(
            """INSERT INTO calendar (user_id, account_id, name, color, time_zone, is_default, created_at, updated_at)
               SELECT a.user_id, a.id, $3, 'teal', NULL, false, now(), now()
                 FROM account a WHERE a.id = $2 AND a.user_id = $1
               ON CONFLICT (account_id) WHERE account_id IS NOT NULL DO NOTHING RETURNING id""",
            user_id, account_id, name,
        )
        if created is not None:
            return int(created)
        found = await self.db.fetchval(
            "SELECT id FROM calendar WHERE account_id = $1 AND user_id = $2", account_id, user_id
        )
        return int(found) if found is not None else None

    async def create(self, user_id: int, name: str, changes: dict[str, object]) -> CalendarRow:
        """A calendar of the user's own (not the default, not an account's)."""
        values = {key: value for key, value in changes.items() if key in EDITABLE and key != "name"}
        columns = ["name", *values]
        row = await self.db.fetchrow(
            f"""INSERT INTO calendar (user_id, account_id, is_default, created_at, updated_at, {", ".join(columns)})
                VALUES ($1, NULL, false, now(), now(), {", ".join(f"${i}" for i in range(2, len(columns) + 2))})
                RETURNING {_COLUMNS}""",
            user_id, name, *values.values(),
        )
        return _calendar(row)

    async def change(self, user_id: int, calendar_id: int, changes: dict[str, object]) -> CalendarRow | None:
        """Sets the given EDITABLE columns of one of the user's calendars; None when it is not theirs."""
        values = {key: value for key, value in changes.items() if key in EDITABLE}
        assigned = "".join(f", {key} = ${i}" for i, key in enumerate(values, start=3))
        row = await self.db.fetchrow(
            f"""UPDATE calendar SET updated_at = now(){assigned} WHERE id = $1 AND user_id = $2
                RETURNING {_COLUMNS}""",
            calendar_id, user_id, *values.values(),
        )
        return _calendar(row) if row else None

    async def event_ids(self, user_id: int, calendar_id: int) -> list[int]:
        rows = await self.db.fetch(
            "SELECT id FROM calendar_event WHERE calendar_id = $1 AND user_id = $2 ORDER BY id", calendar_id, user_id
        )
        return [int(r["id"]) for r in rows]

    async def describe(self, user_id: int, calendar_id: int, name: str | None, color: str | None) -> bool:
        """A new name and/or colour (None keeps the one there)."""
        status = await self.db.execute(
            """UPDATE calendar SET name = coalesce($3, name), color = coalesce($4, color), updated_at = now()
                WHERE id = $1 AND user_id = $2""",
            calendar_id, user_id, name, color,
        )
        return status.endswith(" 1")

    async def delete(self, user_id: int, calendar_id: int) -> bool:
        status = await self.db.execute(
            "DELETE FROM calendar WHERE id = $1 AND user_id = $2 AND NOT is_default", calendar_id, user_id
        )
        return status.endswith(" 1")

    async def account_target(self, user_id: int, account_id: int) -> object:
        """The raw ``calendar.target_id`` setting of one of the user's accounts (unvalidated)."""
        raw = await self.db.fetchval(
            "SELECT settings -> $3::text FROM account WHERE id = $2 AND user_id = $1",
            user_id, account_id, TARGET_SETTING,
        )
        return json.loads(raw) if isinstance(raw, str) else raw

    async def set_account_target(self, user_id: int, account_id: int, calendar_id: int | None) -> bool:
        status = await self.db.execute(
            """UPDATE account SET settings = CASE WHEN $3::int IS NULL THEN settings - $4::text
                                                  ELSE settings || jsonb_build_object($4::text, $3::int) END,
                                  updated_at = now()
                WHERE id = $2 AND user_id = $1""",
            user_id, account_id, calendar_id, TARGET_SETTING,
        )
        return status.endswith(" 1")


class SuppressionRepository:
    """Suppressions by the SHA-256 of a dedup key; ON CONFLICT makes saying "no" twice harmless."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def suppressed(self, user_id: int, hashes: Sequence[str]) -> set[str]:
        if not hashes:
            return set()
        rows = await self.db.fetch(
            "SELECT dedup_key_hash FROM event_suppression WHERE user_id = $1 AND dedup_key_hash = ANY($2::text[])",
            user_id, list(dict.fromkeys(hashes)),
        )
        return {str(r["dedup_key_hash"]) for r in rows}

    async def add(self, user_id: int, hashes: Sequence[str]) -> int:
        if not hashes:
            return 0
        rows = await self.db.fetch(
            """INSERT INTO event_suppression (user_id, dedup_key_hash, created_at)
               SELECT $1, h, now() FROM unnest($2::text[]) AS x(h)
               ON CONFLICT (user_id, dedup_key_hash) DO NOTHING RETURNING id""",
            user_id, list(dict.fromkeys(hashes)),
        )
        return len(rows)

    async def count(self, user_id: int) -> int:
        return int(await self.db.fetchval("SELECT count(*) FROM event_suppression WHERE user_id = $1", user_id))
