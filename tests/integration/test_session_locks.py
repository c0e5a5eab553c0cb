"""A session advisory lock (plmail.db.repos.account_admin.session_lock) is never left behind by a caller cancelled
while asking for it: the pool hands connections on without resetting them, so a lock the server granted to a
cancelled caller would refuse the account's sync, import or drafts to everyone until the process ended."""

from __future__ import annotations

import asyncio
import time

import asyncpg

from plmail.db.repos.account_admin import IMPORT_LOCK, AccountAdminRepository
from plmail.services import Services

KEY = 4242


async def _held_by_anyone(observer: asyncpg.Connection) -> int:
    # pg_try_advisory_lock(int4, int4) is an advisory lock with classid and objid the two keys, objsubid 2.
    return int(await observer.fetchval(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2 "
        "AND classid::bigint = ($1::bigint & 4294967295) AND objid::bigint = $2", IMPORT_LOCK, KEY))


async def test_a_caller_cancelled_at_any_moment_leaves_no_lock_behind(services: Services, database_url: str) -> None:
    accounts = AccountAdminRepository(services.db)
    observer = await asyncpg.connect(database_url)
    cancelled_while_asking = 0
    try:
        # Cancelled after 0, 1, 2, … turns of the event loop: before the question is sent, while its answer is on
        # the way, and after the lock is held (whose holder gives it back on the way out).
        for turns in range(60):
            got: list[bool] = []

            async def hold(got: list[bool] = got) -> None:
                async with accounts.session_lock(IMPORT_LOCK, KEY) as lock:
                    got.append(lock.taken)
                    await asyncio.sleep(10)

            task = asyncio.create_task(hold())
            for _ in range(turns):
                await asyncio.sleep(0)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            cancelled_while_asking += not got
            deadline = time.monotonic() + 5  # a connection ended by the cancel takes a moment to go away
            while await _held_by_anyone(observer) and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            assert await _held_by_anyone(observer) == 0, f"the lock outlived a caller cancelled after {turns} turns"
            async with accounts.session_lock(IMPORT_LOCK, KEY) as lock:
                assert lock.taken, f"the next caller was refused after a cancel after {turns} turns"
        assert cancelled_while_asking > 0  # some cancels landed before the lock was held
    finally:
        await observer.close()
