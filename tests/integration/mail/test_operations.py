"""Thread operations, the trigger-kept binned flag, snooze, propagation and label management."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest

from plmail.domain.enums import LabelRole, ProviderKind
from plmail.domain.errors import ValidationError
from plmail.domain.providers import PendingChange, PropagationOutcome
from plmail.jobs.context import SERVICES_KEY
from plmail.jobs.mail import propagate_stranded_changes
from plmail.mail.labels import BindingHandle, LabelManager, LabelResolver
from plmail.mail.propagation import PropagationError
from tests.integration.mail.conftest import Mailbox
from tests.support.mail import BASE_DATE, make_message


async def _thread(mailbox: Mailbox, *raws: bytes) -> tuple[int, list[int]]:
    result = await mailbox.services.pipeline.ingest([mailbox.message(r) for r in raws])
    return result.messages[0].thread_id or 0, [m.id for m in result.messages]


async def _labels(mailbox: Mailbox, message_id: int) -> set[str]:
    rows = await mailbox.services.db.fetch(
        "SELECT coalesce(l.role, l.name) AS n FROM message_label ml JOIN label l ON l.id = ml.label_id "
        "WHERE ml.message_id = $1", message_id)
    return {r["n"] for r in rows}


async def _binned(mailbox: Mailbox, thread_id: int) -> bool:
    return bool(await mailbox.services.db.fetchval("SELECT binned FROM message_thread WHERE id = $1", thread_id))


async def _roles(mailbox: Mailbox) -> dict[LabelRole, int]:
    return await mailbox.services.labels.role_ids(mailbox.user.id)


async def _unified_mailbox_changes(mailbox: Mailbox) -> list[str]:
    """Label ids logged as changed Mailboxes of the user's unified account (its log key is minus the user id)."""
    rows = await mailbox.services.db.fetch(
        "SELECT entity_id FROM jmap_change_log WHERE account_id = $1 AND object_type = 'Mailbox' ORDER BY sequence",
        -mailbox.user.id)
    return [r["entity_id"] for r in rows]


def _conversation() -> tuple[bytes, bytes]:
    first = make_message(message_id="o1@x", subject="Ops")
    reply = make_message(message_id="o2@x", subject="Re: Ops", in_reply_to="o1@x", references=["o1@x"],
                         date=BASE_DATE + timedelta(hours=1))
    return first, reply


async def test_each_operation_changes_labels_logs_changes_and_enqueues_propagation(mailbox: Mailbox) -> None:
    ops = mailbox.services.operations
    thread_id, (m1, m2) = await _thread(mailbox, *_conversation())
    before = len(await mailbox.changes())
    unified_before = await _unified_mailbox_changes(mailbox)
    result = await ops.archive(mailbox.user.id, thread_ids=[thread_id])
    assert set(result.messages) == {m1, m2}
    assert await _labels(mailbox, m1) == {"archive"}  # Inbox was the only label: the mail still lives somewhere
    changes = (await mailbox.changes())[before:]
    assert ("Email", str(m1), "updated") in changes
    # labels are the Email's and its Mailboxes' change: the thread's membership stayed, so its state does too
    assert ("Thread", str(thread_id), "updated") not in changes
    roles = await _roles(mailbox)
    moved = (await _unified_mailbox_changes(mailbox))[len(unified_before):]
    assert set(moved) == {str(roles[LabelRole.INBOX]), str(roles[LabelRole.ARCHIVE])}  # the unified account's counts
    jobs = await mailbox.services.db.fetch("SELECT queue, convert_from(job, 'UTF8')::jsonb ->> 'function' AS f "
                                           "FROM saq_jobs")
    assert [(r["queue"], r["f"]) for r in jobs] == [("ingest", "propagate_provider_changes")]
    pending = await mailbox.services.db.fetch("SELECT message_id, kind, added, removed FROM provider_change")
    assert {r["message_id"] for r in pending} == {m1, m2}

    await ops.trash(mailbox.user.id, message_ids=[m2])
    assert await _labels(mailbox, m2) == {"trash"}
    await ops.untrash(mailbox.user.id, message_ids=[m2])
    assert await _labels(mailbox, m2) == {"inbox"}
    await ops.set_starred(mailbox.user.id, True, thread_ids=[thread_id])
    starred = await mailbox.services.db.fetch("SELECT id FROM message WHERE starred_at IS NOT NULL")
    assert [r["id"] for r in starred] == [m2]  # starring a thread stars its newest message
    assert await mailbox.services.db.fetchval("SELECT starred_at IS NOT NULL FROM message_thread") is True
    await ops.set_seen(mailbox.user.id, True, thread_ids=[thread_id])
    assert await mailbox.services.db.fetchval("SELECT unread_count FROM message_thread") == 0
    again = await ops.set_seen(mailbox.user.id, True, thread_ids=[thread_id])
    assert again.messages == ()  # nothing changed, nothing announced


