"""Changing the server: flags (with CONDSTORE), MOVE and its COPY+EXPUNGE fallbacks, APPEND."""

from __future__ import annotations

import datetime as dt

import pytest

from plmail.providers.imap import ImapCapabilityError, ImapClient, ImapProtocolError
from tests.support.dovecot import DovecotUser
from tests.support.imap_mail import message


async def test_store_flags_seen_by_another_client(imap_client: ImapClient, dovecot_user: DovecotUser) -> None:
    dovecot_user.deliver([message(i) for i in range(1, 4)])
    await imap_client.select("INBOX")
    await imap_client.store_flags([1, 2], add=["\\Seen", "\\Flagged", "$Label1"])
    await imap_client.store_flags([2], remove=["\\Flagged"])
    with dovecot_user.peer() as peer:
        assert peer.flags(1) >= {"\\Seen", "\\Flagged", "$Label1"}
        assert "\\Flagged" not in peer.flags(2)
        assert "\\Seen" not in peer.flags(3)
    states = {s.uid: s for s in await imap_client.fetch_flags([1, 2, 3])}
    assert states[1].flags >= {"\\Seen", "\\Flagged", "$Label1"}
    assert states[2].flags >= {"\\Seen", "$Label1"}
    assert "\\Flagged" not in states[2].flags


async def test_fetch_flags_changed_since(imap_client: ImapClient, dovecot_user: DovecotUser) -> None:
    dovecot_user.deliver([message(i) for i in range(1, 11)])
    state = await imap_client.select("INBOX")
    assert state.highestmodseq is not None
    before = max(s.modseq or 0 for s in await imap_client.fetch_flags())
    with dovecot_user.peer() as peer:  # another client reads two messages
        peer.store(3, "+FLAGS", "(\\Seen)")
        peer.store(7, "+FLAGS", "(\\Flagged)")
    await imap_client.noop()
    changed = await imap_client.fetch_flags(changedsince=before)
    summary = [(s.uid, "\\Seen" in s.flags, "\\Flagged" in s.flags) for s in changed]
    assert summary == [(3, True, False), (7, False, True)]
    assert all(s.modseq and s.modseq > before for s in changed)
    assert await imap_client.fetch_flags("1:2", changedsince=max(s.modseq or 0 for s in changed)) == []
    status = await imap_client.status("Archive")  # the other mailbox's counter, for completeness
    assert status.highestmodseq is not None


async def test_changed_since_needs_condstore(dovecot_user: DovecotUser) -> None:
    dovecot_user.deliver([message(1)])
    hidden = frozenset({"CONDSTORE", "QRESYNC"})
    async with ImapClient(dovecot_user.imap(ignore_capabilities=hidden)) as client:
        await client.login(dovecot_user.name, dovecot_user.password)
        assert not client.condstore
        state = await client.select("INBOX")
        assert state.highestmodseq is None
        assert (await client.fetch_flags())[0].modseq is None
        with pytest.raises(ImapCapabilityError, match="CONDSTORE"):
            await client.fetch_flags(changedsince=1)


async def test_invalid_flags_are_refused_locally(imap_client: ImapClient, dovecot_user: DovecotUser) -> None:
    dovecot_user.deliver([message(1)])
    await imap_client.select("INBOX")
    for bad in ["two words", "(x)", "\\*", "Grün", ""]:
        with pytest.raises(ValueError, match="flag"):
            await imap_client.store_flags([1], add=[bad])


async def test_move_returns_copyuid_mapping(imap_client: ImapClient, dovecot_user: DovecotUser) -> None:
    dovecot_user.deliver([message(i) for i in range(1, 6)])
    with dovecot_user.peer() as peer:
        peer.append(message(100), "Archive")  # the target already holds UID 1
    await imap_client.select("INBOX")
    result = await imap_client.move([2, 4, 5], "Archive")
    assert result.method == "move"
    assert result.expunged
    assert result.uid_map == {2: 2, 4: 3, 5: 4}
    with dovecot_user.peer() as peer:
        assert peer.uids("INBOX") == [1, 3]
        assert peer.uids("Archive") == [1, 2, 3, 4]
        _, data = peer.conn.status("Archive", "(UIDVALIDITY)")
        assert f"UIDVALIDITY {result.uidvalidity}".encode() in data[0]
        assert b"X-Seq: 4" in peer.raw(result.uid_map[4], "Archive")
    assert await imap_client.uid_search() == [1, 3]


