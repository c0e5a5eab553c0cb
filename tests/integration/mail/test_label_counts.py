"""Kept counts stay right: random operations, then every count the pages and JMAP read against count(*)."""

from __future__ import annotations

import logging
import random
from datetime import UTC, datetime, timedelta

import pytest

from plmail.domain.enums import LabelRole
from plmail.domain.mailstore import MailScope
from tests.integration.mail.conftest import Mailbox
from tests.support.mail import BASE_DATE, make_message
from tests.support.repos import account_admin, label_counts

_DRAFT = "(m.flags ? '\\Draft' OR m.flags ? '$draft')"

# The counts from scratch, written out here as the issue and RFC 8621 define them, not taken from the app.
_SIDEBAR = """SELECT tl.label_id, count(*) AS n FROM thread_label tl JOIN message_thread t ON t.id = tl.thread_id
               WHERE t.unread_count > 0 AND NOT t.binned GROUP BY tl.label_id"""
_ACCOUNT_LABELS = """SELECT t.account_id, tl.label_id, count(*) AS n FROM thread_label tl
                       JOIN message_thread t ON t.id = tl.thread_id
                       JOIN label_binding b ON b.label_id = tl.label_id AND b.account_id = t.account_id
                      WHERE t.unread_count > 0 AND NOT t.binned GROUP BY t.account_id, tl.label_id"""
# A thread's tab is the user's "file into category" before the built-in category (issue 24).
_TABS = """SELECT coalesce(t.user_category, t.category) AS category, count(*) AS n
             FROM thread_label tl JOIN message_thread t ON t.id = tl.thread_id
            WHERE tl.label_id = $1 AND t.unread_count > 0 AND NOT t.binned
              AND coalesce(t.user_category, t.category) IS NOT NULL
            GROUP BY 1"""
_MAILBOXES = f"""SELECT m.account_id, ml.label_id, count(*) AS total,
                        count(*) FILTER (WHERE m.seen_at IS NULL AND NOT {_DRAFT}) AS unread,
                        count(DISTINCT m.thread_id) AS threads,
                        count(DISTINCT m.thread_id) FILTER (WHERE m.seen_at IS NULL AND NOT {_DRAFT}) AS unread_threads
                   FROM message_label ml JOIN message m ON m.id = ml.message_id
                  GROUP BY m.account_id, ml.label_id"""


class Mail:
    """Two accounts' threads built up by the pipeline, and the operations a user applies to them."""

    def __init__(self, mailbox: Mailbox, second_account: int, seed: int) -> None:
        self.mailbox = mailbox
        self.accounts = [mailbox.account_id, second_account]
        self.rng = random.Random(seed)
        self.sent: dict[int, list[str]] = {a: [] for a in self.accounts}  # Message-IDs per account
        self.serial = 0

    async def ingest(self, *, references: list[str] | None = None, account: int | None = None) -> None:
        account = account or self.rng.choice(self.accounts)
        self.serial += 1
        mid = f"c{self.serial}@counts.example"
        headers = {"List-Unsubscribe": "<mailto:off@shop.example>"} if self.rng.random() < 0.3 else None
        raw = make_message(message_id=mid, subject=f"Topic {self.serial % 7}",
                           in_reply_to=references[-1] if references else None, references=references or (),
                           date=BASE_DATE + timedelta(minutes=self.serial), headers=headers,
                           sender=f"Sender {self.serial % 5} <s{self.serial % 5}@shop.example>")
        await self.mailbox.services.pipeline.ingest([self.mailbox.message(raw, account_id=account)])
        self.sent[account].append(mid)

    async def threads(self) -> list[int]:
        rows = await self.mailbox.services.db.fetch("SELECT id FROM message_thread ORDER BY id")
        return [r["id"] for r in rows]

    async def messages(self) -> list[int]:
        rows = await self.mailbox.services.db.fetch("SELECT id FROM message ORDER BY id")
        return [r["id"] for r in rows]


