"""Address completion from the contacts harvested off stored mail (the pipeline records every sender, and every
recipient the user wrote to)."""

from __future__ import annotations

from collections.abc import Iterable

from plmail.db.database import Database
from plmail.db.repos.contacts import ContactRepository
from plmail.domain.outgoing import ContactSuggestion

MIN_TYPED = 2  # one letter matches half the address book; two narrow it to what the person means
SUGGESTIONS = 8  # as many as fit under a field on a phone


class ContactService:
    def __init__(self, db: Database) -> None:
        self.repo = ContactRepository(db)

    async def suggest(self, user_id: int, typed: str, *, exclude: Iterable[str] = ()) -> list[ContactSuggestion]:
        """Up to eight contacts for what was typed (at least two characters), none of those already chosen."""
        typed = typed.strip().strip('"<').strip()
        if len(typed) < MIN_TYPED:
            return []
        skip = {address.lower() for address in exclude}
        found = await self.repo.matching(user_id, typed, SUGGESTIONS + len(skip))
        return [c for c in found if c.email.lower() not in skip][:SUGGESTIONS]