async def test_move_fallback_copy_expunge_with_uidplus(dovecot_user: DovecotUser) -> None:
    dovecot_user.deliver([message(i) for i in range(1, 6)])
    with dovecot_user.peer() as peer:
        peer.store(1, "+FLAGS", "(\\Deleted)")  # another client's pending deletion must survive our expunge
    async with ImapClient(dovecot_user.imap(ignore_capabilities=frozenset({"MOVE"}))) as client:
        await client.login(dovecot_user.name, dovecot_user.password)
        assert not client.has("MOVE")
        await client.select("INBOX")
        result = await client.move([2, 3], "Trash")
    assert result.method == "copy+expunge"
    assert result.expunged
    assert result.uid_map == {2: 1, 3: 2}
    with dovecot_user.peer() as peer:
        assert peer.uids("INBOX") == [1, 4, 5]
        assert "\\Deleted" in peer.flags(1)
        assert peer.uids("Trash") == [1, 2]
        assert "\\Deleted" not in peer.flags(1, "Trash")


async def test_move_fallback_without_uidplus_is_careful(dovecot_user: DovecotUser) -> None:
    dovecot_user.deliver([message(i) for i in range(1, 6)])
    hidden = frozenset({"MOVE", "UIDPLUS"})
    async with ImapClient(dovecot_user.imap(ignore_capabilities=hidden)) as client:
        await client.login(dovecot_user.name, dovecot_user.password)
        await client.select("INBOX")
        clean = await client.move([2], "Trash")  # nothing else is \Deleted: a plain EXPUNGE is safe
        with dovecot_user.peer() as peer:
            peer.store(1, "+FLAGS", "(\\Deleted)")
        await client.noop()
        careful = await client.move([3], "Trash")  # UID 1 is someone else's \Deleted: no EXPUNGE
    assert clean.expunged
    assert not careful.expunged
    with dovecot_user.peer() as peer:
        assert peer.uids("INBOX") == [1, 3, 4, 5]
        assert "\\Deleted" in peer.flags(3)
        assert len(peer.uids("Trash")) == 2


async def test_move_to_missing_folder(imap_client: ImapClient, dovecot_user: DovecotUser) -> None:
    dovecot_user.deliver([message(1)])
    await imap_client.select("INBOX")
    with pytest.raises(ImapProtocolError) as caught:
        await imap_client.move([1], "Nowhere")
    assert caught.value.code == "TRYCREATE"
    assert await imap_client.uid_search() == [1]


async def test_expunge(imap_client: ImapClient, dovecot_user: DovecotUser) -> None:
    dovecot_user.deliver([message(i) for i in range(1, 5)])
    await imap_client.select("INBOX")
    await imap_client.store_flags([1, 2, 3], add=["\\Deleted"])
    assert await imap_client.expunge([2]) is True
    assert await imap_client.uid_search() == [1, 3, 4]
    assert await imap_client.expunge() is True
    assert await imap_client.uid_search() == [4]


async def test_append_returns_appenduid(imap_client: ImapClient, dovecot_user: DovecotUser) -> None:
    raw = message(7, body=b"caf\xc3\xa9 \xe2\x82\xac\r\n{3}\r\nabc\r\n", size=5000)
    when = dt.datetime(2025, 12, 24, 18, 30, 5, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    result = await imap_client.append("Sent", raw, flags=["\\Seen", "$Forwarded"], date=when)
    again = await imap_client.append("Sent", message(8))
    assert result.uid == 1
    assert again.uid == 2
    assert result.uidvalidity == again.uidvalidity
    with dovecot_user.peer() as peer:
        assert peer.raw(1, "Sent") == raw
        assert peer.flags(1, "Sent") >= {"\\Seen", "$Forwarded"}
    await imap_client.select("Sent")
    got = (await imap_client.fetch_raw([1]))[0]
    assert got.internaldate == when
    assert got.raw == raw
    with pytest.raises(ValueError, match="timezone"):
        await imap_client.append("Sent", raw, date=dt.datetime(2025, 1, 1))
