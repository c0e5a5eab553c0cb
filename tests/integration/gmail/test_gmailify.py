"""Gmailify, whichever account syncs first (seed: "ein Geschwisterkonto, das in ihren Headern genannt ist").

Gmail fetches the mail of the user's other account and lists it as its own. The sibling named in the headers
has the better claim: when Gmail stored the message first, the sibling's sync re-points the Gmail row (same
id, the user's own labels kept, no second pass through the pipeline) and Gmail notes the id as answered.
"""

from __future__ import annotations

from plmail.domain.enums import LabelRole
from plmail.mail.labels import LabelManager
from tests.integration.gmail.conftest import GmailSetup
from tests.integration.imap_sync.conftest import add_account
from tests.support.dovecot import DovecotUser, dovecot, dovecot_user
from tests.support.fakes import rfc822

__all__ = ["dovecot", "dovecot_user"]


async def _sync_imap(gmail: GmailSetup, account_id: int) -> None:
    services = gmail.services
    await services.sync.run(account_id)
    while (progress := await services.importer.progress(account_id)) is not None and progress.importing:
        await services.importer.run_page(account_id, chain=False)
    await services.sync.run(account_id)


async def test_the_sibling_claims_a_message_gmail_stored_first(gmail: GmailSetup, dovecot_user: DovecotUser) -> None:
    services, db = gmail.services, gmail.services.db
    address = f"{dovecot_user.name}@example.org"
    imap_id = await add_account(services, gmail.user, dovecot_user)
    fetched = rfc822("Fetched by Gmail", to=address, message_id="<claim-1@work.example>")
    sent_as = rfc822("Sent as work", sender=address, to=address, message_id="<sent-1@work.example>")
    fetched_gmail_id = gmail.mailbox.add_message(fetched).id
    sent_gmail_id = gmail.mailbox.add_message(sent_as, label_ids=("SENT",)).id
    await gmail.sync()
    await gmail.import_all()
    assert await gmail.gmail_ids() == {fetched_gmail_id, sent_gmail_id}  # Gmail synced first: it holds both
    row_id = await gmail.message_id(fetched_gmail_id)
    gmail_thread = await gmail.thread_of(fetched_gmail_id)
    keep = await LabelManager(db).create(gmail.user.id, "Keep")  # the user filed it by hand meanwhile
    await services.operations.add_label(gmail.user.id, keep, message_ids=[row_id])
    await services.operations.set_starred(gmail.user.id, True, message_ids=[row_id])
    before = await db.fetchval(
        "SELECT count(*) FROM jmap_change_log WHERE object_type = 'Email' AND entity_id = $1", str(row_id))

    dovecot_user.deliver([fetched, sent_as])
    await _sync_imap(gmail, imap_id)

    rows = await db.fetch("SELECT id, account_id, CASE WHEN provider_container = '' THEN provider_key END AS gmail_id, "
                          "mailbox_id, thread_id, starred_at FROM message "
                          "WHERE rfc_message_id = 'claim-1@work.example'")
    assert len(rows) == 1  # stored once, by the account named in its headers
    claimed = rows[0]
    assert (claimed["id"], claimed["account_id"], claimed["gmail_id"]) == (row_id, imap_id, None)
    assert claimed["mailbox_id"] is not None and claimed["starred_at"] is not None
    names = {r["n"] for r in await db.fetch(
        "SELECT coalesce(l.role, l.name) AS n FROM message_label ml JOIN label l ON l.id = ml.label_id "
        "WHERE ml.message_id = $1", row_id)}
    assert names == {LabelRole.INBOX.value, "Keep"}  # the folder's place label and the user's own label
    assert await db.fetchval("SELECT account_id FROM message_thread WHERE id = $1", claimed["thread_id"]) == imap_id
    assert await db.fetchval("SELECT count(*) FROM message_thread WHERE id = $1", gmail_thread) == 0
    note = await db.fetchrow("SELECT reason, detail FROM gmail_skipped_message WHERE gmail_id = $1",
                             fetched_gmail_id)
    assert note is not None and note["reason"] == "gmailify" and f"account {imap_id}" in note["detail"]
    # JMAP: gone from the Gmail account, created in the sibling's; no second pass through the pipeline
    changes = [(r["account_id"], r["change_type"]) for r in await db.fetch(
        "SELECT account_id, change_type FROM jmap_change_log WHERE object_type = 'Email' AND entity_id = $1 "
        "ORDER BY sequence OFFSET $2", str(row_id), before)]
    assert changes == [(gmail.account_id, "destroyed"), (imap_id, "created")]

    # Mail the Gmail mailbox sent stays with Gmail, whatever address it was sent as
    sent_rows = await db.fetch("SELECT account_id FROM message WHERE rfc_message_id = 'sent-1@work.example'")
    assert sorted(r["account_id"] for r in sent_rows) == sorted([gmail.account_id, imap_id])

    # Gmail lists the claimed id again: it is answered, never fetched and stored again
    gmail.mailbox.add_message(rfc822("later", to="alice@gmail.com"))
    await gmail.sync()
    await gmail.import_all()
    assert fetched_gmail_id not in await gmail.gmail_ids()
    assert await db.fetchval("SELECT count(*) FROM message WHERE rfc_message_id = 'claim-1@work.example'") == 1