async def _fresh(mailbox: Mailbox, inbox: int) -> tuple[object, ...]:
    db = mailbox.services.db
    sidebar = {r["label_id"]: r["n"] for r in await db.fetch(_SIDEBAR)}
    per_account = {(r["account_id"], r["label_id"]): r["n"] for r in await db.fetch(_ACCOUNT_LABELS)}
    tabs = {r["category"]: r["n"] for r in await db.fetch(_TABS, inbox)}
    boxes: dict[tuple[object, int], tuple[int, ...]] = {}
    for r in await db.fetch(_MAILBOXES):
        counts = (r["total"], r["unread"], r["threads"], r["unread_threads"])
        boxes[(r["account_id"], r["label_id"])] = counts
        # The unified account's Mailbox is the label over every account (a thread lives in one account).
        whole = boxes.get(("unified", r["label_id"]), (0, 0, 0, 0))
        boxes[("unified", r["label_id"])] = tuple(a + b for a, b in zip(whole, counts, strict=True))
    return sidebar, per_account, tabs, boxes


async def _read(mailbox: Mailbox, accounts: list[int], step: int) -> tuple[object, ...]:
    services, user = mailbox.services, mailbox.user
    for account in accounts:
        await services.mailboxes.bind_labels(user.id, MailScope.single(user.id, account))
    sidebar = {label.id: label.unread_threads for label in await services.labels.sidebar(user.id)
               if label.unread_threads}
    per_account = {(account, label): unread
                   for account, label, _, _, unread in await services.reader.views.account_labels(user.id) if unread}
    tabs = await services.reader.tab_unread(user.id)
    boxes = {}
    scopes = [MailScope.single(user.id, account) for account in accounts]
    for scope in [*scopes, MailScope(user.id, tuple(accounts), unified=True)]:
        for view in await services.mailboxes.views(user.id, scope, counts_at=(step,)):
            c = view.counts
            assert c is not None
            if c.total_emails:
                key = ("unified" if scope.unified else scope.account_id, view.row.label_id)
                boxes[key] = (c.total_emails, c.unread_emails, c.total_threads, c.unread_threads)
    return sidebar, per_account, tabs, boxes


async def _hide_nothing(mailbox: Mailbox) -> None:
    # The sidebar lists visible labels only; Archive is hidden by default, and its counts are checked too.
    await mailbox.services.db.execute("UPDATE label SET is_visible = true WHERE user_id = $1", mailbox.user.id)


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_every_kept_count_equals_a_fresh_count_after_random_operations(mailbox: Mailbox, seed: int) -> None:
    services, user_id = mailbox.services, mailbox.user.id
    ops = services.operations
    second = await mailbox.new_account("Second")
    await _hide_nothing(mailbox)
    work = await services.labels.find_or_create(user_id, "Work")
    roles = await services.labels.role_ids(user_id)
    mail = Mail(mailbox, second, seed)
    for _ in range(12):
        await mail.ingest()
    rng = mail.rng
    done: list[str] = []
    for step in range(60):
        threads, messages = await mail.threads(), await mail.messages()
        kind = rng.choice(["archive", "label", "unlabel", "read", "unread", "read_one", "trash", "untrash",
                           "snooze", "wake", "merge", "reply", "new", "spam", "draft", "move", "file"])
        some_threads = rng.sample(threads, min(len(threads), rng.randint(1, 3)))
        some_messages = rng.sample(messages, min(len(messages), rng.randint(1, 3)))
        if kind == "archive":
            await ops.archive(user_id, thread_ids=some_threads)
        elif kind == "label":
            await ops.add_label(user_id, work, thread_ids=some_threads)
        elif kind == "unlabel":
            await ops.remove_label(user_id, work, message_ids=some_messages)
        elif kind in ("read", "unread"):
            await ops.set_seen(user_id, kind == "read", thread_ids=some_threads)
        elif kind == "read_one":
            await ops.set_seen(user_id, rng.random() < 0.5, message_ids=some_messages)
        elif kind == "trash":
            await ops.trash(user_id, message_ids=some_messages)
        elif kind == "untrash":
            await ops.untrash(user_id, thread_ids=some_threads)
        elif kind == "snooze":
            await ops.snooze(user_id, some_threads, datetime.now(UTC) + timedelta(days=1))
        elif kind == "wake":
            await ops.wake(user_id, some_threads)
        elif kind == "spam":
            await ops.spam(user_id, thread_ids=some_threads)
        elif kind == "draft":
            await ops.set_keyword(user_id, some_messages, "$draft", rng.random() < 0.7)
        elif kind == "move":
            await ops.move_to_label(user_id, rng.choice([work, roles[LabelRole.INBOX]]), thread_ids=some_threads)
        elif kind == "file":
            # What a "file into category" rule leaves on the thread (the thread recompute's own UPDATE).
            await services.db.execute("UPDATE message_thread SET user_category = $1 WHERE id = ANY($2::bigint[])",
                                      rng.choice(["updates", "promotions", None]), some_threads)
        elif kind == "reply":
            account = rng.choice(mail.accounts)
            if mail.sent[account]:
                await mail.ingest(references=[rng.choice(mail.sent[account])], account=account)
        elif kind == "merge":
            # A message that refers to two conversations joins them into one.
            account = rng.choice(mail.accounts)
            if len(mail.sent[account]) >= 2:
                await mail.ingest(references=rng.sample(mail.sent[account], 2), account=account)
        else:
            await mail.ingest()
        done.append(kind)
        assert await _read(mailbox, mail.accounts, step) == await _fresh(mailbox, roles[LabelRole.INBOX]), done
        assert await label_counts(services).kept_counts() == await label_counts(services).fresh_counts(), done

    merged = await services.db.fetchval("SELECT count(*) FROM message_thread")
    assert merged < len(await mail.messages())  # replies and merges did build conversations
    assert await account_admin(services).delete(user_id, second)
    mail.accounts.remove(second)
    assert await _read(mailbox, mail.accounts, 999) == await _fresh(mailbox, roles[LabelRole.INBOX])
    assert await label_counts(services).kept_counts() == await label_counts(services).fresh_counts()
    assert not await services.db.fetchval("SELECT count(*) FROM label_count WHERE account_id = $1", second)


