"""An import page's own bookkeeping (its folder's floor, the page's time stamp) commits without waiting for the
disk, so a page costs one disk flush fewer each (counted by `benchmarks/imap_import.py`: the suite's cluster
never flushes); what it writes is kept all the same, and a caller's transaction that writes the same bookkeeping
stays as durable as it was. The page's messages commit unflushed too (the server still holds them, and the floor
that would skip them is written after them); new mail from a sync keeps the server's setting."""

from __future__ import annotations

from plmail.accounts.importing import _STATE_KEY
from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.providers.imap.repos.mailboxes import MailboxRepository
from tests.integration.imap_sync.conftest import ImapSetup
from tests.support.imap_mail import message


async def _inbox(imap: ImapSetup) -> int:
    folders = await MailboxRepository(imap.services.db).for_account(imap.account_id)
    return next(f.id for f in folders if f.full_path == "INBOX")


async def test_unflushed_floor_and_page_stamp_are_written_and_the_floor_only_moves_down(imap: ImapSetup) -> None:
    imap.mail.deliver([message(n) for n in range(1, 4)])
    await imap.sync()
    folder = await _inbox(imap)
    db = imap.services.db
    mailboxes, accounts = MailboxRepository(db), AccountAdminRepository(db)
    await db.execute("UPDATE mailbox SET import_floor_uid = 10000 WHERE id = $1", folder)
    for floor in (120, 101, 5_000):
        await mailboxes.lower_floor(folder, floor)
        await accounts.merge_state(imap.account_id, _STATE_KEY, {"last_page_at": floor}, flush=False)
    assert await db.fetchval("SELECT import_floor_uid FROM mailbox WHERE id = $1", folder) == 101
    assert await db.fetchval("SELECT sync_state -> $2 ->> 'last_page_at' FROM account WHERE id = $1",
                             imap.account_id, _STATE_KEY) == "5000"
    await mailboxes.lower_floor(folder, 0)
    assert await db.fetchval("SELECT import_floor_uid FROM mailbox WHERE id = $1", folder) == 1


async def test_inside_a_callers_transaction_the_bookkeeping_leaves_it_durable(imap: ImapSetup) -> None:
    imap.mail.deliver([message(1)])
    await imap.sync()
    folder = await _inbox(imap)
    db = imap.services.db
    async with db.transaction():
        await db.execute("SET LOCAL synchronous_commit = on")  # as a durable caller's would be
        await MailboxRepository(db).lower_floor(folder, 7)
        await AccountAdminRepository(db).merge_state(imap.account_id, _STATE_KEY, {"x": 1}, flush=False)
        assert await db.fetchval("SELECT current_setting('synchronous_commit')") == "on"
    assert await db.fetchval("SELECT import_floor_uid FROM mailbox WHERE id = $1", folder) <= 7


async def test_a_history_page_commits_its_messages_unflushed_and_new_mail_keeps_the_servers_setting(
        imap: ImapSetup) -> None:
    db = imap.services.db
    # Each insert into message notes how its transaction commits: the setting, and whether that transaction set
    # it itself ('session' is where SET LOCAL and set_config(..., true) show) or left the server's default.
    await db.execute("CREATE TABLE commit_mode (subject text, setting text, source text)")
    await db.execute("""
        CREATE FUNCTION note_commit_mode() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO commit_mode SELECT n.subject, s.setting, s.source
              FROM new_rows n, pg_settings s WHERE s.name = 'synchronous_commit';
            RETURN NULL;
        END $$""")
    await db.execute("CREATE TRIGGER note_commit_mode AFTER INSERT ON message REFERENCING NEW TABLE AS new_rows "
                     "FOR EACH STATEMENT EXECUTE FUNCTION note_commit_mode()")
    imap.mail.deliver([message(n, subject=f"history {n}") for n in range(1, 4)])
    assert await imap.sync() == []  # the first sync notes where new mail begins; the three are history
    await imap.import_all()
    imap.mail.append([message(4, subject="new mail")])
    await imap.sync()

    rows = await db.fetch("SELECT subject, setting, source FROM commit_mode ORDER BY subject")
    assert [(r["subject"], r["setting"], r["source"]) for r in rows if r["subject"].startswith("history")] == [
        (f"history {n}", "off", "session") for n in range(1, 4)]
    assert [r["source"] for r in rows if r["subject"] == "new mail"] == [
        await db.fetchval("SELECT source FROM pg_settings WHERE name = 'synchronous_commit'")]
    assert "session" not in [r["source"] for r in rows if r["subject"] == "new mail"]
