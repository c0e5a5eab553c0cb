"""Address completion from the contacts harvested off stored mail (the pipeline records every sender, and every
recipient the user wrote to), and from the user's own address book (cards kept over CardDAV)."""

from __future__ import annotations

from collections.abc import Iterable

from plmail.db.database import Database
from plmail.db.repos.contacts import ContactRepository
from plmail.domain.outgoing import ContactSuggestion
from plmail.domain.ports import CardSuggestions

MIN_TYPED = 2  # one letter matches half the address book; two narrow it to what the person means
SUGGESTIONS = 8  # as many as fit under a field on a phone


class ContactService:
    def __init__(self, db: Database, cards: CardSuggestions | None = None) -> None:
        self.repo = ContactRepository(db)
        self.cards = cards

    async def suggest(self, user_id: int, typed: str, *, exclude: Iterable[str] = ()) -> list[ContactSuggestion]:
        """Up to eight contacts for what was typed (at least two characters), none of those already chosen."""
        typed = typed.strip().strip('"<').strip()
        if len(typed) < MIN_TYPED:
            return []
        skip = {address.lower() for address in exclude}
        kept = await self.cards.suggest(user_id, typed, SUGGESTIONS + len(skip)) if self.cards is not None else []
        found = [*kept, *await self.repo.matching(user_id, typed, SUGGESTIONS + len(skip))]
        chosen: list[ContactSuggestion] = []
        for contact in found:  # the person's own card first; a harvested copy of the same address after it goes
            if contact.email.lower() not in skip:
                skip.add(contact.email.lower())
                chosen.append(contact)
        return chosen[:SUGGESTIONS]
