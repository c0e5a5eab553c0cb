"""plmail.aio.wait_at_most: the waits of long-lived loops (IMAP IDLE supervision, push delivery, live pages, JMAP
event streams) end on a timeout, hand over what arrived, and never lose a stop."""

from __future__ import annotations

import asyncio

import pytest

from plmail.aio import wait_at_most


async def test_a_stop_in_the_tick_the_wait_ends_is_not_lost() -> None:
    """The race of cpython#86296: the item arrives and the loop is cancelled in the same tick. With Python 3.11's
    asyncio.wait_for the loop below runs on; it must end."""
    queue: asyncio.Queue[int] = asyncio.Queue()
    taken: list[int] = []

    async def loop_until_stopped() -> None:
        while True:
            taken.append(await wait_at_most(queue.get(), 10))

    task = asyncio.create_task(loop_until_stopped())
    await asyncio.sleep(0)  # it waits for the queue
    queue.put_nowait(1)
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=2)
    assert task in done and task.cancelled()


async def test_what_arrives_is_handed_over_and_nothing_is_taken_on_a_timeout() -> None:
    queue: asyncio.Queue[str] = asyncio.Queue()
    queue.put_nowait("first")
    assert await wait_at_most(queue.get(), 1) == "first"
    with pytest.raises(TimeoutError):
        await wait_at_most(queue.get(), 0.05)
    queue.put_nowait("second")  # the timed-out get left no waiter behind that could swallow it
    assert queue.get_nowait() == "second"


async def test_a_timeout_of_zero_or_less_looks_once() -> None:
    event = asyncio.Event()
    with pytest.raises(TimeoutError):
        await wait_at_most(event.wait(), -1.0)
    event.set()
    assert await wait_at_most(event.wait(), 0.0) is True
