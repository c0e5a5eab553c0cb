"""The queue probe job: proves that some worker consumes a queue."""

from __future__ import annotations

import os
import socket
from typing import Any

from plmail.jobs.context import services_of


async def probe_queue(ctx: dict[str, Any], *, probe_id: int) -> str:
    services = services_of(ctx)
    worker = f"{socket.gethostname()}:{os.getpid()}"
    await services.probes.mark_ran(int(probe_id), worker)
    return worker
