"""Job functions of the assistant: asking the model, releasing held mail, and the two crons."""

from __future__ import annotations

from typing import Any

from plmail.domain.enums import QueueName
from plmail.jobs.context import services_of


async def classify_messages(ctx: dict[str, Any], *, message_ids: list[int], on_queue: str) -> dict[str, object]:
    """`on_queue` is where the job was put; bulk queues step back for live mail before each model call."""
    name = QueueName(on_queue) if on_queue in QueueName._value2member_map_ else QueueName.ENRICH_BACKLOG
    report = await services_of(ctx).assistant.classify([int(i) for i in message_ids], name)
    return report.summary()


async def release_held(ctx: dict[str, Any], *, message_ids: list[int]) -> int:
    return await services_of(ctx).assistant.release_held([int(i) for i in message_ids])


async def release_overdue_held(ctx: dict[str, Any]) -> int:
    return await services_of(ctx).assistant.release_overdue()


async def classify_backlog(ctx: dict[str, Any]) -> int:
    return await services_of(ctx).classification_catch_up.run()
