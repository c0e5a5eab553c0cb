"""Job functions for syncing accounts and their first import; none of them knows a provider."""

from __future__ import annotations

from typing import Any

from plmail.jobs.context import services_of


async def sync_account(ctx: dict[str, Any], *, account_id: int) -> list[int]:
    return await services_of(ctx).sync.run(int(account_id))


async def import_mail_page(ctx: dict[str, Any], *, account_id: int) -> int:
    run = await services_of(ctx).importer.run_page(int(account_id))
    return run.page.stored


async def sync_all_accounts(ctx: dict[str, Any]) -> int:
    """The fallback poll every 15 minutes, for servers without IDLE and anything IDLE missed."""
    return await services_of(ctx).sync.request_all()
