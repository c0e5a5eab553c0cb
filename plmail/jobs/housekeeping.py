"""Cron jobs that keep bookkeeping tables small."""

from __future__ import annotations

from typing import Any

from plmail.jobs.context import services_of


async def prune_login_throttle(ctx: dict[str, Any]) -> int:
    return await services_of(ctx).users.prune_throttle()


async def prune_queue_probes(ctx: dict[str, Any]) -> int:
    return await services_of(ctx).probes.prune()


async def prune_applied_actions(ctx: dict[str, Any]) -> int:
    return await services_of(ctx).applied_actions.prune()


async def sweep_blobs(ctx: dict[str, Any]) -> int:
    return await services_of(ctx).blobs.sweep()


async def absorb_legacy_blobs(ctx: dict[str, Any]) -> int:
    return await services_of(ctx).blobs.absorb_legacy_files()
