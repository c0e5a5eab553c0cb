"""Searching and fetching: UID and size listings, batches of 50, bodies byte for byte, large flag listings."""

from __future__ import annotations

import datetime as dt
import email
import re
from email import policy

from plmail.providers.imap import FETCH_BATCH, ImapClient
from tests.support.dovecot import DovecotUser
from tests.support.imap_mail import TRICKY_BODY, message, tricky_message
from tests.support.imap_proxy import imap_proxy

WHEN = dt.datetime(2026, 3, 14, 15, 9, 26, tzinfo=dt.UTC)


async def test_fetch_200_messages_in_batches_byte_exact(dovecot_user: DovecotUser) -> None:
    originals = [message(i, size=(i * 37) % 3000) for i in range(1, 201)]
    originals[41] = tricky_message(42)
    originals[99] = message(100, size=2_000_000)  # far larger than one read: the literal arrives in many pieces
    dovecot_user.deliver(originals, internaldate=WHEN)

    async with imap_proxy(dovecot_user.server.host, dovecot_user.server.port) as proxy:
        async with ImapClient(dovecot_user.imap(host=proxy.host, port=proxy.port)) as client:
            await client.login(dovecot_user.name, dovecot_user.password)
            state = await client.select("INBOX")
            assert state.exists == 200
            uids = await client.uid_search()
            assert uids == list(range(1, 201))
            fetched = await client.fetch_raw(uids)
        fetch_commands = [line for line in proxy.commands() if re.match(r"\S+ UID FETCH .*BODY\.PEEK\[\]", line)]

    assert len(fetch_commands) == 200 // FETCH_BATCH
    assert [m.uid for m in fetched] == uids
    for original, got in zip(originals, fetched, strict=True):
        assert got.raw == original
        assert got.size == len(original)
        assert got.internaldate == WHEN
        assert got.flags == {"\\Recent"}
        assert got.modseq is not None
    tricky = fetched[41]
    assert TRICKY_BODY in tricky.raw
    parsed = email.message_from_bytes(tricky.raw, policy=policy.compat32)
    assert parsed["X-Seq"] == "42"


async def test_fetch_peeks_and_skips_missing_uids(imap_client: ImapClient, dovecot_user: DovecotUser) -> None:
    dovecot_user.deliver([message(i) for i in range(1, 6)])
    await imap_client.select("INBOX")
    got = await imap_client.fetch_raw([5, 2, 2, 99])
    assert [m.uid for m in got] == [2, 5]
    assert all("\\Seen" not in m.flags for m in got)  # BODY.PEEK leaves messages unread
    with dovecot_user.peer() as peer:
        assert "\\Seen" not in peer.flags(2)
    assert await imap_client.fetch_raw([]) == []


async def test_uid_and_size_listings(imap_client: ImapClient, dovecot_user: DovecotUser) -> None:
    originals = {i: message(i, size=i * 1000) for i in range(1, 11)}
    dovecot_user.deliver(list(originals.values()))
    with dovecot_user.peer() as peer:
        peer.store(4, "+FLAGS", "(\\Deleted)")
        peer.expunge()  # UIDs 1..10 minus 4
    await imap_client.select("INBOX")
    below = await imap_client.sizes_below(6)
    assert list(below) == [1, 2, 3, 5]
    assert below == {uid: len(originals[uid]) for uid in (1, 2, 3, 5)}  # the server's RFC822.SIZE of each
    assert await imap_client.sizes_below(1) == {}
    assert list(await imap_client.sizes_below(9, low=4)) == [5, 6, 7, 8]  # a window under the floor
    assert await imap_client.sizes_below(5, low=5) == {}
    above = await imap_client.sizes_above(7)
    assert above == {uid: len(originals[uid]) for uid in (8, 9, 10)}
    # "11:*" matches the highest UID (10) as well: the listing must not report it as new
    assert await imap_client.sizes_above(10) == {}
    assert list(await imap_client.sizes_above(0)) == [1, 2, 3, 5, 6, 7, 8, 9, 10]
    assert await imap_client.uid_search("SUBJECT \"Test 7\"") == [7]
    assert await imap_client.uid_search('SUBJECT "Grüße"') == []  # non-ASCII criteria go with CHARSET UTF-8


async def test_search_without_esearch(dovecot_user: DovecotUser) -> None:
    dovecot_user.deliver([message(i) for i in range(1, 8)])
    async with ImapClient(dovecot_user.imap(ignore_capabilities=frozenset({"ESEARCH"}))) as client:
        await client.login(dovecot_user.name, dovecot_user.password)
        await client.select("INBOX")
        assert await client.uid_search() == list(range(1, 8))
        assert await client.uid_search("UID 1:3") == [1, 2, 3]


async def test_flag_listing_of_thousands(imap_client: ImapClient, dovecot_user: DovecotUser) -> None:
    """Thousands of short FETCH lines arrive in one read; aioimaplib parses each read recursively, one frame per
    line, so the client must feed it in slices."""
    dovecot_user.deliver([message(i, body=b"x\r\n") for i in range(1, 3001)], flags=["\\Seen"])
    state = await imap_client.select("INBOX")
    assert state.exists == 3000
    flags = await imap_client.fetch_flags()
    assert [f.uid for f in flags] == list(range(1, 3001))
    assert all("\\Seen" in f.flags for f in flags)
    assert len(await imap_client.uid_search("SEEN")) == 3000
