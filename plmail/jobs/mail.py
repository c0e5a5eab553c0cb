"""Job functions for thread operations: provider propagation and waking snoozed threads."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from plmail.jobs.context import services_of


async def propagate_provider_changes(ctx: dict[str, Any], *, account_id: int) -> int:
    return await services_of(ctx).propagation.run(int(account_id))


async def propagate_stranded_changes(ctx: dict[str, Any]) -> int:
    return await services_of(ctx).operations.propagate_stranded()


async def apply_rule_to_existing(ctx: dict[str, Any], *, rule_id: int, user_id: int) -> int:
    return await services_of(ctx).rules.apply_to_existing(int(user_id), int(rule_id))


async def wake_snoozed(ctx: dict[str, Any]) -> int:
    return await services_of(ctx).operations.wake_due(datetime.now(UTC))


async def index_search(ctx: dict[str, Any]) -> int:
    return await services_of(ctx).search_index.catch_up()


async def repair_label_counts(ctx: dict[str, Any]) -> dict[str, int]:
    """Re-derive the kept label counts; the service logs whatever had drifted."""
    report = await services_of(ctx).label_counts.repair()
    return {"shares_moved": report.shares_moved, "counts_repaired": len(report.drifted)}


async def resort_mail(ctx: dict[str, Any], *, user_id: int) -> dict[str, int]:
    """Re-sort a user's stored mail after a sorting preference changed."""
    report = await services_of(ctx).category_backfill.run(user_id=int(user_id))
    return {"changed": report.messages_changed, "threads_moved": report.threads_moved}
