"""An import interrupted anywhere (a cancelled job, a killed process) finishes with no duplicates and no gaps."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import asyncpg

from plmail.config import Settings
from tests.integration.imap_sync.conftest import ImapSetup
from tests.support.imap_mail import message


async def test_a_page_cancelled_anywhere_is_simply_done_again(imap: ImapSetup) -> None:
    imap.mail.deliver([message(i, size=4_000) for i in range(1, 401)])
    imap.mail.deliver([message(i) for i in range(501, 561)], folder="Sent")
    await imap.sync()
    for delay in (0.0, 0.005, 0.02, 0.05, 0.1, 0.2):
        task = asyncio.create_task(imap.import_page())
        await asyncio.sleep(delay)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    await imap.import_all()
    assert await imap.stored_ids() == imap.server_ids(["INBOX", "Sent"])
    assert await imap.count() == 460


def _cli(settings: Settings, database_url: str, *args: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
    env.update(PLMAIL_DATA_DIR=str(settings.data_dir), PLMAIL_DATABASE_URL=database_url)
    return subprocess.Popen([sys.executable, "-m", "plmail.cli", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


async def test_a_killed_import_process_finishes_when_started_again(
    imap: ImapSetup, settings: Settings, database_url: str, tmp_path: Path,
) -> None:
    imap.mail.deliver([message(i) for i in range(1, 1201)])
    imap.mail.deliver([message(i) for i in range(2001, 2301)], folder="Archive")
    conn = await asyncpg.connect(database_url)
    try:
        first = _cli(settings, database_url, "sync", "--account", str(imap.account_id), "--wait")
        deadline = time.monotonic() + 60
        while await conn.fetchval("SELECT count(*) FROM message WHERE account_id = $1", imap.account_id) < 300:
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline
            await asyncio.sleep(0.02)
        first.send_signal(signal.SIGKILL)  # mid-import, no chance to tidy up
        first.wait(10)
        partial = await conn.fetchval("SELECT count(*) FROM message WHERE account_id = $1", imap.account_id)
        assert 300 <= partial < 1500
        second = _cli(settings, database_url, "sync", "--account", str(imap.account_id), "--wait")
        out, err = second.communicate(timeout=120)
        assert second.returncode == 0, err.decode()
        assert b"is up to date: 1,500 messages" in out
        assert b"importing" in err  # the progress line
    finally:
        await conn.close()
    assert await imap.stored_ids() == imap.server_ids(["INBOX", "Archive"])
    assert await imap.count() == 1500
