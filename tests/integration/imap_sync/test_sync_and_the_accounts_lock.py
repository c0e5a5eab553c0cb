"""A sync asked for while other work holds the account's lock (a draft pushed, a send's copy filed, changes
propagated) runs once that work lets the lock go; one asked for while a sync runs is left to that sync, which
goes again, so two syncs of one account never overlap and none is lost."""

from __future__ import annotations

import asyncio
import time

from plmail.db.repos.account_admin import SYNC_LOCK, AccountAdminRepository
from tests.integration.imap_sync.conftest import ImapSetup
from tests.support.imap_mail import message


async def _hold_the_lock(imap: ImapSetup, taken: asyncio.Event, release: asyncio.Event) -> None:
    """What a draft push or a propagation does: the account's lock for the length of its provider work."""
    async with AccountAdminRepository(imap.services.db).session_lock(SYNC_LOCK, imap.account_id) as lock:
        assert lock.taken
        taken.set()
        await release.wait()


async def test_a_sync_asked_for_while_a_draft_holds_the_lock_runs_when_it_is_let_go(imap: ImapSetup) -> None:
    imap.mail.append([message(i) for i in range(1, 4)])
    await imap.sync_all()
    assert await imap.count() == 3
    imap.mail.append([message(4, subject="arrived while a draft was pushed")])

    taken, release = asyncio.Event(), asyncio.Event()
    holder = asyncio.create_task(_hold_the_lock(imap, taken, release))
    try:
        await taken.wait()
        sync = asyncio.create_task(imap.sync())
        await asyncio.sleep(1.0)
        assert not sync.done(), "the sync gave up while the lock was held, and nothing would have run it again"
    finally:
        release.set()
        await holder
    touched = await asyncio.wait_for(sync, 30)

    assert touched, "the sync ran once the lock was free"
    assert await imap.count() == 4


async def test_a_sync_asked_for_while_a_sync_runs_is_left_to_that_sync(imap: ImapSetup) -> None:
    imap.mail.append([message(1)])
    await imap.sync_all()
    accounts = AccountAdminRepository(imap.services.db)

    taken, release = asyncio.Event(), asyncio.Event()
    holder = asyncio.create_task(_hold_the_lock(imap, taken, release))  # the running sync
    try:
        await taken.wait()
        started = time.monotonic()
        asked = asyncio.create_task(imap.sync())
        while not await accounts.resync_requested(imap.account_id):
            await asyncio.sleep(0.02)
        assert await accounts.take_resync(imap.account_id)  # what the running sync does between its passes
        touched = await asyncio.wait_for(asked, 10)
        waited = time.monotonic() - started
    finally:
        release.set()
        await holder

    assert touched == []  # it did not sync beside the running one
    assert waited < 5, f"it waited {waited:.1f} s after the running sync took its request"
