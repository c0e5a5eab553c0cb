"""Gmail's own job: fetching a batch of new message ids that a sync found too many of to fetch itself."""

from __future__ import annotations

from typing import Any

from plmail.jobs.context import services_of


async def gmail_fetch_batch(ctx: dict[str, Any], *, account_id: int, ids: list[str]) -> int:
    return await services_of(ctx).mail_accounts.gmail.syncer.fetch_batch(int(account_id), [str(i) for i in ids])
