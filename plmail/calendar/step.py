"""ExtractEventsStep: after a batch commits, queue extraction for the recent messages that may hold events.

It enqueues and does nothing else. Extraction can mean a parse, a disk read or fetching raw MIME, and
the hook runs on the worker that holds a provider connection; any of that here would slow every sync.
"""

from __future__ import annotations

from collections.abc import Sequence

from plmail.domain.jobs import EXTRACT_EVENTS
from plmail.domain.ports import Enqueuer
from plmail.mail.steps import EnrichmentRouter, PostIngestResult

JOB_BATCH = 200


class ExtractEventsStep:
    name = "extract_events"

    def __init__(self, queues: Enqueuer, router: EnrichmentRouter | None = None) -> None:
        self.queues = queues
        self.router = router or EnrichmentRouter()

    async def after_commit(self, result: PostIngestResult) -> None:
        recent = set(result.recent_ids)
        flagged: dict[int, list[int]] = {}
        for message in result.messages:
            account = result.accounts.get(message.account_id)
            if message.id not in recent or message.is_draft or account is None:
                continue
            if message.has_calendar_part or message.has_structured_data or message.has_meeting_headers:
                flagged.setdefault(account.user_id, []).append(message.id)
        queue = self.router.queue_for(result)
        for user_id, ids in flagged.items():
            for chunk in _chunks(sorted(set(ids)), JOB_BATCH):
                await self.queues.enqueue(EXTRACT_EVENTS, queue=queue, user_id=user_id, message_ids=chunk)


def _chunks(ids: Sequence[int], size: int) -> list[list[int]]:
    return [list(ids[i : i + size]) for i in range(0, len(ids), size)]
