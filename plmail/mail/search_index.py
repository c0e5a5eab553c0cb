"""Search vectors computed after a first import stored its pages (issue 36).

A page of an importing account is stored without its vector (`insert_messages(search_later=True)`): the vector is
about a third of the database's work per message, and the import is what a new user waits for. `index_search`
runs every minute and computes the waiting vectors newest first, in transactions of `BATCH` messages, until none
wait or its time is up; a search meanwhile says that some mail is not searchable yet.
"""

from __future__ import annotations

import time

from plmail.db.database import Database
from plmail.mail.repos.search_index import SearchIndexRepository

BATCH = 500  # messages a transaction: about half a second of the database's time, so a crash loses little
RUN_SECONDS = 50.0  # within the job's minute, so two runs never queue behind each other


class SearchIndexer:
    def __init__(self, db: Database) -> None:
        self.repo = SearchIndexRepository(db)

    async def catch_up(self, seconds: float = RUN_SECONDS, *, account_id: int | None = None) -> int:
        """Index waiting messages (of one account, or any) until none wait or `seconds` have passed; returns how
        many were indexed."""
        deadline = time.monotonic() + seconds
        done = 0
        while True:
            indexed = await self.repo.index_pending(BATCH, account_id)
            done += indexed
            if indexed < BATCH or time.monotonic() >= deadline:
                return done

    async def incomplete_for(self, user_id: int) -> bool:
        """Whether a search of this user may miss mail whose vector is not computed yet."""
        return await self.repo.waiting_for(user_id)