async def test_the_repair_puts_drifted_counts_right_and_logs_them(
    mailbox: Mailbox, caplog: pytest.LogCaptureFixture
) -> None:
    services = mailbox.services
    for n in range(3):
        raw = make_message(message_id=f"r{n}@counts.example", subject=f"Repair {n}")
        await services.pipeline.ingest([mailbox.message(raw)])
    right = await label_counts(services).kept_counts()
    # Drift the way a path the triggers cannot see would: rows changed with the triggers switched off.
    async with services.db.transaction():
        await services.db.execute("SET LOCAL session_replication_role = replica")
        await services.db.execute("UPDATE message SET seen_at = now() WHERE rfc_message_id = 'r0@counts.example'")
        await services.db.execute("UPDATE label_count SET emails = emails + 5 WHERE label_id = $1", mailbox.inbox)
    assert await label_counts(services).kept_counts() != await label_counts(services).fresh_counts()

    with caplog.at_level(logging.WARNING, logger="plmail.mail.counts"):
        report = await services.label_counts.repair()
    assert await label_counts(services).kept_counts() == await label_counts(services).fresh_counts()
    assert await label_counts(services).kept_counts() != right  # the message that was read stays read
    assert report.shares_moved >= 1 and len(report.drifted) >= 1
    assert any("drifted" in r.getMessage() for r in caplog.records)

    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="plmail.mail.counts"):
        again = await services.label_counts.repair()
    assert again.shares_moved == 0 and again.drifted == ()
    assert not caplog.records  # nothing drifted, nothing logged


