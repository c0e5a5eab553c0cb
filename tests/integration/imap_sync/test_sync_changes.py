"""What other clients do on the server shows after the next sync: deletes, flags, new folders, moves, and a
folder renumbered under a new UIDVALIDITY, without duplicating mail or losing its labels."""

from __future__ import annotations

import pytest

from plmail.domain.enums import LabelRole
from tests.integration.imap_sync.conftest import ImapSetup, add_account
from tests.support.dovecot import DovecotUser
from tests.support.imap_mail import message


async def _setup(imap: ImapSetup) -> None:
    imap.mail.deliver([message(i) for i in range(1, 31)])
    imap.mail.deliver([message(i) for i in range(101, 111)], folder="Projects")
    await imap.sync_all()
    assert await imap.count() == 40


async def _state(imap: ImapSetup, rfc_id: str) -> tuple[bool, bool]:
    row = await imap.services.db.fetchrow(
        "SELECT seen_at IS NOT NULL AS seen, starred_at IS NOT NULL AS starred FROM message "
        "WHERE account_id = $1 AND rfc_message_id = $2", imap.account_id, rfc_id)
    assert row is not None
    return row["seen"], row["starred"]


def _uid(mail: DovecotUser, seq: int, folder: str = "INBOX") -> int:
    with mail.peer() as peer:
        peer.select(folder, readonly=True)
        typ, data = peer.conn.uid("SEARCH", "HEADER", "Message-ID", f"seq-{seq}@plmail.test")
        assert typ == "OK" and data[0], (seq, folder)
        return int(data[0].split()[0])


async def test_a_server_side_delete_is_reflected(imap: ImapSetup) -> None:
    await _setup(imap)
    message_id = await imap.message_id_of("seq-3@plmail.test")
    imap.mail.peer().store(_uid(imap.mail, 3), "+FLAGS", "(\\Deleted)")
    imap.mail.peer().expunge()
    await imap.sync()
    assert await imap.count() == 39
    assert "seq-3@plmail.test" not in (await imap.stored_ids())["INBOX"]
    changes = await imap.services.db.fetch(
        "SELECT change_type FROM jmap_change_log WHERE account_id = $1 AND object_type = 'Email' AND entity_id = $2",
        imap.account_id, str(message_id))
    assert "destroyed" in {r["change_type"] for r in changes}


@pytest.mark.parametrize("condstore", [True, False], ids=["condstore", "flag-listing"])
async def test_flag_changes_by_another_client_are_reflected(imap: ImapSetup, condstore: bool) -> None:
    if not condstore:
        await imap.services.db.execute(
            "UPDATE account SET settings = jsonb_set(settings, '{imap,ignore_capabilities}', "
            "'[\"CONDSTORE\", \"QRESYNC\"]') WHERE id = $1", imap.account_id)
    await _setup(imap)
    assert await _state(imap, "seq-5@plmail.test") == (False, False)
    with imap.mail.peer() as peer:
        peer.store(_uid(imap.mail, 5), "+FLAGS", "(\\Seen)")
        peer.store(_uid(imap.mail, 6), "+FLAGS", "(\\Flagged)")
    await imap.sync()
    assert await _state(imap, "seq-5@plmail.test") == (True, False)
    assert await _state(imap, "seq-6@plmail.test") == (False, True)
    unread = await imap.services.db.fetchval(
        "SELECT t.unread_count FROM message m JOIN message_thread t ON t.id = m.thread_id "
        "WHERE m.account_id = $1 AND m.rfc_message_id = 'seq-5@plmail.test'", imap.account_id)
    assert unread == 0  # unread follows seen_at, and the thread was recomputed
    imap.mail.peer().store(_uid(imap.mail, 5), "-FLAGS", "(\\Seen)")
    await imap.sync()
    assert await _state(imap, "seq-5@plmail.test") == (False, False)


async def test_a_local_change_not_yet_at_the_server_is_not_overwritten(imap: ImapSetup) -> None:
    await _setup(imap)
    message_id = await imap.message_id_of("seq-7@plmail.test")
    await imap.services.operations.set_seen(imap.user.id, True, message_ids=[message_id])
    imap.mail.peer().store(_uid(imap.mail, 8), "+FLAGS", "(\\Seen)")  # something else changes meanwhile
    await imap.sync()
    assert await _state(imap, "seq-7@plmail.test") == (True, False)  # the server still says unseen
    assert await _state(imap, "seq-8@plmail.test") == (True, False)
    await imap.propagate()
    assert "\\Seen" in imap.mail.peer().flags(_uid(imap.mail, 7))
    await imap.sync()
    assert await _state(imap, "seq-7@plmail.test") == (True, False)


