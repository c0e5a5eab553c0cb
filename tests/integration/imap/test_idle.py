"""IDLE and NOOP: changes made by another connection reach us."""

from __future__ import annotations

import asyncio
import time

import pytest

from plmail.providers.imap import ImapCapabilityError, ImapClient, ImapProtocolError, MailboxEvent
from tests.support.dovecot import DovecotUser
from tests.support.imap_mail import message
from tests.support.imap_proxy import imap_proxy


async def _later(delay: float, action: object) -> None:
    await asyncio.sleep(delay)
    await asyncio.to_thread(action)  # type: ignore[arg-type]


async def test_idle_sees_append_from_another_connection(imap_client: ImapClient, dovecot_user: DovecotUser) -> None:
    dovecot_user.deliver([message(1)])
    peer = dovecot_user.peer()
    try:
        started = time.monotonic()
        other = asyncio.create_task(_later(0.2, lambda: peer.append(message(2))))
        events: list[MailboxEvent] = []
        async with imap_client.idle("INBOX", timeout=5) as changes:
            async for event in changes:
                events.append(event)
                if event.kind == "exists":
                    break
        await other
        elapsed = time.monotonic() - started
    finally:
        peer.close()
    assert any(e.kind == "exists" and e.number == 2 for e in events)
    assert elapsed < 5
    assert imap_client.selected is not None
    assert imap_client.selected.readonly  # IDLE opened the mailbox read-only, it was not selected before
    # the connection is usable again, and the new message is there
    assert list(await imap_client.sizes_above(1)) == [2]


async def test_idle_reports_flag_changes_and_expunges(imap_client: ImapClient, dovecot_user: DovecotUser) -> None:
    dovecot_user.deliver([message(i) for i in range(1, 4)])
    await imap_client.select("INBOX")
    peer = dovecot_user.peer()

    def change() -> None:
        peer.store(1, "+FLAGS", "(\\Flagged)")
        peer.store(2, "+FLAGS", "(\\Deleted)")
        peer.expunge()

    try:
        other = asyncio.create_task(_later(0.1, change))
        seen: list[MailboxEvent] = []
        async with imap_client.idle("INBOX", timeout=5) as changes:
            async for event in changes:
                seen.append(event)
                if event.kind in {"vanished", "expunge"}:
                    break
        await other
    finally:
        peer.close()
    fetches = [e for e in seen if e.kind == "fetch"]
    assert any(e.uids == (1,) and e.flags and "\\Flagged" in e.flags for e in fetches)
    # with QRESYNC enabled the server names the UID instead of a sequence number
    assert any(e.kind == "vanished" and e.uids == (2,) for e in seen)


async def test_idle_is_renewed_and_ends_after_timeout(dovecot_user: DovecotUser) -> None:
    async with imap_proxy(dovecot_user.server.host, dovecot_user.server.port) as proxy:
        async with ImapClient(dovecot_user.imap(host=proxy.host, port=proxy.port)) as client:
            await client.login(dovecot_user.name, dovecot_user.password)
            peer = dovecot_user.peer()
            try:
                other = asyncio.create_task(_later(0.7, lambda: peer.append(message(1))))
                started = time.monotonic()
                events = []
                async with client.idle("INBOX", timeout=1.6, renew_after=0.25) as changes:
                    events = [event async for event in changes]
                elapsed = time.monotonic() - started
                await other
            finally:
                peer.close()
            assert await client.noop() == []
        lines = proxy.commands()
    assert 1.5 < elapsed < 3
    assert any(e.kind == "exists" for e in events)  # arrived across renewals, not lost in a DONE
    idles = [line for line in lines if line.endswith(" IDLE")]
    assert len(idles) >= 4
    assert lines.count("DONE") == len(idles)


async def test_commands_refused_while_idling(imap_client: ImapClient) -> None:
    async with imap_client.idle("INBOX", timeout=0.2) as changes:
        with pytest.raises(ImapProtocolError, match="IDLE"):
            await imap_client.noop()
        assert [e async for e in changes] == []
    assert await imap_client.noop() == []


async def test_idle_needs_the_capability(dovecot_user: DovecotUser) -> None:
    async with ImapClient(dovecot_user.imap(ignore_capabilities=frozenset({"IDLE"}))) as client:
        await client.login(dovecot_user.name, dovecot_user.password)
        with pytest.raises(ImapCapabilityError, match="noop"):
            async with client.idle("INBOX"):
                pass
        assert await client.noop() == []  # the lock was released


async def test_noop_collects_changes(imap_client: ImapClient, dovecot_user: DovecotUser) -> None:
    await imap_client.select("INBOX")
    assert dovecot_user.append([message(1), message(2)]) == [1, 2]
    events = await imap_client.noop()
    assert any(e.kind == "exists" and e.number == 2 for e in events)
