"""ExtractEventsStep: after a batch commits, queue extraction for the recent messages that may hold events.

It enqueues and does nothing else. Extraction can mean a parse, a disk read or fetching raw MIME, and
the hook runs on the worker that holds a provider connection; any of that here would slow every sync.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from plmail.calendar.extraction import AttachmentFacts, booking_signals
from plmail.domain.ingest import PostIngestResult
from plmail.domain.jobs import EXTRACT_EVENTS
from plmail.domain.messages import ParsedMessage
from plmail.domain.ports import Enqueuer
from plmail.mail.public import EnrichmentRouter, names_a_meeting

JOB_BATCH = 200


class ExtractEventsStep:
    name = "extract_events"

    def __init__(self, queues: Enqueuer, router: EnrichmentRouter | None = None, *, bookings: bool = False) -> None:
        """``bookings``: KItinerary is installed, so mail that looks like a booking is worth reading too."""
        self.queues = queues
        self.router = router or EnrichmentRouter()
        self.bookings = bookings

    async def after_commit(self, result: PostIngestResult) -> None:
        recent = set(result.recent_ids)
        flagged: dict[int, list[int]] = {}
        for message in result.messages:
            account = result.accounts.get(message.account_id)
            if message.id not in recent or message.is_draft or account is None:
                continue
            if may_carry_events(message.parsed) or (self.bookings and looks_like_booking(message.parsed)):
                flagged.setdefault(account.user_id, []).append(message.id)
        queue = self.router.queue_for(result)
        for user_id, ids in flagged.items():
            for chunk in _chunks(sorted(set(ids)), JOB_BATCH):
                await self.queues.enqueue(EXTRACT_EVENTS, queue=queue, user_id=user_id, message_ids=chunk)


def may_carry_events(parsed: ParsedMessage) -> bool:
    """A calendar part, schema.org markup, or (Graph keeps no part for an invitation) meeting headers."""
    if any(part.is_calendar for part in parsed.parts):
        return True
    html = (parsed.body_html or "").lower()
    if "application/ld+json" in html or "schema.org" in html:
        return True
    return names_a_meeting(json.dumps(parsed.headers))


def looks_like_booking(parsed: ParsedMessage) -> bool:
    """KItinerary's own cheap test (sender, subject, passes and tickets), so the step and the extractor agree."""
    attachments = (AttachmentFacts(p.content_type, p.filename) for p in parsed.parts if not p.is_calendar)
    return booking_signals(parsed.from_address, parsed.subject, attachments)


def _chunks(ids: Sequence[int], size: int) -> list[list[int]]:
    return [list(ids[i : i + size]) for i in range(0, len(ids), size)]
