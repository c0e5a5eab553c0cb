"""What the user does in plmail reaches Gmail as label changes through messages.batchModify."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from plmail.mail.labels import LabelManager
from tests.integration.gmail.conftest import GmailSetup
from tests.support.fakes import rfc822


async def test_archive_trash_star_read_label_and_snooze_are_visible_at_gmail(gmail: GmailSetup) -> None:
    receipts = gmail.mailbox.add_label("Receipts")
    ids = [gmail.mailbox.add_message(rfc822(f"Mail {n}"), label_ids=("INBOX", "UNREAD", "CATEGORY_PERSONAL")).id
           for n in range(7)]
    await gmail.sync()
    await gmail.import_all()
    ops = gmail.services.operations
    user = gmail.user.id
    thread = {gmail_id: await gmail.thread_of(gmail_id) for gmail_id in ids}
    own_label = await LabelManager(gmail.services.db).create(user, "Later")
    receipts_label = await gmail.services.db.fetchval(
        "SELECT label_id FROM label_binding WHERE account_id = $1 AND provider_key = $2", gmail.account_id,
        receipts.id)

    await ops.archive(user, thread_ids=[thread[ids[0]]])
    await ops.trash(user, thread_ids=[thread[ids[1]]])
    await ops.set_starred(user, True, thread_ids=[thread[ids[2]]])
    await ops.set_seen(user, True, thread_ids=[thread[ids[3]]])
    await ops.add_label(user, int(receipts_label), thread_ids=[thread[ids[4]]])
    await ops.add_label(user, own_label, thread_ids=[thread[ids[5]]])
    await ops.snooze(user, [thread[ids[6]]], datetime.now(UTC) + timedelta(hours=3))
    before = len([c for c in gmail.fake.calls if c.method == "users.messages.batchModify"])

    assert await gmail.propagate() > 0
    labels = {gmail_id: set(gmail.mailbox.messages[gmail_id].label_ids) for gmail_id in ids}
    assert "INBOX" not in labels[ids[0]]
    assert {"TRASH"} <= labels[ids[1]] and "INBOX" not in labels[ids[1]]
    assert "STARRED" in labels[ids[2]]
    assert "UNREAD" not in labels[ids[3]]
    assert receipts.id in labels[ids[4]]
    created = gmail.mailbox.label_id("Later")  # a label of the user's reached Gmail on its first use
    assert created in labels[ids[5]]
    assert "INBOX" not in labels[ids[6]]  # snoozed: out of Gmail's inbox too
    assert all("INBOX" in labels[i] for i in ids[2:6])
    modifies = [c for c in gmail.fake.calls if c.method == "users.messages.batchModify"][before:]
    assert modifies and all(c.status == 204 for c in modifies)
    pending = await gmail.services.db.fetchval(
        "SELECT count(*) FROM provider_change WHERE account_id = $1 AND done_at IS NULL", gmail.account_id)
    assert pending == 0

    # Gmail's echo of our own changes changes nothing here
    await gmail.sync()
    assert await gmail.labels_of(ids[6]) == {"snoozed"}
    assert await gmail.labels_of(ids[0]) == {"archive"}
    assert await gmail.labels_of(ids[5]) == {"inbox", "Later"}
