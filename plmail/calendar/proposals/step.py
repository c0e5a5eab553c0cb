"""ProposeEventsStep: after a batch commits, queue the proposal pass for recent mail; nothing else.

Reading sentences is parsing, and the hook runs on the worker that holds a provider connection. Every
recent message is queued: which of them may be offered anything is the proposer's decision, made in the
job from the stored row, exactly as a backfill makes it later.
"""

from __future__ import annotations

from collections.abc import Sequence

from plmail.calendar.step import JOB_BATCH
from plmail.db.repos.assistant import ReleasedMessage
from plmail.domain.enums import QueueName
from plmail.domain.ingest import PostIngestResult
from plmail.domain.jobs import PROPOSE_EVENTS
from plmail.domain.ports import Enqueuer
from plmail.mail.public import EnrichmentRouter


class ProposeEventsStep:
    name = "propose_events"

    def __init__(self, queues: Enqueuer, router: EnrichmentRouter | None = None) -> None:
        self.queues = queues
        self.router = router or EnrichmentRouter()

    async def after_commit(self, result: PostIngestResult) -> None:
        recent = set(result.recent_ids)
        by_user: dict[int, list[int]] = {}
        for message in result.messages:
            account = result.accounts.get(message.account_id)
            # Held mail is not sorted yet; ProposeOnRelease queues it once the assistant let it go.
            if message.id in recent and account is not None and not message.held:
                by_user.setdefault(account.user_id, []).append(message.id)
        await enqueue_proposals(self.queues, self.router.queue_for(result), by_user)


class ProposeOnRelease:
    """Held mail gets its proposal pass when it is released, sorted: only then can the proposer tell
    General from the rest. Held mail is always live mail, so the pass goes on enrich_live."""

    name = "propose_on_release"

    def __init__(self, queues: Enqueuer) -> None:
        self.queues = queues

    async def after_release(self, released: Sequence[ReleasedMessage]) -> None:
        by_user: dict[int, list[int]] = {}
        for message in released:
            by_user.setdefault(message.user_id, []).append(message.id)
        await enqueue_proposals(self.queues, QueueName.ENRICH_LIVE, by_user)


async def enqueue_proposals(queues: Enqueuer, queue: QueueName, by_user: dict[int, list[int]]) -> None:
    for user_id, ids in by_user.items():
        ordered = sorted(set(ids))
        for first in range(0, len(ordered), JOB_BATCH):
            await queues.enqueue(PROPOSE_EVENTS, queue=queue, user_id=user_id,
                                 message_ids=ordered[first : first + JOB_BATCH])
