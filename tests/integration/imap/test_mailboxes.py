"""Folders: listing with special-use roles, hierarchy, non-ASCII names, SELECT/EXAMINE, STATUS, CREATE."""

from __future__ import annotations

import pytest

from plmail.providers.imap import ImapClient, ImapProtocolError
from tests.support.dovecot import DovecotUser
from tests.support.imap_mail import message


async def test_list_with_special_use(imap_client: ImapClient, dovecot_user: DovecotUser) -> None:
    dovecot_user.create_folder("All Mail")
    dovecot_user.create_folder("Projects/2026/Q4")
    boxes = {m.path: m for m in await imap_client.list_mailboxes()}
    roles = {path: m.special_use for path, m in boxes.items()}
    assert roles == {
        "INBOX": "\\Inbox",
        "Drafts": "\\Drafts",
        "Sent": "\\Sent",
        "Trash": "\\Trash",
        "Junk": "\\Junk",
        "Archive": "\\Archive",
        "All Mail": "\\All",
        "Projects": None,
        "Projects/2026": None,
        "Projects/2026/Q4": None,
    }
    q4 = boxes["Projects/2026/Q4"]
    assert q4.delimiter == "/"
    assert q4.segments == ("Projects", "2026", "Q4")
    assert q4.selectable


async def test_plain_list_fallback_keeps_roles(dovecot_user: DovecotUser) -> None:
    """Without LIST-EXTENDED we send a plain LIST; INBOX is still marked and Dovecot volunteers the roles."""
    async with ImapClient(dovecot_user.imap(ignore_capabilities=frozenset({"LIST-EXTENDED"}))) as client:
        await client.login(dovecot_user.name, dovecot_user.password)
        roles = {m.path: m.special_use for m in await client.list_mailboxes()}
    assert roles["INBOX"] == "\\Inbox"
    assert roles["Sent"] == "\\Sent"


async def test_non_ascii_and_quoted_names_round_trip(imap_client: ImapClient, dovecot_user: DovecotUser) -> None:
    names = ["Entwürfe/Ärger & Co", 'Say "hi"', "日本語", "back\\slash", "Tom & Jerry", "To do* now"]
    for name in names:
        await imap_client.create_mailbox(name)
    listed = {m.path for m in await imap_client.list_mailboxes()}
    assert set(names) <= listed
    # the server stores them in modified UTF-7, as another client sees them
    with dovecot_user.peer() as peer:
        _, data = peer.conn.list('""', '"Entw*"')
    assert b"Entw&APw-rfe/&AMQ-rger &- Co" in b" ".join(d for d in data if isinstance(d, bytes))
    for name in names:
        await imap_client.append(name, message(1))
        assert (await imap_client.select(name)).exists == 1


async def test_select_reports_uidvalidity_and_counts(imap_client: ImapClient, dovecot_user: DovecotUser) -> None:
    dovecot_user.deliver([message(i) for i in range(1, 6)], flags=["\\Seen"])
    with dovecot_user.peer() as peer:
        _, data = peer.conn.status("INBOX", "(UIDVALIDITY UIDNEXT)")
    state = await imap_client.select("INBOX")
    assert f"UIDVALIDITY {state.uidvalidity}".encode() in data[0]
    assert state.exists == 5
    assert state.uidnext == 6
    assert state.highestmodseq is not None
    assert not state.readonly
    assert "\\Seen" in state.permanent_flags
    assert imap_client.selected == state

    examined = await imap_client.select("Archive", readonly=True)
    assert examined.readonly
    assert examined.exists == 0
    with pytest.raises(ImapProtocolError, match="read-only"):
        await imap_client.store_flags([1], add=["\\Seen"])


async def test_status_without_selecting(imap_client: ImapClient, dovecot_user: DovecotUser) -> None:
    dovecot_user.deliver([message(i) for i in range(1, 4)], folder="Archive")
    dovecot_user.deliver([message(4)], folder="Archive", flags=["\\Seen"])
    status = await imap_client.status("Archive")
    assert (status.messages, status.unseen, status.uidnext) == (4, 3, 5)
    assert status.uidvalidity and status.highestmodseq
    assert imap_client.selected is None


async def test_select_missing_folder(imap_client: ImapClient) -> None:
    await imap_client.select("INBOX")
    with pytest.raises(ImapProtocolError) as caught:
        await imap_client.select("Does/Not/Exist")
    assert "Does/Not/Exist" in str(caught.value)
    assert "exist" in str(caught.value)  # the server's own words; Dovecot sends no NONEXISTENT code here
    assert imap_client.selected is None  # a failed SELECT leaves nothing selected
    with pytest.raises(ImapProtocolError, match="No folder is open"):
        await imap_client.uid_search()


async def test_create_existing_folder(imap_client: ImapClient) -> None:
    await imap_client.create_mailbox("Receipts")
    await imap_client.create_mailbox("Receipts", exist_ok=True)
    with pytest.raises(ImapProtocolError) as caught:
        await imap_client.create_mailbox("Receipts")
    assert caught.value.code == "ALREADYEXISTS"