async def test_a_rolled_back_operation_leaves_no_change_log_row(mailbox: Mailbox) -> None:
    thread_id, _ = await _thread(mailbox, *_conversation())
    before = len(await mailbox.changes())

    async def archive_then_fail() -> None:
        async with mailbox.services.db.transaction():
            await mailbox.services.operations.archive(mailbox.user.id, thread_ids=[thread_id])
            raise RuntimeError("abandon")

    with pytest.raises(RuntimeError):
        await archive_then_fail()
    assert len(await mailbox.changes()) == before
    assert await mailbox.services.db.fetchval("SELECT count(*) FROM provider_change") == 0


async def test_binned_is_kept_by_the_database(mailbox: Mailbox) -> None:
    ops = mailbox.services.operations
    db = mailbox.services.db
    thread_id, (m1, m2) = await _thread(mailbox, *_conversation())
    await ops.trash(mailbox.user.id, message_ids=[m1])
    assert not await _binned(mailbox, thread_id)  # one message still outside Trash
    await ops.trash(mailbox.user.id, message_ids=[m2])
    assert await _binned(mailbox, thread_id)
    # A reply arriving into a binned thread takes it out of the bin.
    reply = make_message(message_id="o3@x", subject="Re: Ops", in_reply_to="o2@x", references=["o1@x", "o2@x"],
                         date=BASE_DATE + timedelta(hours=2))
    result = await mailbox.services.pipeline.ingest([mailbox.message(reply)])
    assert result.messages[0].thread_id == thread_id
    assert not await _binned(mailbox, thread_id)
    # Deleting that message re-derives: only trashed mail is left.
    await db.execute("DELETE FROM message WHERE id = $1", result.messages[0].id)
    assert await _binned(mailbox, thread_id)
    # Raw SQL is covered too: the trigger, not Python, keeps the flag.
    trash = (await _roles(mailbox))[LabelRole.TRASH]
    await db.execute("DELETE FROM message_label WHERE message_id = $1 AND label_id = $2", m1, trash)
    assert not await _binned(mailbox, thread_id)
    await db.execute("INSERT INTO message_label (message_id, label_id) VALUES ($1, $2)", m1, trash)
    assert await _binned(mailbox, thread_id)
    other_thread, (m3,) = await _thread(mailbox, make_message(message_id="elsewhere@x", subject="Other"))
    await db.execute("UPDATE message SET thread_id = $1 WHERE id = $2", thread_id, m3)
    assert not await _binned(mailbox, thread_id)  # a message moved in from outside Trash
    # Lists, badges and search leave binned threads out; the Trash view is where they are listed.
    await db.execute("UPDATE message SET thread_id = $1 WHERE id = $2", other_thread, m3)
    assert await _binned(mailbox, thread_id)
    await mailbox.services.operations.untrash(mailbox.user.id, message_ids=[m3])
    await db.execute("INSERT INTO message_label (message_id, label_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                     m1, mailbox.inbox)  # still carries Inbox too, yet every message is in the trash
    assert await _binned(mailbox, thread_id)
    inbox_listing = await mailbox.services.reader.label(mailbox.user.id, mailbox.inbox)
    assert thread_id not in [t.id for t in inbox_listing.threads]
    sidebar = {label.id: label.unread_threads for label in await mailbox.services.labels.sidebar(mailbox.user.id)}
    assert sidebar[mailbox.inbox] == 1  # the other thread only
    assert (await mailbox.services.reader.search(mailbox.user.id, "ops")).threads == []
    trash_listing = await mailbox.services.reader.label(mailbox.user.id, trash)
    assert [t.id for t in trash_listing.threads] == [thread_id]



async def test_the_trash_lists_wholly_and_partly_binned_threads_newest_first_by_page_and_account(
        mailbox: Mailbox) -> None:
    """The Trash shows every conversation with mail in it, newest first: those wholly in it (binned, walked apart)
    and those with only some of their messages in it, in one order, paged and for one account."""
    ops, views = mailbox.services.operations, mailbox.services.reader.views
    other = await mailbox.new_account("Other")

    async def conversation(name: str, hours: int, *, account: int | None = None, replies: int = 0) -> tuple[int,
                                                                                                          list[int]]:
        raws = [make_message(message_id=f"{name}0@x", subject=name, date=BASE_DATE + timedelta(hours=hours))]
        raws += [make_message(message_id=f"{name}{n}@x", subject=f"Re: {name}", in_reply_to=f"{name}0@x",
                              references=[f"{name}0@x"], date=BASE_DATE + timedelta(hours=hours, minutes=n))
                 for n in range(1, replies + 1)]
        result = await mailbox.services.pipeline.ingest([mailbox.message(r, account_id=account) for r in raws])
        return result.messages[0].thread_id or 0, [m.id for m in result.messages]

    newest, _ = await conversation("newest", 9)
    partly, (_, binned) = await conversation("partly", 7, replies=1)
    elsewhere, _ = await conversation("elsewhere", 5, account=other)
    oldest, _ = await conversation("oldest", 1)
    untouched, _ = await conversation("untouched", 8)
    await ops.trash(mailbox.user.id, thread_ids=[newest, elsewhere, oldest])
    await ops.trash(mailbox.user.id, message_ids=[binned])
    assert [await _binned(mailbox, t) for t in (newest, partly, elsewhere, oldest, untouched)] == [
        True, False, True, True, False]
    trash = (await _roles(mailbox))[LabelRole.TRASH]
    listing = await mailbox.services.reader.label(mailbox.user.id, trash)
    assert [t.id for t in listing.threads] == [newest, partly, elsewhere, oldest]
    paged = await views.label_threads(mailbox.user.id, trash, category=None, limit=2, offset=1, include_binned=True)
    assert [t.id for t in paged] == [partly, elsewhere]
    one_account = await mailbox.services.reader.label(mailbox.user.id, trash, account_id=mailbox.account_id)
    assert [t.id for t in one_account.threads] == [newest, partly, oldest]
    await ops.untrash(mailbox.user.id, message_ids=[binned])
    listing = await mailbox.services.reader.label(mailbox.user.id, trash)
    assert [t.id for t in listing.threads] == [newest, elsewhere, oldest]  # none of it in the Trash now

async def test_snoozed_thread_wakes_at_its_time_unread_and_back_in_the_inbox(mailbox: Mailbox) -> None:
    ops = mailbox.services.operations
    thread_id, ids = await _thread(mailbox, *_conversation())
    await ops.set_seen(mailbox.user.id, True, thread_ids=[thread_id])
    later = datetime.now(UTC) + timedelta(hours=3)
    await ops.snooze(mailbox.user.id, [thread_id], later)
    assert [await _labels(mailbox, i) for i in ids] == [{"snoozed"}, {"snoozed"}]
    assert not LabelRole.SNOOZED.has_provider_folder()
    assert await ops.wake_due(datetime.now(UTC)) == 0  # not yet
    assert await ops.wake_due(later + timedelta(seconds=1)) == 1
    assert [await _labels(mailbox, i) for i in ids] == [{"inbox"}, {"inbox"}]
    thread = await mailbox.services.db.fetchrow("SELECT snoozed_until, unread_count FROM message_thread")
    assert thread["snoozed_until"] is None and thread["unread_count"] == 1


async def test_a_snoozed_thread_moved_to_trash_stays_there_and_offers_restore_not_unsnooze(mailbox: Mailbox) -> None:
    ops = mailbox.services.operations
    thread_id, ids = await _thread(mailbox, *_conversation())
    later = datetime.now(UTC) + timedelta(hours=3)
    await ops.snooze(mailbox.user.id, [thread_id], later)
    with ops.undoable() as ticket:
        await ops.trash(mailbox.user.id, thread_ids=[thread_id])
    assert [await _labels(mailbox, i) for i in ids] == [{"trash"}, {"trash"}]
    assert await ops.wake_due(later + timedelta(seconds=1)) == 0  # it must not wake into the Inbox from the Trash
    assert await _labels(mailbox, ids[0]) == {"trash"}
    summary = await mailbox.services.reader.views.thread(mailbox.user.id, thread_id)
    assert summary is not None and summary.binned  # the page offers Restore (thread.html), not Unsnooze
    # Undo brings the snooze back whole: in Snoozed, and it wakes at its time.
    await ops.undo(mailbox.user.id, ticket.key)
    assert [await _labels(mailbox, i) for i in ids] == [{"snoozed"}, {"snoozed"}]
    assert await ops.wake_due(later + timedelta(seconds=1)) == 1
    assert [await _labels(mailbox, i) for i in ids] == [{"inbox"}, {"inbox"}]


async def test_undoing_a_snooze_takes_its_alarm_away(mailbox: Mailbox) -> None:
    ops = mailbox.services.operations
    thread_id, ids = await _thread(mailbox, *_conversation())
    with ops.undoable() as ticket:
        await ops.snooze(mailbox.user.id, [thread_id], datetime.now(UTC) + timedelta(hours=1))
    await ops.undo(mailbox.user.id, ticket.key)
    assert [await _labels(mailbox, i) for i in ids] == [{"inbox"}, {"inbox"}]
    assert await mailbox.services.db.fetchval("SELECT snoozed_until FROM message_thread WHERE id = $1",
                                              thread_id) is None


async def test_lists_and_threads_order_by_arrival_not_by_the_date_header(mailbox: Mailbox) -> None:
    now = datetime.now(UTC)
    future_spam = make_message(message_id="spam2028@x", subject="You won", date=now + timedelta(days=700))
    earlier = make_message(message_id="early@x", subject="Earlier", date=now - timedelta(hours=2))
    arrived = [mailbox.message(earlier, received_at=now - timedelta(minutes=5)),
               mailbox.message(future_spam, received_at=now - timedelta(hours=1))]
    await mailbox.services.pipeline.ingest(arrived)
    listing = await mailbox.services.reader.label(mailbox.user.id, mailbox.inbox)
    assert [t.subject for t in listing.threads] == ["Earlier", "You won"]  # arrival, though Date says 2028
    # Without a provider's arrival time a future Date is clamped to the moment plmail took the mail in.
    undated = make_message(message_id="clamp@x", subject="Clamped", date=now + timedelta(days=700))
    await mailbox.services.pipeline.ingest([mailbox.message(undated)])
    stored = await mailbox.services.db.fetchval("SELECT received_at FROM message WHERE subject = 'Clamped'")
    assert stored <= datetime.now(UTC)
    # Inside a thread, messages follow arrival too: a reply whose Date lies before the original comes after it.
    first = make_message(message_id="t1@x", subject="Order")
    reply = make_message(message_id="t2@x", subject="Re: Order", in_reply_to="t1@x", references=["t1@x"],
                         date=BASE_DATE - timedelta(days=1))
    result = await mailbox.services.pipeline.ingest([
        mailbox.message(first, received_at=now - timedelta(minutes=3)),
        mailbox.message(reply, received_at=now - timedelta(minutes=1))])
    thread_id = result.messages[0].thread_id or 0
    view = await mailbox.services.reader.views.thread_messages(mailbox.user.id, thread_id)
    assert [m.subject for m in view] == ["Order", "Re: Order"]


@dataclass
class RefusingPropagator:
    """A provider that refuses every change, the way a server that is down would."""

    kind: ProviderKind = ProviderKind.LOCAL
    seen: list[Sequence[PendingChange]] = field(default_factory=list)

    async def propagate(self, account_id: int, changes: Sequence[PendingChange]) -> PropagationOutcome:
        self.seen.append(changes)
        return PropagationOutcome(failed={c.id: "server said no" for c in changes})


async def test_failed_propagation_keeps_local_state_and_pending_rows(mailbox: Mailbox) -> None:
    services = mailbox.services
    thread_id, _ = await _thread(mailbox, *_conversation())
    await services.operations.archive(mailbox.user.id, thread_ids=[thread_id])
    refusing = RefusingPropagator()
    services.provider_roles.propagators.replace(refusing)
    with pytest.raises(PropagationError, match="server said no"):
        await services.propagation.run(mailbox.account_id)
    rows = await services.db.fetch("SELECT attempts, last_error, done_at FROM provider_change")
    assert all(r["attempts"] == 1 and r["last_error"] == "server said no" and r["done_at"] is None for r in rows)
    assert await services.db.fetchval("SELECT count(*) FROM thread_label tl JOIN label l ON l.id = tl.label_id "
                                      "WHERE l.role = 'archive'") == 1  # the local change stands
    # The job gave up (its retries are spent): the ten-minute cron queues the account again.
    await services.db.execute("DELETE FROM saq_jobs")
    assert await propagate_stranded_changes({SERVICES_KEY: services}) == 1
    queued = await services.db.fetch("SELECT convert_from(job, 'UTF8')::jsonb AS job FROM saq_jobs")
    assert [json.loads(r["job"])["kwargs"] if isinstance(r["job"], str) else r["job"]["kwargs"] for r in queued] \
        == [{"account_id": mailbox.account_id}]
    await services.db.execute("UPDATE account SET status = 'reconnect' WHERE id = $1", mailbox.account_id)
    assert await propagate_stranded_changes({SERVICES_KEY: services}) == 0  # it waits for the user to sign in
    await services.db.execute("UPDATE account SET status = 'ok' WHERE id = $1", mailbox.account_id)
    services.provider_roles.propagators.replace(type("Accepting", (), {"kind": ProviderKind.LOCAL,
                                                                       "propagate": _accept_all})())
    assert await services.propagation.run(mailbox.account_id) == 2
    assert await services.db.fetchval("SELECT count(*) FROM provider_change WHERE done_at IS NULL") == 0


async def _accept_all(self: object, account_id: int, changes: Sequence[PendingChange]) -> PropagationOutcome:
    return PropagationOutcome(done=tuple(c.id for c in changes))


async def test_label_resolver_builds_chains_and_unifies_accounts(mailbox: Mailbox) -> None:
    resolver = LabelResolver(mailbox.services.db)
    other = await mailbox.new_account("Second")
    first = await resolver.resolve(user_id=mailbox.user.id, account_id=mailbox.account_id, path=["Work", "Invoices"],
                                   handle=BindingHandle(provider_key="Label_7"))
    second = await resolver.resolve(user_id=mailbox.user.id, account_id=other, path=["Work", "Invoices"])
    assert first.label_id == second.label_id and first.binding_id != second.binding_id
    parent = await mailbox.services.db.fetchval("SELECT parent_id FROM label WHERE id = $1", first.label_id)
    assert await mailbox.services.db.fetchval("SELECT name FROM label WHERE id = $1", parent) == "Work"
    fresh = LabelResolver(mailbox.services.db)  # a new resolver finds the same rows
    again = await fresh.resolve(user_id=mailbox.user.id, account_id=mailbox.account_id, path=["Work", "Invoices"])
    assert again == first
    inbox = await resolver.resolve(user_id=mailbox.user.id, account_id=other, path=[], role=LabelRole.INBOX)
    assert inbox.label_id == (await _roles(mailbox))[LabelRole.INBOX]


async def test_label_management_and_delete_keeps_the_mail(mailbox: Mailbox) -> None:
    manager = LabelManager(mailbox.services.db)
    ops = mailbox.services.operations
    receipts = await manager.create(mailbox.user.id, "Receipts", color="green")
    child = await manager.create(mailbox.user.id, "2026", parent_id=receipts)
    with pytest.raises(ValidationError, match="already exists"):
        await manager.create(mailbox.user.id, "receipts")
    with pytest.raises(ValidationError, match="inside itself"):
        await manager.update(mailbox.user.id, receipts, parent_id=child, move=True)
    inbox = (await _roles(mailbox))[LabelRole.INBOX]
    with pytest.raises(ValidationError, match="cannot be renamed"):
        await manager.update(mailbox.user.id, inbox, name="In")
    await manager.update(mailbox.user.id, receipts, name="Bills", visible=False)
    assert await mailbox.services.db.fetchval("SELECT name FROM label WHERE id = $1", receipts) == "Bills"
    thread_id, ids = await _thread(mailbox, *_conversation())
    await ops.move_to_label(mailbox.user.id, child, thread_ids=[thread_id])
    assert await _labels(mailbox, ids[0]) == {"2026"}
    bindings = {await LabelResolver(mailbox.services.db).bind(label, mailbox.account_id) for label in (receipts, child)}
    assert await manager.delete(mailbox.user.id, receipts) == 2  # deleting the parent takes the child
    destroyed = {int(entity) for kind, entity, change in await mailbox.changes("Mailbox") if change == "destroyed"}
    assert destroyed == bindings  # phones hear that both mailboxes are gone
    assert await _labels(mailbox, ids[0]) == {"archive"}  # the mail stays, archived
    assert await mailbox.services.db.fetchval("SELECT count(*) FROM message") == 2
