"""IDLE: new mail appended by another client is in the inbox within seconds, also after the server dropped
the connection, and never twice."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from plmail.app import create_app
from plmail.config import Settings
from plmail.db.repos.account_admin import IDLE_LEADER_LOCK, AccountAdminRepository
from plmail.domain.enums import QueueName
from plmail.providers.imap.repos.mailboxes import MailboxRepository
from plmail.providers.imap.session import ImapConnector
from plmail.providers.imap.watch import IdleSupervisor
from tests.conftest import running_lifespan
from tests.integration.imap_sync.conftest import ImapSetup
from tests.support.imap_mail import message


async def _until(check: Callable[[], Awaitable[bool]], timeout: float) -> float:
    started = time.monotonic()
    while not await check():
        assert time.monotonic() - started < timeout, "not in time"
        await asyncio.sleep(0.05)
    return time.monotonic() - started


async def test_new_mail_arrives_by_idle_within_seconds(imap: ImapSetup, settings: Settings, database_url: str
                                                       ) -> None:
    imap.mail.deliver([message(i) for i in range(1, 11)])
    services = imap.services
    app = create_app(settings, database_url, worker_queues=(QueueName.INGEST, QueueName.INGEST_BACKLOG),
                     services=services)
    idle = services.providers.get(IdleSupervisor)
    async with running_lifespan(app):
        # the sync queued when the account was added runs, finds the folders, and the inbox gets watched
        async def watching() -> bool:
            inbox = await services.db.fetchval(
                "SELECT id FROM mailbox WHERE account_id = $1 AND full_path = 'INBOX'", imap.account_id)
            return inbox is not None and inbox in idle.idling

        await _until(watching, 30)
        await _until(lambda: _stored(imap, 10), 30)  # the history came in through the import chain

        imap.mail.append([message(100)])
        took = await _until(lambda: _has(imap, "seq-100@plmail.test"), 5)
        print(f"\nIDLE: new mail stored {took:.2f} s after the append")

        # the server drops the connection; mail that arrives meanwhile is fetched once it is back
        await asyncio.to_thread(imap.mail.server.kick, imap.mail.name)
        imap.mail.append([message(101)])
        await _until(lambda: _has(imap, "seq-101@plmail.test"), 10)
        await _until(watching, 10)
        imap.mail.append([message(102)])
        await _until(lambda: _has(imap, "seq-102@plmail.test"), 5)
    assert await imap.count() == 13
    assert await imap.stored_ids() == imap.server_ids(["INBOX"])


async def _stored(imap: ImapSetup, count: int) -> bool:
    return await imap.count() >= count


async def _has(imap: ImapSetup, rfc: str) -> bool:
    return await imap.count("rfc_message_id = $2", rfc) > 0


async def test_the_idle_leader_on_another_node_hears_a_poke_at_once(imap: ImapSetup) -> None:
    """Two nodes (issue 36): the IDLE leader is this supervisor; the sync runs where the other node's supervisor
    lives, whose poke reaches the leader through NOTIFY, long before the leader's own 30 s look."""
    services = imap.services
    leader = IdleSupervisor(AccountAdminRepository(services.db), MailboxRepository(services.db),
                            services.providers.get(ImapConnector), services.sync.request, refresh_seconds=30.0)
    leader.start()
    try:
        async def leading() -> bool:
            return bool(await services.db.fetchval(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 AND granted",
                IDLE_LEADER_LOCK))
        await _until(leading, 10)
        await services.sync.run(imap.account_id)  # finds the folders; the other node's supervisor pokes
        inbox = await services.db.fetchval(
            "SELECT id FROM mailbox WHERE account_id = $1 AND full_path = 'INBOX'", imap.account_id)

        async def watched() -> bool:
            return inbox in leader.idling
        await _until(watched, 5)
    finally:
        await leader.stop()
