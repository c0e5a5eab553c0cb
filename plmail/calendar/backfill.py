"""`plmail backfill events`: extraction run again over stored mail, oldest first, page by page.

Extraction is replayable by construction (the input of each extractor is stored beside its output),
and the reconciler is idempotent, so a backfill over mail already read leaves the calendar as it
was, and one after a mapper improved rewrites what mail owns and nothing a person decided.
Suppressions hold throughout: without them every backfill would bring back what a user dismissed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from plmail.calendar.extraction.kitinerary import BOOKING_SENDERS, BOOKING_SUBJECT_STEMS
from plmail.calendar.repos.sources import BookingScan, CalendarSourceRepository
from plmail.calendar.service import EventExtractionService, ExtractionRunReport, ReplaySource

PAGE = 200

Progress = Callable[[int, ExtractionRunReport], None]


@dataclass(frozen=True, slots=True)
class BackfillReport:
    users: int
    run: ExtractionRunReport


# What KItinerary may read, for the scan of stored mail (the run asks the extractor's supports() after).
BOOKING_SCAN = BookingScan(
    sender_domains=tuple(sorted(BOOKING_SENDERS)), subject_stems=BOOKING_SUBJECT_STEMS,
    attachment_types=("application/vnd.apple.pkpass", "application/pdf"), attachment_suffixes=(".pkpass", ".pdf"),
)


class EventBackfill:
    def __init__(
        self, sources: CalendarSourceRepository, extraction: EventExtractionService, *, bookings: bool = False
    ) -> None:
        """``bookings``: KItinerary is installed, so the scan also finds mail that looks like a booking."""
        self.sources = sources
        self.extraction = extraction
        self.bookings = bookings

    async def run(
        self,
        *,
        email: str | None = None,
        source: ReplaySource = ReplaySource.MESSAGES,
        page: int = PAGE,
        progress: Progress | None = None,
    ) -> BackfillReport:
        users = await self.sources.user_ids(email)
        total = ExtractionRunReport()
        for user_id in users:
            after: tuple[datetime, int] | None = None
            while True:
                found = await self.sources.candidates(
                    user_id, after=after, limit=page, bookings=BOOKING_SCAN if self.bookings else None)
                if not found:
                    break
                # Pages go in arrival order, so an older revision is read before the newer one, as it was live.
                total.merge(await self.extraction.run(user_id, [mid for _, mid in found], source=source))
                after = found[-1]
                if progress is not None:
                    progress(user_id, total)
        return BackfillReport(len(users), total)
