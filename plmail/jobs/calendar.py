"""Job functions for calendar extraction and proposals."""

from __future__ import annotations

from typing import Any

from plmail.jobs.context import services_of


async def extract_events(ctx: dict[str, Any], *, user_id: int, message_ids: list[int]) -> dict[str, int]:
    """Extract and reconcile events for one user's messages; each message is guarded inside the service."""
    report = await services_of(ctx).calendar.extraction.run(int(user_id), [int(i) for i in message_ids])
    return report.summary()


async def propose_events(ctx: dict[str, Any], *, user_id: int, message_ids: list[int]) -> dict[str, int]:
    """Offer proposals from one user's messages; each message is guarded inside the service."""
    report = await services_of(ctx).calendar.proposals.run(int(user_id), [int(i) for i in message_ids])
    return report.summary()


async def remind_events(ctx: dict[str, Any]) -> int:
    """Calendar reminders sent to the browsers, each occurrence once."""
    return await services_of(ctx).push_dispatcher.remind()