async def test_a_folder_created_by_another_client_is_synced(imap: ImapSetup) -> None:
    await _setup(imap)
    imap.mail.create_folder("Receipts/2026")
    imap.mail.append([message(i) for i in (201, 202)], folder="Receipts/2026")
    await imap.sync_all()
    assert (await imap.stored_ids())["Receipts/2026"] == {"seq-201@plmail.test", "seq-202@plmail.test"}
    assert await imap.labels_of("seq-201@plmail.test") == {"2026"}
    binding = await imap.services.db.fetchval(
        """SELECT count(*) FROM label_binding b JOIN mailbox mb ON mb.id = b.mailbox_id
            WHERE b.account_id = $1 AND mb.full_path = 'Receipts/2026'""", imap.account_id)
    assert binding == 1
    # and new mail there arrives with the next sync
    imap.mail.append([message(203)], folder="Receipts/2026")
    await imap.sync()
    assert "seq-203@plmail.test" in (await imap.stored_ids())["Receipts/2026"]


async def test_a_message_moved_by_another_client_keeps_its_row(imap: ImapSetup) -> None:
    await _setup(imap)
    message_id = await imap.message_id_of("seq-9@plmail.test")
    keep = await imap.services.labels.find_or_create(imap.user.id, "Keep")
    await imap.services.operations.add_label(imap.user.id, keep, message_ids=[message_id])
    await imap.propagate()
    with imap.mail.peer() as peer:
        peer.select("INBOX")
        typ, _ = peer.conn.uid("MOVE", str(_uid(imap.mail, 9)), "Archive")
        assert typ == "OK"
    await imap.sync()
    assert await imap.message_id_of("seq-9@plmail.test") == message_id  # the same row, re-pointed
    assert await imap.folder_of("seq-9@plmail.test") == "Archive"
    assert await imap.labels_of("seq-9@plmail.test") == {LabelRole.ARCHIVE.value, "Keep"}
    assert await imap.count() == 40


async def test_a_renumbered_folder_is_imported_again_without_duplicates(imap: ImapSetup) -> None:
    await _setup(imap)
    before = {r["rfc_message_id"]: r["id"] for r in await imap.services.db.fetch(
        "SELECT m.id, m.rfc_message_id FROM message m JOIN mailbox mb ON mb.id = m.mailbox_id "
        "WHERE mb.full_path = 'Projects' AND m.account_id = $1", imap.account_id)}
    validity = await imap.services.db.fetchval(
        "SELECT uid_validity FROM mailbox WHERE account_id = $1 AND full_path = 'Projects'", imap.account_id)
    with imap.mail.peer() as peer:  # the folder is deleted and made again: a new UIDVALIDITY, new UIDs
        assert peer.conn.delete('"Projects"')[0] == "OK"
        peer.create("Projects")
        for i in range(101, 111):
            peer.append(message(i), "Projects")
        peer.append(message(111), "Projects")
    await imap.sync_all()
    after = {r["rfc_message_id"]: r["id"] for r in await imap.services.db.fetch(
        "SELECT m.id, m.rfc_message_id FROM message m JOIN mailbox mb ON mb.id = m.mailbox_id "
        "WHERE mb.full_path = 'Projects' AND m.account_id = $1", imap.account_id)}
    assert await imap.services.db.fetchval(
        "SELECT uid_validity FROM mailbox WHERE account_id = $1 AND full_path = 'Projects'", imap.account_id
    ) != validity
    assert {k: v for k, v in after.items() if k in before} == before  # the same rows, matched by content
    assert set(after) == set(before) | {"seq-111@plmail.test"}
    assert await imap.count() == 41
    assert await imap.count("vanished_at IS NOT NULL OR provider_key IS NULL") == 0
    assert await imap.stored_ids() == imap.server_ids(["INBOX", "Projects"])


async def test_two_accounts_of_one_user_sync_apart(imap: ImapSetup, dovecot_user: DovecotUser) -> None:
    other_mail = dovecot_user.server.add_user()
    other_mail.deliver([message(i) for i in range(500, 505)])
    other = await add_account(imap.services, imap.user, other_mail)
    await _setup(imap)
    await imap.services.sync.run(other)
    while (await imap.services.importer.progress(other)).importing:  # type: ignore[union-attr]
        await imap.services.importer.run_page(other, chain=False)
    # one user, two accounts: both Inbox folders bind to the one Inbox label
    bindings = await imap.services.db.fetchval(
        """SELECT count(DISTINCT b.account_id) FROM label_binding b JOIN label l ON l.id = b.label_id
            WHERE l.user_id = $1 AND l.role = 'inbox'""", imap.user.id)
    assert bindings == 2
    assert await imap.count() == 40