async def test_a_batch_that_threads_labels_and_merges_at_once_leaves_every_count_right(mailbox: Mailbox) -> None:
    """One ingest call the way a first import's page arrives: two accounts, replies before the mail they answer, a
    message joining two conversations, read and unread, two labels; every count as if counted from scratch."""
    services, user_id = mailbox.services, mailbox.user.id
    second = await mailbox.new_account("Second")
    await _hide_nothing(mailbox)
    work = await services.labels.find_or_create(user_id, "Work")
    roles = await services.labels.role_ids(user_id)

    def raw(mid: str, refs: tuple[str, ...] = (), minute: int = 0) -> bytes:
        return make_message(message_id=f"{mid}@batch.example", subject=f"Thread of {mid}",
                            references=tuple(f"{r}@batch.example" for r in refs),
                            in_reply_to=f"{refs[-1]}@batch.example" if refs else None,
                            date=BASE_DATE + timedelta(minutes=minute))

    batch = [
        mailbox.message(raw("a2", ("a1",), 2)),  # the reply arrives before what it answers
        mailbox.message(raw("a1", (), 1), seen=True),
        mailbox.message(raw("b1", (), 3), label_ids=(mailbox.inbox, work)),
        mailbox.message(raw("b2", ("b1",), 4), seen=True, label_ids=(work,)),
        mailbox.message(raw("j1", ("a1", "b1"), 5)),  # joins the two conversations into one
        mailbox.message(raw("c1", (), 6), seen=True),
        mailbox.message(raw("d1", (), 7), account_id=second),
        mailbox.message(raw("d2", ("d1",), 8), account_id=second, seen=True, label_ids=(work,)),
    ]
    await services.pipeline.ingest(batch)
    assert await _read(mailbox, [mailbox.account_id, second], 1) == await _fresh(mailbox, roles[LabelRole.INBOX])
    assert await label_counts(services).kept_counts() == await label_counts(services).fresh_counts()
    assert await services.db.fetchval("SELECT count(DISTINCT thread_id) FROM message") == 3

    # A second page answering the first: the kept shares of the first page's threads move, not only new ones.
    await services.pipeline.ingest([mailbox.message(raw("a3", ("a1", "a2"), 9)),
                                    mailbox.message(raw("d3", ("d2",), 10), account_id=second, seen=True)])
    assert await _read(mailbox, [mailbox.account_id, second], 2) == await _fresh(mailbox, roles[LabelRole.INBOX])
    assert await label_counts(services).kept_counts() == await label_counts(services).fresh_counts()


async def test_deferred_refreshes_wait_for_the_flush_and_are_forgotten_with_a_rollback(mailbox: Mailbox) -> None:
    services = mailbox.services
    db = services.db
    await services.pipeline.ingest([mailbox.message(make_message(message_id="x1@defer.example", subject="One"))])
    emails_of = "SELECT emails FROM label_count WHERE label_id = $1 AND account_id = $2"
    start = await db.fetchval(emails_of, mailbox.inbox, mailbox.account_id)
    thread = await db.fetchval("SELECT thread_id FROM message WHERE rfc_message_id = 'x1@defer.example'")
    message = await db.fetchval("SELECT id FROM message WHERE rfc_message_id = 'x1@defer.example'")
    work = await services.labels.find_or_create(mailbox.user.id, "Work")

    async with db.transaction():
        await db.execute("SELECT set_config('plmail.defer_label_counts', 'on', true)")
        await db.execute("INSERT INTO message_label (message_id, label_id) VALUES ($1, $2)", message, work)
        await db.execute("INSERT INTO thread_label (thread_id, label_id) VALUES ($1, $2)", thread, work)
        # Noted, not counted yet.
        assert await db.fetchval(emails_of, work, mailbox.account_id) is None
        await db.execute("SELECT plmail_flush_label_counts()")
        assert await db.fetchval(emails_of, work, mailbox.account_id) == 1
        # After the flush the triggers count at once again.
        await db.execute("DELETE FROM message_label WHERE message_id = $1 AND label_id = $2", message, work)
        assert await db.fetchval(emails_of, work, mailbox.account_id) == 0
    assert await label_counts(services).kept_counts() == await label_counts(services).fresh_counts()

    class Abandon(Exception):
        pass

    async def abandoned_removal() -> None:
        async with db.transaction():
            await db.execute("SELECT set_config('plmail.defer_label_counts', 'on', true)")
            await db.execute("DELETE FROM message_label WHERE message_id = $1 AND label_id = $2",
                             message, mailbox.inbox)
            raise Abandon

    with pytest.raises(Abandon):
        await abandoned_removal()
    # The rollback took the noted threads with it: the next transaction counts at once, and nothing drifted.
    assert await db.fetchval(emails_of, mailbox.inbox, mailbox.account_id) == start
    await db.execute("DELETE FROM message_label WHERE message_id = $1 AND label_id = $2", message, mailbox.inbox)
    assert await db.fetchval(emails_of, mailbox.inbox, mailbox.account_id) == start - 1
    assert await label_counts(services).kept_counts() == await label_counts(services).fresh_counts()
