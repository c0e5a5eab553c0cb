"""ClassifyMailStep: after a batch commits, schedule the release of held mail and queue the model's question.

The release is scheduled first and whatever the settings say now: held mail must come out even if the
model was switched off a moment ago, and the release may not depend on the worker that asks the model.
"""

from __future__ import annotations

from plmail.assistant.service import CLASSIFY_BATCH
from plmail.assistant.settings import AssistantSettingsStore
from plmail.domain.ingest import PostIngestResult
from plmail.domain.jobs import CLASSIFY_MESSAGES, RELEASE_HELD
from plmail.domain.ports import Enqueuer
from plmail.mail.steps import EnrichmentRouter


class ClassifyMailStep:
    name = "classify_mail"

    def __init__(self, queues: Enqueuer, settings: AssistantSettingsStore, router: EnrichmentRouter | None = None
                 ) -> None:
        self.queues = queues
        self.settings = settings
        self.router = router or EnrichmentRouter()

    async def after_commit(self, result: PostIngestResult) -> None:
        settings = await self.settings.load()
        held = [m.id for m in result.messages if m.held]
        if held:
            await self.queues.enqueue(RELEASE_HELD, delay_seconds=settings.hold_max_seconds, message_ids=held)
        if not settings.classifying:
            return
        recent = set(result.recent_ids)
        wanted = [m.id for m in result.messages if m.ask_assistant and m.id in recent]
        queue = self.router.queue_for(result)
        for start in range(0, len(wanted), CLASSIFY_BATCH):
            await self.queues.enqueue(CLASSIFY_MESSAGES, queue=queue,
                                      message_ids=wanted[start:start + CLASSIFY_BATCH], on_queue=queue.value)
