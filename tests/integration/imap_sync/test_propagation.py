"""What the user does in plmail reaches the server: flags for star and read, moves for archive, trash, spam
and snooze, a custom label stays in the database, and removing the location label finds a new home in the
seed's order. Checked with a second, independent IMAP connection."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from plmail.domain.enums import LabelRole
from tests.integration.imap_sync.conftest import ImapSetup, message_ids
from tests.support.imap_mail import message


async def _setup(imap: ImapSetup) -> None:
    imap.mail.deliver([message(i) for i in range(1, 9)])
    imap.mail.deliver([message(i) for i in (21, 22)], folder="Receipts")
    imap.mail.create_folder("Projects")
    await imap.sync_all()


def _where(imap: ImapSetup, rfc: str) -> set[str]:
    """The folders holding a message on the server."""
    with imap.mail.peer() as peer:
        return {folder for folder in ("INBOX", "Archive", "Trash", "Junk", "Receipts", "Projects")
                if rfc in message_ids(peer.conn, folder)}


async def _server_flags(imap: ImapSetup, rfc: str) -> set[str]:
    row = await imap.services.db.fetchrow(
        "SELECT mb.full_path, m.provider_key::bigint AS imap_uid "
        "FROM message m JOIN mailbox mb ON mb.id = m.mailbox_id "
        "WHERE m.account_id = $1 AND m.rfc_message_id = $2", imap.account_id, rfc)
    assert row is not None
    return imap.mail.peer().flags(row["imap_uid"], row["full_path"])


async def _uid_matches_server(imap: ImapSetup, rfc: str) -> None:
    row = await imap.services.db.fetchrow(
        "SELECT mb.full_path, m.provider_key::bigint AS imap_uid "
        "FROM message m JOIN mailbox mb ON mb.id = m.mailbox_id "
        "WHERE m.account_id = $1 AND m.rfc_message_id = $2", imap.account_id, rfc)
    assert row is not None and row["imap_uid"] is not None
    assert f"<{rfc}>".encode() in imap.mail.peer().raw(row["imap_uid"], row["full_path"])


@pytest.mark.parametrize("move", [True, False], ids=["MOVE", "COPY+EXPUNGE"])
async def test_archive_trash_spam_star_read_reach_the_server(imap: ImapSetup, move: bool) -> None:
    if not move:
        await imap.services.db.execute(
            "UPDATE account SET settings = jsonb_set(settings, '{imap,ignore_capabilities}', '[\"MOVE\"]') "
            "WHERE id = $1", imap.account_id)
    await _setup(imap)
    ops = imap.services.operations
    user = imap.user.id
    ids = {n: await imap.message_id_of(f"seq-{n}@plmail.test") for n in range(1, 9)}
    await ops.archive(user, message_ids=[ids[1]])
    await ops.trash(user, message_ids=[ids[2]])
    await ops.spam(user, message_ids=[ids[3]])
    await ops.set_starred(user, True, message_ids=[ids[4]])
    await ops.set_seen(user, True, message_ids=[ids[5]])
    assert await imap.propagate() == 5
    assert _where(imap, "seq-1@plmail.test") == {"Archive"}
    assert _where(imap, "seq-2@plmail.test") == {"Trash"}
    assert _where(imap, "seq-3@plmail.test") == {"Junk"}
    assert "\\Flagged" in await _server_flags(imap, "seq-4@plmail.test")
    assert "\\Seen" in await _server_flags(imap, "seq-5@plmail.test")
    for n in (1, 2, 3):
        await _uid_matches_server(imap, f"seq-{n}@plmail.test")  # COPYUID told us the new UID
    await ops.set_starred(user, False, message_ids=[ids[4]])
    await ops.untrash(user, message_ids=[ids[2]])
    await imap.propagate()
    assert "\\Flagged" not in await _server_flags(imap, "seq-4@plmail.test")
    assert _where(imap, "seq-2@plmail.test") == {"INBOX"}
    # the next sync knows where they went: nothing is imported a second time, nothing vanishes
    await imap.sync_all()
    assert await imap.count() == 10
    assert await imap.stored_ids() == imap.server_ids(["INBOX", "Archive", "Trash", "Junk", "Receipts"])
    pending = await imap.services.db.fetchval(
        "SELECT count(*) FROM provider_change WHERE account_id = $1 AND done_at IS NULL", imap.account_id)
    assert pending == 0


async def test_snooze_moves_out_of_the_inbox_and_waking_brings_it_back(imap: ImapSetup) -> None:
    await _setup(imap)
    message_id = await imap.message_id_of("seq-6@plmail.test")
    thread_id = await imap.services.db.fetchval("SELECT thread_id FROM message WHERE id = $1", message_id)
    await imap.services.operations.snooze(imap.user.id, [thread_id], datetime.now(UTC) + timedelta(days=1))
    await imap.propagate()
    # Snoozed has no provider folder: with the Inbox label gone, the message lives in the Archive
    assert _where(imap, "seq-6@plmail.test") == {"Archive"}
    assert await imap.labels_of("seq-6@plmail.test") == {LabelRole.SNOOZED.value}
    await imap.services.operations.wake(imap.user.id, [thread_id])
    await imap.propagate()
    assert _where(imap, "seq-6@plmail.test") == {"INBOX"}
    assert "\\Seen" not in await _server_flags(imap, "seq-6@plmail.test")


async def test_labels_stay_in_the_database_until_the_location_label_goes(imap: ImapSetup) -> None:
    await _setup(imap)
    ops = imap.services.operations
    user = imap.user.id
    labels = {r["name"]: r["id"] for r in await imap.services.db.fetch(
        "SELECT id, name FROM label WHERE user_id = $1 AND role IS NULL", user)}
    plain = await imap.services.labels.find_or_create(user, "No folder")
    receipt = await imap.message_id_of("seq-21@plmail.test")

    await ops.add_label(user, labels["Projects"], message_ids=[receipt])
    await ops.add_label(user, plain, message_ids=[receipt])
    await imap.propagate()
    assert _where(imap, "seq-21@plmail.test") == {"Receipts"}  # the location label is still there

    await ops.remove_label(user, labels["Receipts"], message_ids=[receipt])
    await imap.propagate()
    # the most recently added own label with a folder is the new home; "No folder" has none
    assert _where(imap, "seq-21@plmail.test") == {"Projects"}

    await ops.remove_label(user, labels["Projects"], message_ids=[receipt])
    await imap.propagate()
    assert _where(imap, "seq-21@plmail.test") == {"Archive"}  # nothing with a folder left
    assert await imap.labels_of("seq-21@plmail.test") == {"No folder"}

    # a remaining Trash label wins over every other place
    other = await imap.message_id_of("seq-22@plmail.test")
    trash = (await imap.services.labels.role_ids(user))[LabelRole.TRASH]
    await ops.change_labels(user, [other], add={trash, labels["Projects"]}, remove={labels["Receipts"]})
    await imap.propagate()
    assert _where(imap, "seq-22@plmail.test") == {"Trash"}
    await imap.sync_all()
    assert await imap.count() == 10
