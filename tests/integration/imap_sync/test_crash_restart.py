"""kill -9 of `plmail serve` in the middle of a first import from a real Dovecot: after a restart the import moves
again within 60 s (the job the dead worker left active is put back at once, instead of after its timeout), and it
ends with exactly the server's messages, each once (issue 19)."""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path

import pytest

from plmail.config import Settings
from plmail.jobs.workers import ORPHAN_SWEEP_SECONDS
from plmail.services import Services
from tests.integration.imap_sync.conftest import ImapSetup
from tests.support.imap_mail import message
from tests.support.serve import ServeProcess

MESSAGES = 1_000
RESUME_WITHIN = 60.0


async def _count(imap: ImapSetup) -> int:
    return await imap.count()


async def _wait_for(imap: ImapSetup, at_least: int, timeout: float, process: ServeProcess) -> float:
    started = time.monotonic()
    while await _count(imap) < at_least:
        assert process.proc is not None and process.proc.poll() is None, process.log()
        if time.monotonic() - started > timeout:
            pytest.fail(f"{await _count(imap)} of {at_least} messages after {timeout:.0f} s:\n{process.log()}")
        await asyncio.sleep(0.05)
    return time.monotonic() - started


async def _wait_for_active_job(services: Services, process: ServeProcess) -> None:
    started = time.monotonic()
    while not await services.db.fetchval("SELECT count(*) FROM saq_jobs WHERE status = 'active'"):
        assert time.monotonic() - started < 30, process.log()
        await asyncio.sleep(0.01)


def _put_back(process: ServeProcess) -> set[str]:
    """The job keys the process's sweeps logged as left active by a dead worker and put back."""
    keys: set[str] = set()
    for line in process.log_path.read_text(errors="replace").splitlines():
        if "left active by a worker that is gone, put back: " in line:
            keys.update(line.rsplit("put back: ", 1)[1].split(", "))
    return keys


def _wait_until_put_back(process: ServeProcess, keys: set[str], *, within: float) -> set[str]:
    """Those of `keys` not put back within the time."""
    deadline = time.monotonic() + within
    while (missing := keys - _put_back(process)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return missing


async def test_a_killed_server_resumes_its_import_within_a_minute(
        imap: ImapSetup, services: Services, settings: Settings, database_url: str, tmp_path: Path) -> None:
    imap.mail.deliver([message(i) for i in range(1, MESSAGES + 1)])
    serve_dir = tmp_path / "serve"
    serve_dir.mkdir()
    shutil.copy(settings.secret_key_path, serve_dir / "secret.key")  # the account password is sealed with it
    first = ServeProcess(serve_dir, database_url=database_url).start()
    try:
        first.wait_healthy()
        await services.sync.request(imap.account_id)
        await _wait_for(imap, 300, 60, first)
        await _wait_for_active_job(services, first)  # kill inside a page, not in the moment between two
    finally:
        first.kill_hard()  # mid-import, no chance to tidy up
    at_kill = await _count(imap)
    assert at_kill < MESSAGES, "the import finished before it could be interrupted"
    left_active = {row["key"] for row in await services.db.fetch("SELECT key FROM saq_jobs WHERE status = 'active'")}
    assert left_active  # what the dead worker was running

    second = ServeProcess(serve_dir, database_url=database_url).start()
    try:
        second.wait_healthy()
        resumed = await _wait_for(imap, at_kill + 1, RESUME_WITHIN, second)
        assert resumed < RESUME_WITHIN
        await _wait_for(imap, MESSAGES, 120, second)
        # The rest of the chain may have been queued before the kill and finish the import on its own; the page the
        # dead worker held must still be put back, not left active until its timeout.
        missing = _wait_until_put_back(second, left_active, within=3 * ORPHAN_SWEEP_SECONDS)
        assert not missing, f"not put back: {missing}\n{second.log()}"
    finally:
        assert second.terminate() == 0
    assert await imap.stored_ids() == imap.server_ids(["INBOX"])
    assert await imap.count() == MESSAGES
    duplicates = await services.db.fetchval(
        "SELECT count(*) FROM (SELECT rfc_message_id FROM message GROUP BY rfc_message_id HAVING count(*) > 1) d")
    assert duplicates == 0
