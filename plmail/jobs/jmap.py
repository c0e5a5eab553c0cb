"""JMAP housekeeping: expired uploads, change-log rows older than any client can still ask for, tombstones of
mail long deleted at its provider, and automatic-reply records past their week."""

from __future__ import annotations

import logging
from typing import Any

from plmail.jobs.context import services_of

log = logging.getLogger(__name__)


async def prune_jmap(ctx: dict[str, Any]) -> int:
    services = services_of(ctx)
    blobs = await services.downloads.prune_expired_uploads()
    rows = await services.changes.prune_expired()
    tombstones = await services.destroyer.prune()
    replies = await services.vacation.prune()
    if blobs or rows or tombstones or replies:
        log.info("pruned %d unused upload(s), %d change-log row(s), %d tombstone(s), %d reply record(s)", blobs,
                 rows, tombstones, replies)
    return blobs + rows + tombstones + replies
