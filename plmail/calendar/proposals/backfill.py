"""`plmail backfill proposals`: the proposal pass again over stored mail, oldest first, page by page.

It gives the answers the live path gave on the day the mail arrived, because both run the same service
over the same stored rows and every rule measures from the message's own date, never from now. What the
user declined stays declined and what they accepted is not offered again; rows already there are left
alone by the unique index.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from plmail.calendar.proposals.service import ProposalRunReport, ProposalService
from plmail.calendar.repos.proposals import ProposalRepository
from plmail.calendar.repos.sources import CalendarSourceRepository

PAGE = 200

Progress = Callable[[int, ProposalRunReport], None]


@dataclass(frozen=True, slots=True)
class ProposalBackfillReport:
    users: int
    run: ProposalRunReport


class ProposalBackfill:
    def __init__(
        self, users: CalendarSourceRepository, proposals: ProposalRepository, service: ProposalService
    ) -> None:
        self.users = users
        self.proposals = proposals
        self.service = service

    async def run(
        self, *, email: str | None = None, page: int = PAGE, progress: Progress | None = None
    ) -> ProposalBackfillReport:
        users = await self.users.user_ids(email)
        total = ProposalRunReport()
        for user_id in users:
            after: tuple[datetime, int] | None = None
            while True:
                found = await self.proposals.page(user_id, after=after, limit=page)
                if not found:
                    break
                total.merge(await self.service.run(user_id, [mid for _, mid in found]))
                after = found[-1]
                if progress is not None:
                    progress(user_id, total)
        return ProposalBackfillReport(len(users), total)
