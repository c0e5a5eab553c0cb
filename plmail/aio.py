"""Waiting in long-lived loops without losing a stop."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def wait_at_most(awaitable: Awaitable[T], seconds: float) -> T:
    """`asyncio.wait_for` that never loses its caller's cancellation: on Python 3.11, wait_for returns normally when
    the caller is cancelled in the loop tick the awaited thing completes (cpython#86296), and a loop that should
    stop runs on forever. Raises TimeoutError after `seconds`; what was awaited is then cancelled."""
    task = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait({task}, timeout=max(seconds, 0.0))
    except BaseException:
        task.cancel()
        raise
    if not done:
        task.cancel()
        raise TimeoutError
    return task.result()
