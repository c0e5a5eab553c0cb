"""The calendar change log as JMAP reads it: a user's state per object type, and rows between two states.

Sequences are handed out when a row is inserted, not when its transaction commits, so (as for the mail
change log) a state is read under a SHARE lock, which waits for every writer in flight.
"""

from __future__ import annotations

from plmail.db.database import Database
from plmail.db.repos.jmap_changes import under_share_lock

_STATE = "SELECT coalesce(max(sequence), 0) FROM calendar_change WHERE user_id = $1 AND object_type = $2"


class CalendarChangeRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def state(self, user_id: int, object_type: str) -> int:
        value = await under_share_lock(self.db, "calendar_change", lambda: self.db.fetchval(_STATE, user_id,
                                                                                           object_type))
        return int(value or 0)

    async def rows(self, user_id: int, object_type: str, after: int, upto: int, limit: int
                   ) -> list[tuple[int, str, str]]:
        rows = await self.db.fetch(
            """SELECT sequence, entity_id, change_type FROM calendar_change
                WHERE user_id = $1 AND object_type = $2 AND sequence > $3 AND sequence <= $4
                ORDER BY sequence LIMIT $5""",
            user_id, object_type, after, upto, limit,
        )
        return [(int(r["sequence"]), str(r["entity_id"]), str(r["change_type"])) for r in rows]
