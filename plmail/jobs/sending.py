"""Job functions for writing mail: drafts kept in step with the provider, submissions sent, Sent copies filed."""

from __future__ import annotations

from typing import Any

from plmail.domain.ingest import ref_from_json
from plmail.jobs.context import services_of
from plmail.mail.outbox import receipt_from_json


async def push_draft(ctx: dict[str, Any], *, account_id: int, message_id: int, replaces: Any = None) -> None:
    await services_of(ctx).drafts.push(int(account_id), int(message_id), ref_from_json(replaces))


async def discard_draft(ctx: dict[str, Any], *, account_id: int, ref: Any) -> None:
    found = ref_from_json(ref)
    if found is not None:
        await services_of(ctx).drafts.discard_remote(int(account_id), found)


async def send_submission(ctx: dict[str, Any], *, submission_id: int) -> str:
    return await services_of(ctx).outbox.deliver(int(submission_id))


async def file_sent_copy(ctx: dict[str, Any], *, submission_id: int, receipt: Any = None) -> None:
    await services_of(ctx).outbox.file_sent_copy(int(submission_id), receipt_from_json(receipt))


async def file_kept_copy(ctx: dict[str, Any], *, account_id: int, message_id: int) -> None:
    await services_of(ctx).drafts.file_kept_copy(int(account_id), int(message_id))


async def send_due(ctx: dict[str, Any]) -> int:
    return await services_of(ctx).outbox.send_due()


async def send_vacation_reply(ctx: dict[str, Any], *, message_id: int) -> str:
    return await services_of(ctx).vacation.answer(int(message_id))
