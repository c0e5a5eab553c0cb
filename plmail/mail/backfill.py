"""`plmail backfill category`: re-sort stored mail with the current rules, no refetch, no resync.

The same code runs when a user switches an inbox tab on or off. Only messages and threads whose
category actually changes are written, and those threads are announced to JMAP clients.
"""

from __future__ import annotations

from dataclasses import dataclass

from plmail.db.database import Database
from plmail.db.repos.accounts import AccountRepository
from plmail.db.repos.changes import ChangeLogRepository
from plmail.db.repos.contacts import ContactRepository
from plmail.db.repos.threads import ThreadRepository
from plmail.domain.enums import Category
from plmail.mail.categorizer import CategoryFacts, MessageCategorizer
from plmail.mail.changes import MailChangeRecorder, StateManager
from plmail.mail.repos.categories import CategoryRepository

BATCH = 2000


@dataclass(frozen=True, slots=True)
class BackfillReport:
    messages_seen: int
    messages_changed: int
    threads_moved: int


class CategoryBackfill:
    def __init__(self, db: Database, categorizer: MessageCategorizer | None = None) -> None:
        self.db = db
        self.categorizer = categorizer or MessageCategorizer()
        self.accounts = AccountRepository(db)
        self.contacts = ContactRepository(db)
        self.threads = ThreadRepository(db)
        self.repo = CategoryRepository(db)

    async def run(self, *, user_id: int | None = None) -> BackfillReport:
        seen = changed = moved = 0
        for account_id in await self.repo.account_ids(user_id):
            s, c, m = await self._account(account_id)
            seen, changed, moved = seen + s, changed + c, moved + m
        return BackfillReport(seen, changed, moved)

    async def _account(self, account_id: int) -> tuple[int, int, int]:
        facts = await self.accounts.facts(account_id)
        if facts is None:
            return 0, 0, 0
        disabled = {Category(c) for c in facts.disabled_categories if c in Category._value2member_map_}
        last_id = 0
        seen = changed = moved = 0
        while True:
            batch = await self.repo.signals_after(account_id, last_id, BATCH)
            if not batch:
                return seen, changed, moved
            last_id = batch[-1].id
            seen += len(batch)
            senders = sorted({r.from_address for r in batch if r.from_address})
            correspondents = await self.contacts.correspondents(facts.user_id, senders)
            updates: list[tuple[int, str, int | None]] = []
            for r in batch:
                verdict = self.categorizer.categorize(
                    CategoryFacts(r.from_address, r.headers, r.provider_labels,
                                  None if facts.sorts_by_rules else r.ai_category),
                    correspondents=correspondents, disabled=disabled,
                )
                if verdict.value != r.category:
                    updates.append((r.id, verdict.value, r.thread_id))
            if not updates:
                continue
            state = StateManager(ChangeLogRepository(self.db))
            recorder = MailChangeRecorder(state)
            async with self.db.transaction():
                await self.repo.set_categories([(u[0], u[1]) for u in updates])
                for message_id, _, _ in updates:
                    recorder.email_changed(account_id, message_id)
                moves = await self.threads.refresh_categories([u[2] for u in updates if u[2] is not None])
                recorder.threads_touched(account_id, [m.thread_id for m in moves])
                await state.write()
                await state.announce()
            changed += len(updates)
            moved += len(moves)
