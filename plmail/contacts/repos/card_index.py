"""Cards across all of a user's address books, by their ids, as JMAP reads them (RFC 9610): with the book each is in,
when it was made and last changed, and what changed since a (modseq, card id) watermark."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from plmail.db.database import Database
from plmail.db.repos.jmap_changes import under_share_lock


@dataclass(frozen=True, slots=True)
class IndexedCard:
    id: int
    book_kind: str
    href: str
    vcard: str
    modseq: int
    deleted: bool
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class Watermark:
    modseq: int  # the newest write to any of the user's cards
    last_id: int  # the newest card id: a card above it was made after this watermark


_SELECT = """SELECT c.id, b.kind, c.href, c.vcard, c.modseq, c.deleted, c.created_at, c.updated_at
               FROM contact_card c JOIN address_book b ON b.id = c.book_id"""


def _row(row: asyncpg.Record) -> IndexedCard:
    return IndexedCard(int(row["id"]), str(row["kind"]), str(row["href"]), str(row["vcard"]), int(row["modseq"]),
                       bool(row["deleted"]), row["created_at"], row["updated_at"])


class CardIndexRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def watermark(self, user_id: int) -> Watermark:
        row = await under_share_lock(self.db, "contact_card", lambda: self.db.fetchrow(
            """SELECT coalesce(max(c.modseq), 0) AS m, coalesce(max(c.id), 0) AS i
                 FROM contact_card c JOIN address_book b ON b.id = c.book_id WHERE b.user_id = $1""",
            user_id,
        ))
        assert row is not None
        return Watermark(int(row["m"]), int(row["i"]))

    async def live(self, user_id: int, ids: Sequence[int] | None, *, limit: int) -> list[IndexedCard]:
        """The user's live cards (those named, or all of them up to ``limit``), oldest first."""
        rows = await self.db.fetch(
            f"""{_SELECT} WHERE b.user_id = $1 AND NOT c.deleted AND ($2::bigint[] IS NULL OR c.id = ANY($2))
                ORDER BY c.id LIMIT $3""",
            user_id, list(ids) if ids is not None else None, limit,
        )
        return [_row(r) for r in rows]

    async def at_href(self, user_id: int, kind: str, href: str) -> IndexedCard | None:
        row = await self.db.fetchrow(
            f"{_SELECT} WHERE b.user_id = $1 AND b.kind = $2 AND c.href = $3 AND NOT c.deleted", user_id, kind, href)
        return _row(row) if row else None

    async def changed_since(self, user_id: int, after: int, upto: int, *, limit: int) -> list[IndexedCard]:
        rows = await self.db.fetch(
            f"""{_SELECT} WHERE b.user_id = $1 AND c.modseq > $2 AND c.modseq <= $3 ORDER BY c.modseq LIMIT $4""",
            user_id, after, upto, limit,
        )
        return [_row(r) for r in rows]

    async def rename_book(self, user_id: int, kind: str, name: str) -> bool:
        status = await self.db.execute("UPDATE address_book SET name = $3 WHERE user_id = $1 AND kind = $2",
                                       user_id, kind, name)
        return status.endswith(" 1")
