"""People the user corresponds with; the correspondent flag overrides bulk-mail headers in the tabs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from plmail.db.database import Database
from plmail.domain.outgoing import ContactSuggestion


@dataclass(frozen=True, slots=True)
class ContactSighting:
    email: str
    name: str
    seen_at: datetime
    correspondent: bool


class ContactRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def record(self, user_id: int, sightings: Iterable[ContactSighting]) -> None:
        merged: dict[str, tuple[str, int, datetime, datetime, bool]] = {}
        for s in sightings:
            name, count, first, last, corr = merged.get(s.email, (s.name, 0, s.seen_at, s.seen_at, False))
            merged[s.email] = (name or s.name, count + 1, min(first, s.seen_at), max(last, s.seen_at),
                               corr or s.correspondent)
        if not merged:
            return
        emails = sorted(merged)
        await self.db.execute(
            """INSERT INTO contact (user_id, email, display_name, frequency, first_seen_at, last_seen_at,
                                  is_correspondent)
               SELECT $1, e, n, f, s, l, c
                 FROM unnest($2::text[], $3::text[], $4::int[], $5::timestamptz[], $6::timestamptz[], $7::bool[])
                      AS x(e, n, f, s, l, c)
               ON CONFLICT (user_id, email) DO UPDATE SET
                   frequency = contact.frequency + EXCLUDED.frequency,
                   display_name = CASE WHEN contact.display_name = '' THEN EXCLUDED.display_name
                                       ELSE contact.display_name END,
                   first_seen_at = least(contact.first_seen_at, EXCLUDED.first_seen_at),
                   last_seen_at = greatest(contact.last_seen_at, EXCLUDED.last_seen_at),
                   is_correspondent = contact.is_correspondent OR EXCLUDED.is_correspondent""",
            user_id,
            emails,
            [merged[e][0][:300] for e in emails],
            [merged[e][1] for e in emails],
            [merged[e][2] for e in emails],
            [merged[e][3] for e in emails],
            [merged[e][4] for e in emails],
        )

    async def correspondents(self, user_id: int, emails: Sequence[str]) -> set[str]:
        if not emails:
            return set()
        rows = await self.db.fetch(
            "SELECT email FROM contact WHERE user_id = $1 AND is_correspondent AND email = ANY($2::text[])",
            user_id, list(emails),
        )
        return {r["email"] for r in rows}

    async def matching(self, user_id: int, typed: str, limit: int) -> list[ContactSuggestion]:
        """Contacts whose address, or a word of whose name, starts with `typed`: people written to first,
        then by how often and how lately they were seen."""
        prefix = typed.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = await self.db.fetch(
            """SELECT email, display_name, is_correspondent FROM contact
                WHERE user_id = $1
                  AND (lower(email) LIKE $2 OR lower(display_name) LIKE $2 OR lower(display_name) LIKE '% ' || $2)
                ORDER BY is_correspondent DESC, frequency DESC, last_seen_at DESC, email
                LIMIT $3""",
            user_id, prefix, limit,
        )
        return [ContactSuggestion(r["email"], r["display_name"] or "", r["is_correspondent"]) for r in rows]
