"""JMAP housekeeping: expired uploads and change-log rows older than any client can still ask for."""

from __future__ import annotations

import logging
from typing import Any

from plmail.jobs.context import services_of

log = logging.getLogger(__name__)


async def prune_jmap(ctx: dict[str, Any]) -> int:
    services = services_of(ctx)
    blobs = await services.downloads.prune_expired_uploads()
    rows = await services.changes.prune_expired()
    if blobs or rows:
        log.info("pruned %d unused upload(s) and %d change-log row(s)", blobs, rows)
    return blobs + rows
