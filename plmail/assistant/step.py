"""ClassifyMailStep: after a batch commits, schedule the release of held mail and queue the model's question.

The release is scheduled first and whatever the settings say now: held mail must come out even if the
model was switched off a moment ago, and the release may not depend on the worker that asks the model.
"""

from __future__ import annotations

from plmail.assistant.service import CLASSIFY_BATCH, CLASSIFY_DEFAULTS, CLASSIFY_JOB, RELEASE_DEFAULTS, RELEASE_JOB
from plmail.assistant.settings import AssistantSettingsStore
from plmail.domain.enums import QueueName
from plmail.jobs.queues import QueueSet
from plmail.mail.steps import EnrichmentRouter, PostIngestResult


class ClassifyMailStep:
    name = "classify_mail"

    def __init__(self, queues: QueueSet, settings: AssistantSettingsStore, router: EnrichmentRouter | None = None
                 ) -> None:
        self.queues = queues
        self.settings = settings
        self.router = router or EnrichmentRouter()

    async def after_commit(self, result: PostIngestResult) -> None:
        settings = await self.settings.load()
        held = [m.id for m in result.messages if m.held]
        if held:
            await self.queues.enqueue(QueueName.RELEASE, RELEASE_JOB, defaults=RELEASE_DEFAULTS,
                                      delay_seconds=settings.hold_max_seconds, message_ids=held)
        if not settings.classifying:
            return
        recent = set(result.recent_ids)
        wanted = [m.id for m in result.messages if m.ask_assistant and m.id in recent]
        queue = self.router.queue_for(result)
        for start in range(0, len(wanted), CLASSIFY_BATCH):
            await self.queues.enqueue(queue, CLASSIFY_JOB, defaults=CLASSIFY_DEFAULTS,
                                      message_ids=wanted[start:start + CLASSIFY_BATCH], on_queue=queue.value)
