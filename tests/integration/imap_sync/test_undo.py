"""Undo inside the toast's window: the archive is held back from the server and withdrawn, so Dovecot never sees
the message leave INBOX; an undo after the change reached the server sends the reverse move."""

from __future__ import annotations

from datetime import timedelta

from plmail.domain.errors import NotFoundError
from tests.integration.imap_sync.conftest import ImapSetup, message_ids
from tests.support.imap_mail import message


def _folders(imap: ImapSetup, rfc: str) -> set[str]:
    with imap.mail.peer() as peer:
        return {folder for folder in ("INBOX", "Archive") if rfc in message_ids(peer.conn, folder)}


def _inbox_uids(imap: ImapSetup) -> list[bytes]:
    with imap.mail.peer() as peer:
        peer.conn.select("INBOX", readonly=True)
        typ, data = peer.conn.uid("SEARCH", "ALL")
        assert typ == "OK"
        return data[0].split()


async def test_archive_undone_inside_the_window_never_reaches_dovecot(imap: ImapSetup) -> None:
    imap.mail.deliver([message(1), message(2)])
    await imap.sync_all()
    ops, user = imap.services.operations, imap.user.id
    first = await imap.message_id_of("seq-1@plmail.test")
    thread_id = await imap.services.db.fetchval("SELECT thread_id FROM message WHERE id = $1", first)
    uids_before = _inbox_uids(imap)

    with ops.undoable() as ticket:
        await ops.archive(user, thread_ids=[thread_id])
    assert ticket.used
    assert await imap.labels_of("seq-1@plmail.test") == {"archive"}  # the user sees it archived at once
    assert await imap.propagate() == 0  # the propagator runs (the job queued with the action) but waits
    assert _folders(imap, "seq-1@plmail.test") == {"INBOX"}

    await ops.undo(user, ticket.key)
    assert await imap.labels_of("seq-1@plmail.test") == {"inbox"}
    await imap.services.db.execute("UPDATE provider_change SET hold_until = now() - interval '1 second'")
    await imap.propagate()  # after the window: nothing is left to tell the server
    assert await imap.count("TRUE") == 2
    assert _folders(imap, "seq-1@plmail.test") == {"INBOX"}
    assert _inbox_uids(imap) == uids_before  # never moved out and back: the same UIDs
    pending = await imap.services.db.fetchval("SELECT count(*) FROM provider_change WHERE done_at IS NULL")
    assert pending == 0
    try:
        await ops.undo(user, ticket.key)
        raise AssertionError("an action can be undone only once")
    except NotFoundError:
        pass


async def test_without_undo_the_archive_reaches_dovecot_when_the_window_ends(imap: ImapSetup) -> None:
    imap.mail.deliver([message(3)])
    await imap.sync_all()
    ops, user = imap.services.operations, imap.user.id
    mid = await imap.message_id_of("seq-3@plmail.test")
    with ops.undoable(window=timedelta(seconds=0)) as ticket:
        await ops.archive(user, message_ids=[mid])
    await imap.propagate()
    assert _folders(imap, "seq-3@plmail.test") == {"Archive"}
    # Undo after the change reached the server: the reverse move is sent.
    await ops.undo(user, ticket.key)
    await imap.propagate()
    assert _folders(imap, "seq-3@plmail.test") == {"INBOX"}
    assert await imap.labels_of("seq-3@plmail.test") == {"inbox"}