async def test_folder_discovery_binds_each_folder_once_with_its_role_and_tells_jmap(imap: ImapSetup) -> None:
    """Discovery before any message: each folder a mailbox row with its role, IDLE only where new mail lands
    (Inbox, Spam), views of mail that lives elsewhere (\\All) never synced, a label the user renamed kept."""
    db = imap.services.db
    imap.mail.create_folder("All Mail")
    imap.mail.create_folder("Projects/2026")
    await imap.sync()
    rows = {r["full_path"]: r for r in await db.fetch(
        """SELECT mb.full_path, mb.special_use, mb.delimiter, mb.is_sync_enabled, mb.is_idle_enabled, l.name, l.role
             FROM mailbox mb JOIN label_binding b ON b.mailbox_id = mb.id JOIN label l ON l.id = b.label_id
            WHERE mb.account_id = $1""", imap.account_id)}
    assert {p: (r["role"], r["is_idle_enabled"]) for p, r in rows.items() if r["role"]} == {
        "INBOX": ("inbox", True), "Sent": ("sent", False), "Drafts": ("drafts", False), "Trash": ("trash", False),
        "Junk": ("spam", True), "Archive": ("archive", False)}
    assert (rows["Projects/2026"]["name"], rows["Projects/2026"]["delimiter"]) == ("2026", "/")
    assert [p for p, r in rows.items() if not r["is_sync_enabled"]] == ["All Mail"]
    assert rows["All Mail"]["special_use"] == "\\All" and rows["Sent"]["special_use"] == "\\Sent"
    mailbox_changes = await db.fetchval(
        "SELECT count(*) FROM jmap_change_log WHERE account_id = $1 AND object_type = 'Mailbox'", imap.account_id)
    assert mailbox_changes >= len(rows) - 1  # every new mailbox announced (All Mail is a view, not a place)

    label_id = await db.fetchval(
        "SELECT b.label_id FROM label_binding b JOIN mailbox mb ON mb.id = b.mailbox_id "
        "WHERE mb.account_id = $1 AND mb.full_path = 'Projects/2026'", imap.account_id)
    await imap.services.labels.update(imap.user.id, label_id, name="Year 2026")
    new = ["Aardvark", "Middle", "Zebra"]  # wherever the server lists them among the folders bound already
    for name in new:
        imap.mail.create_folder(name)
    before = await db.fetchval("SELECT count(*) FROM label WHERE user_id = $1", imap.user.id)
    await imap.sync()
    assert await db.fetchval("SELECT name FROM label WHERE id = $1", label_id) == "Year 2026"  # bound already
    assert await db.fetchval("SELECT count(*) FROM label WHERE user_id = $1", imap.user.id) == before + len(new)
    assert await db.fetchval(
        "SELECT count(*) FROM label_binding b JOIN mailbox mb ON mb.id = b.mailbox_id "
        "WHERE mb.account_id = $1 AND mb.full_path = ANY($2::text[])", imap.account_id, new) == len(new)


async def test_discovery_passes_over_a_folder_bound_already_and_announces_only_what_changed(imap: ImapSetup) -> None:
    """A folder bound already is skipped, not the end of discovery: a new folder the server lists after it is
    still bound. A discovery that finds nothing new tells JMAP clients nothing."""
    db = imap.services.db
    imap.mail.create_folder("Old")
    await imap.sync()
    with imap.mail.peer() as peer:  # another client; Dovecot lists the newest folder first
        assert peer.conn.delete("Old")[0] == "OK"
        peer.create("New")
        peer.create("Old")  # listed before New now, and still bound from the first sync
    await imap.sync()
    bound = {r["full_path"] for r in await db.fetch(
        "SELECT mb.full_path FROM mailbox mb JOIN label_binding b ON b.mailbox_id = mb.id WHERE mb.account_id = $1",
        imap.account_id)}
    assert {"Old", "New"} <= bound

    async def mailbox_changes() -> int:
        return int(await db.fetchval("SELECT count(*) FROM jmap_change_log WHERE account_id = $1 "
                                     "AND object_type = 'Mailbox'", imap.account_id))

    before = await mailbox_changes()
    await imap.sync()
    assert await mailbox_changes() == before
