"""Address books and their cards, always under the owning user. A card's ``modseq`` comes from one sequence at
every write (a delete leaves a tombstone with a new one), so "what changed since" is one index range."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg

from plmail.db.database import Database
from plmail.db.repos.jmap_changes import under_share_lock

PERSONAL = "personal"
FROM_MAIL = "from_mail"


@dataclass(frozen=True, slots=True)
class BookRow:
    id: int
    kind: str
    name: str


@dataclass(frozen=True, slots=True)
class CardRow:
    id: int
    href: str
    uid: str
    vcard: str
    modseq: int
    deleted: bool


@dataclass(frozen=True, slots=True)
class Correspondent:
    email: str
    display_name: str


def _card(row: asyncpg.Record) -> CardRow:
    return CardRow(int(row["id"]), str(row["href"]), str(row["uid"]), str(row["vcard"]), int(row["modseq"]),
                   bool(row["deleted"]))


_CARD = "SELECT c.id, c.href, c.uid, c.vcard, c.modseq, c.deleted FROM contact_card c"


class AddressBookRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def books(self, user_id: int, names: dict[str, str]) -> list[BookRow]:
        """The user's books, the ones named in ``names`` (kind → name) made on first use."""
        await self.db.execute(
            """INSERT INTO address_book (user_id, kind, name)
               SELECT $1, k, n FROM unnest($2::text[], $3::text[]) AS x(k, n)
               ON CONFLICT (user_id, kind) DO NOTHING""",
            user_id, list(names), list(names.values()),
        )
        rows = await self.db.fetch(
            "SELECT id, kind, name FROM address_book WHERE user_id = $1 ORDER BY kind = 'personal' DESC, id",
            user_id,
        )
        return [BookRow(int(r["id"]), str(r["kind"]), str(r["name"])) for r in rows]

    async def watermarks(self, user_id: int, book_ids: Sequence[int]) -> dict[int, int]:
        rows = await under_share_lock(self.db, "contact_card", lambda: self.db.fetch(
            """SELECT b.id, coalesce((SELECT max(c.modseq) FROM contact_card c WHERE c.book_id = b.id), 0) AS m
                 FROM address_book b WHERE b.user_id = $1 AND b.id = ANY($2::int[])""",
            user_id, list(book_ids),
        ))
        return {int(r["id"]): int(r["m"]) for r in rows}

    async def live(self, user_id: int, book_id: int, *, limit: int) -> list[CardRow]:
        rows = await self.db.fetch(
            f"""{_CARD} JOIN address_book b ON b.id = c.book_id
                WHERE b.user_id = $1 AND c.book_id = $2 AND NOT c.deleted ORDER BY c.id LIMIT $3""",
            user_id, book_id, limit,
        )
        return [_card(r) for r in rows]

    async def at(self, user_id: int, book_id: int, hrefs: Sequence[str]) -> dict[str, CardRow]:
        """The live cards at these hrefs."""
        if not hrefs:
            return {}
        rows = await self.db.fetch(
            f"""{_CARD} JOIN address_book b ON b.id = c.book_id
                WHERE b.user_id = $1 AND c.book_id = $2 AND c.href = ANY($3::text[]) AND NOT c.deleted""",
            user_id, book_id, list(dict.fromkeys(hrefs)),
        )
        return {row.href: row for row in map(_card, rows)}

    async def with_uid(self, user_id: int, book_id: int, uid: str) -> CardRow | None:
        row = await self.db.fetchrow(
            f"""{_CARD} JOIN address_book b ON b.id = c.book_id
                WHERE b.user_id = $1 AND c.book_id = $2 AND c.uid = $3 AND NOT c.deleted""",
            user_id, book_id, uid,
        )
        return _card(row) if row else None

    async def changed_since(self, user_id: int, book_id: int, after: int, upto: int) -> list[CardRow]:
        rows = await self.db.fetch(
            f"""{_CARD} JOIN address_book b ON b.id = c.book_id
                WHERE b.user_id = $1 AND c.book_id = $2 AND c.modseq > $3 AND c.modseq <= $4 ORDER BY c.modseq""",
            user_id, book_id, after, upto,
        )
        return [_card(r) for r in rows]

    async def write(self, user_id: int, book_id: int, href: str, uid: str, vcard: str, email: str | None
                    ) -> CardRow | None:
        """Creates the card at ``href`` or replaces it (a tombstone there comes back to life); None when the book
        is not the user's."""
        row = await self.db.fetchrow(
            """INSERT INTO contact_card (book_id, href, uid, vcard, email)
               SELECT b.id, $3, $4, $5, $6 FROM address_book b WHERE b.id = $2 AND b.user_id = $1
               ON CONFLICT (book_id, href) DO UPDATE
                  SET uid = EXCLUDED.uid, vcard = EXCLUDED.vcard, email = coalesce(contact_card.email, EXCLUDED.email),
                      deleted = false, modseq = nextval('contact_card_modseq'), updated_at = now()
               RETURNING id, href, uid, vcard, modseq, deleted""",
            user_id, book_id, href, uid, vcard, email,
        )
        return _card(row) if row else None

    async def remove(self, user_id: int, book_id: int, href: str) -> bool:
        """Leaves a tombstone: sync-collection reports it, and a gathered address stays removed."""
        status = await self.db.execute(
            """UPDATE contact_card c SET deleted = true, vcard = '', modseq = nextval('contact_card_modseq'),
                                       updated_at = now()
                 FROM address_book b
                WHERE b.id = c.book_id AND b.user_id = $1 AND c.book_id = $2 AND c.href = $3 AND NOT c.deleted""",
            user_id, book_id, href,
        )
        return status.endswith(" 1")

    async def ungathered(self, user_id: int, book_id: int, *, limit: int) -> list[Correspondent]:
        """People the user wrote to who have no card (nor a tombstone) in the gathered book yet."""
        rows = await self.db.fetch(
            """SELECT p.email, p.display_name FROM contact p
                WHERE p.user_id = $1 AND p.is_correspondent
                  AND NOT EXISTS (SELECT 1 FROM contact_card c WHERE c.book_id = $2 AND c.email = lower(p.email))
                ORDER BY p.id LIMIT $3""",
            user_id, book_id, limit,
        )
        return [Correspondent(str(r["email"]).lower(), str(r["display_name"] or "")) for r in rows]

    async def containing(self, user_id: int, kind: str, text: str, *, limit: int) -> list[str]:
        """The vCards of a book of the user's that contain ``text`` anywhere (the caller reads their fields)."""
        pattern = "%" + text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = await self.db.fetch(
            """SELECT c.vcard FROM contact_card c JOIN address_book b ON b.id = c.book_id
                WHERE b.user_id = $1 AND b.kind = $2 AND NOT c.deleted AND lower(c.vcard) LIKE $3
                ORDER BY c.id LIMIT $4""",
            user_id, kind, pattern, limit,
        )
        return [str(r["vcard"]) for r in rows]
