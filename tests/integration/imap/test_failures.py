"""Connections that break: cut mid-fetch, kicked by the server, gone silent, cancelled by the caller."""

from __future__ import annotations

import asyncio
import time

import pytest

from plmail.providers.imap import ImapClient, ImapConnectionError
from tests.support.dovecot import DovecotUser
from tests.support.imap_mail import message
from tests.support.imap_proxy import imap_proxy


async def test_connection_cut_mid_fetch(dovecot_user: DovecotUser) -> None:
    originals = [message(i, size=20_000) for i in range(1, 101)]
    dovecot_user.deliver(originals)
    async with imap_proxy(dovecot_user.server.host, dovecot_user.server.port) as proxy:
        client = ImapClient(dovecot_user.imap(host=proxy.host, port=proxy.port))
        await client.connect()
        await client.login(dovecot_user.name, dovecot_user.password)
        await client.select("INBOX")
        proxy.cut_after(300_000)  # in the middle of the second batch of 50
        with pytest.raises(ImapConnectionError, match="dropped") as caught:
            await client.fetch_raw(range(1, 101))
        assert caught.value.retryable
        assert not client.is_open
        with pytest.raises(ImapConnectionError):
            await client.noop()  # a broken connection stays broken
        await client.close()

    # the caller reconnects and resumes: nothing was lost or changed on the server
    async with ImapClient(dovecot_user.imap()) as again:
        await again.login(dovecot_user.name, dovecot_user.password)
        await again.select("INBOX")
        fetched = await again.fetch_raw(range(1, 101))
    assert [m.raw for m in fetched] == originals


async def test_kicked_by_the_server_while_idling(imap_client: ImapClient, dovecot_user: DovecotUser) -> None:
    async with imap_client.idle("INBOX", timeout=10) as changes:
        kick = asyncio.create_task(asyncio.to_thread(dovecot_user.server.kick, dovecot_user.name))
        started = time.monotonic()
        with pytest.raises(ImapConnectionError) as caught:
            async for _ in changes:
                pass
        await kick
    assert time.monotonic() - started < 5
    assert caught.value.retryable
    assert "the server said" in str(caught.value)
    assert not imap_client.is_open


async def test_silent_server_times_out(dovecot_user: DovecotUser) -> None:
    async with imap_proxy(dovecot_user.server.host, dovecot_user.server.port) as proxy:
        client = ImapClient(dovecot_user.imap(host=proxy.host, port=proxy.port, timeout=0.3))
        await client.connect()
        await client.login(dovecot_user.name, dovecot_user.password)
        await client.select("INBOX")
        proxy.freeze()
        started = time.monotonic()
        with pytest.raises(ImapConnectionError, match="stopped answering") as caught:
            await client.uid_search()
        assert 0.25 < time.monotonic() - started < 2
        assert caught.value.retryable
        assert not client.is_open
        await client.close()


async def test_slow_but_steady_response_is_not_a_timeout(dovecot_user: DovecotUser) -> None:
    """The timeout counts silence, not the whole command: a big fetch that keeps arriving is fine."""
    dovecot_user.deliver([message(i, size=200_000) for i in range(1, 11)])
    async with imap_proxy(dovecot_user.server.host, dovecot_user.server.port) as proxy:
        client = ImapClient(dovecot_user.imap(host=proxy.host, port=proxy.port, timeout=0.4))
        async with client:
            await client.login(dovecot_user.name, dovecot_user.password)
            await client.select("INBOX")

            async def trickle() -> None:  # pause the flow often, each pause shorter than the timeout
                for _ in range(8):
                    proxy.freeze()
                    await asyncio.sleep(0.15)
                    proxy.thaw()
                    await asyncio.sleep(0.01)

            pauses = asyncio.create_task(trickle())
            started = time.monotonic()
            fetched = await client.fetch_raw(range(1, 11))
            await pauses
            assert len(fetched) == 10
            assert time.monotonic() - started > 0.4  # longer in total than the timeout


async def test_cancelled_command_closes_the_connection(dovecot_user: DovecotUser) -> None:
    async with imap_proxy(dovecot_user.server.host, dovecot_user.server.port) as proxy:
        client = ImapClient(dovecot_user.imap(host=proxy.host, port=proxy.port))
        await client.connect()
        await client.login(dovecot_user.name, dovecot_user.password)
        await client.select("INBOX")
        proxy.freeze()
        task = asyncio.create_task(client.noop())
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not client.is_open  # its answer could arrive later and be taken for the next command's
        await client.close()
