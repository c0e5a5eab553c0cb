"""Plan shapes against the real planner: every list page, every search operator and a JMAP mailbox's total read a
bounded part of the mail, never all of it, so it costs the same at 100,000 messages as at 1,000,000 (issue 22).

The mailbox is filled through SQL (tests/support/bulk_mail.py), analysed, and each page's own SQL is run under
EXPLAIN ANALYZE: no sequential scan of the mail tables, and the rows its scans return stay a small fraction of
the mailbox. A plan that sorts every matching thread, or walks every thread looking for rare matches, fails.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from plmail.domain.enums import Category
from plmail.domain.mailstore import MailScope
from plmail.mail.reader import WALKED_VIEWS
from plmail.mail.repos.jmap_query import mailbox_total_query
from plmail.mail.repos.sender_auth import newest_inbox_headers_query
from plmail.mail.search import parse_search
from plmail.mail.sender_auth import LEARN_SAMPLE
from plmail.services import Services
from tests.support.bulk_mail import fill

MESSAGES = 20_000
MAIL_TABLES = {"message", "message_thread", "thread_label", "message_label", "message_part", "label_count_share"}
# A page reads its 50 threads plus what it skips to find them; an eighth of the mailbox is far above that and
# far below a scan (the threads and messages together are 28,000 rows). A date operator walks the threads newer
# than its date: that grows with the mail of those days, not with the mailbox.
ROW_BUDGET = MESSAGES // 8


@dataclass(frozen=True)
class Scan:
    node: str
    relation: str
    index: str
    rows: float


def _scans(plan: dict[str, Any]) -> Iterator[Scan]:
    if "Relation Name" in plan or "Index Name" in plan:
        rows = float(plan.get("Actual Rows", 0)) * float(plan.get("Actual Loops", 1))
        yield Scan(plan["Node Type"], plan.get("Relation Name", ""), plan.get("Index Name", ""), rows)
    for child in plan.get("Plans", ()):
        yield from _scans(child)


async def _explain(services: Services, sql: str, args: tuple[Any, ...]) -> list[Scan]:
    rows = await services.db.fetch("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, *args)
    document = rows[0][0]
    plan = (json.loads(document) if isinstance(document, str) else document)[0]["Plan"]
    return list(_scans(plan))


def _verdict(name: str, scans: list[Scan]) -> list[str]:
    problems = [f"{name}: sequential scan of {s.relation}" for s in scans
                if s.node == "Seq Scan" and s.relation in MAIL_TABLES]
    read = sum(s.rows for s in scans if s.relation in MAIL_TABLES or s.index)
    if read > ROW_BUDGET:
        detail = ", ".join(f"{s.node} {s.relation or s.index} {s.rows:.0f}" for s in scans if s.rows > 100)
        problems.append(f"{name}: read {read:.0f} rows (budget {ROW_BUDGET}): {detail}")
    return problems


async def _rare_mail(services: Services, user_id: int, accounts: tuple[int, ...]) -> int:
    """Mail a few threads carry: a label only the second account uses, a mailing list, attachments, a sender."""
    rare = await services.labels.find_or_create(user_id, "Rare")
    db = services.db
    await db.execute(
        """INSERT INTO message_label (message_id, label_id)
           SELECT m.id, $1 FROM message m JOIN message_thread t ON t.id = m.thread_id
            WHERE t.account_id = $2 AND t.id % 400 = 1""", rare, accounts[1])
    await db.execute(
        """INSERT INTO thread_label (thread_id, label_id)
           SELECT DISTINCT m.thread_id, $1::int FROM message m JOIN message_label ml ON ml.message_id = m.id
            WHERE ml.label_id = $1::int""", rare)
    await db.execute("""UPDATE message SET headers = headers || '{"List-Id": "<rare.lists.example>"}'::jsonb
                         WHERE id % 997 = 5""")
    await db.execute(
        """INSERT INTO message_part (message_id, part_path, content_type, filename, disposition, size, is_inline,
                                     is_calendar)
           SELECT id, '1', 'text/plain', NULL, 'inline', 2000, true, false FROM message
           UNION ALL
           SELECT id, '2', 'application/pdf', 'invoice-' || id || '.pdf', 'attachment', 1000, false, false
             FROM message WHERE has_attachments""")
    # Two words of senders' names both past the rarest-term count's cap, rare together: 606 senders are "News",
    # 60 of them "Person News"; every other sender's name has "Person".
    await db.execute("UPDATE message SET from_name = CASE WHEN id % 30 = 0 THEN 'Person News' ELSE 'News' END "
                     "WHERE id % 33 = 1")
    async with db.connection() as conn:
        await conn.execute("ANALYZE")
    return rare


async def test_every_page_and_search_operator_reads_a_bounded_part_of_the_mail(services: Services) -> None:
    filled = await fill(services, MESSAGES, report=False)
    rare = await _rare_mail(services, filled.user_id, filled.accounts)
    views = services.reader.views
    user_id, labels = filled.user_id, filled.labels
    pages: list[tuple[str, tuple[str, tuple[Any, ...]]]] = []
    for tab in Category:
        pages.append((f"inbox {tab.value} tab", await views.label_threads_query(
            user_id, labels["inbox"], category=tab.value, limit=51, offset=0)))
    pages += [
        ("inbox page 5", await views.label_threads_query(user_id, labels["inbox"], category="primary", limit=51,
                                                         offset=200)),
        ("label, all accounts", await views.label_threads_query(user_id, labels["work"], category=None, limit=51,
                                                                offset=0)),
        ("label, one account", await views.label_threads_query(user_id, labels["work"], category=None, limit=51,
                                                               offset=0, account_id=filled.accounts[0])),
        ("sparse label, the account that uses it", await views.label_threads_query(
            user_id, rare, category=None, limit=51, offset=0, account_id=filled.accounts[1])),
        ("sparse label, an account that never used it", await views.label_threads_query(
            user_id, rare, category=None, limit=51, offset=0, account_id=filled.accounts[0])),
        ("trash", await views.label_threads_query(user_id, labels["trash"], category=None, limit=51, offset=0,
                                                  include_binned=True)),
    ]
    roles = await services.labels.role_ids(user_id)
    for view, hidden in WALKED_VIEWS.items():  # the sidebar's All mail and Archive
        pages.append((f"{view} view", views.walked_threads_query(
            user_id, without_labels=[roles[r] for r in hidden], limit=51, offset=0)))
    searches = {
        "two words": "invoice meeting", "a rare word": "zyxwvut", "from: a domain": "from:example7.org",
        "from: a person": "from:person123", "to: a team": "to:team17@corp17.com", "to: nobody": "to:nobody@nowhere",
        "to: a domain": "to:corp17.com", "from: two words": 'from:"Person 123"',
        "to: a substring": "to:*team17@corp17*", "from: in the inbox": "from:example7.org in:inbox",
        "from: two frequent words, rare together": 'from:"Person News"',
        "cc:": "cc:carol@example.org", "bcc:": "bcc:dave@example.org", "subject: common": "subject:Thread",
        "subject: rare": 'subject:"Thread 12345"', "list:": "list:rare.lists", "list: none": "list:other.lists",
        "filename:": "filename:invoice-77", "has:attachment": "has:attachment", "is:unread": "is:unread",
        "is:starred": "is:starred", "older_than:": "older_than:1d", "newer_than:": "newer_than:1d",
        "before:": "before:2020-01-01", "after:": "after:2020-01-01", "in:trash": "in:trash",
    }
    for name, query in searches.items():
        parsed = parse_search(query)
        label_ids = [labels[parsed.roles[0].value]] if parsed.roles else []
        pages.append((f"search {name}", views.search_query(user_id, parsed, label_ids, ranked=False, limit=51,
                                                           offset=0)))
    pages.append(("search label:Work", views.search_query(user_id, parse_search("label:Work"), [labels["work"]],
                                                          ranked=False, limit=51, offset=0)))

    # A phone's list view with calculateTotal (RFC 8621 §4.4.3): the Inbox's total, unified and in one account.
    unified = MailScope(user_id, filled.accounts, unified=True)
    single = MailScope.single(user_id, filled.accounts[0])
    binding = await services.db.fetchval("SELECT id FROM label_binding WHERE label_id = $1 AND account_id = $2",
                                         labels["inbox"], filled.accounts[0])
    for scope, inbox in ((unified, labels["inbox"]), (single, binding)):
        for collapse in (True, False):
            plan = services.email_query.plan(scope, {"inMailbox": inbox}, None, collapse=collapse, categories=False)
            assert plan.mailbox_only
            pages.append((f"JMAP Inbox total, {'unified' if scope.unified else 'one account'}, "
                          f"{'threads' if collapse else 'emails'}", mailbox_total_query(plan.query, collapse=collapse)))

    # Learning an IMAP account's receiving server asks for its newest Inbox mail on every batch of a first import
    # while nothing is learned: reading the whole Inbox each time made the import slower with every page.
    pages.append(("the newest Inbox mail a receiver is learned from",
                  newest_inbox_headers_query(filled.accounts[0], labels["inbox"], LEARN_SAMPLE)))

    problems: list[str] = []
    for name, (sql, args) in pages:
        problems += _verdict(name, await _explain(services, sql, args))
    assert not problems, "\n".join(problems)

    # The sparse view's shape follows its kept count: few threads are gathered from the shares by (label,
    # account); many are walked newest first.
    sparse = await _explain(services, *await views.label_threads_query(
        user_id, rare, category=None, limit=51, offset=0, account_id=filled.accounts[1]))
    dense = await _explain(services, *await views.label_threads_query(
        user_id, labels["inbox"], category=None, limit=51, offset=0, account_id=filled.accounts[1]))
    assert any(s.index == "idx_label_count_share_view" for s in sparse), sparse
    assert not any(s.index == "idx_label_count_share_view" for s in dense), dense

    # The Trash walks its binned threads down their own index and stops after the page (one thread in a hundred is
    # binned: walking every thread for them read a hundred for each listed, 25 ms at 1M messages).
    trash = await _explain(services, *await views.label_threads_query(
        user_id, labels["trash"], category=None, limit=51, offset=0, include_binned=True))
    assert any(s.index == "idx_message_thread_binned" for s in trash), trash
    assert sum(s.rows for s in trash if s.relation == "message_thread") <= 2 * 51, trash

    # A frequent sender's or recipient's search walks its term's btree newest first and stops after the page: it
    # reads about a page of term rows (2.5 messages a thread), not the term's 500 or 800 messages.
    for query in ("from:example7.org", "to:corp17.com", "cc:nobody@nowhere"):
        scans = await _explain(services, *views.search_query(user_id, parse_search(query), [], ranked=False, limit=51,
                                                             offset=0))
        walked = sum(s.rows for s in scans if s.index == "idx_message_address_term_walk")
        read = sum(s.rows for s in scans)
        assert walked <= 4 * 51 and read <= 16 * 51, (query, walked, read, [s for s in scans if s.rows > 10])
        assert any(s.index == "idx_message_address_term_walk" for s in scans), scans

    # A first import stores the Inbox first, so the rest of an account's mail can all be newer than its Inbox: the
    # sample a receiving server is learned from still reads a bounded part of the mail.
    await services.db.execute(
        """UPDATE message m SET received_at = m.received_at - interval '30 years'
            WHERE m.account_id = $1
              AND EXISTS (SELECT 1 FROM message_label ml WHERE ml.message_id = m.id AND ml.label_id = $2)""",
        filled.accounts[0], labels["inbox"])
    async with services.db.connection() as conn:
        await conn.execute("ANALYZE message")
    buried = newest_inbox_headers_query(filled.accounts[0], labels["inbox"], LEARN_SAMPLE)
    assert not _verdict("the newest Inbox mail, under newer mail elsewhere", await _explain(services, *buried))
