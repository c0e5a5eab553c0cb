"""What the mail pages read: thread lists, one thread with its messages, tab counts, search.

Every query starts from the user: threads are reached through accounts the user owns, and binned
threads (in the trash, kept by triggers) never show in lists, counts or search.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from plmail.db.database import Database
from plmail.db.repos.threads import thread_tab
from plmail.domain.messages import flags_say_draft
from plmail.domain.search import SearchQuery
from plmail.mail.repos.filter_sql import ADDRESS_WORD_FIELDS, RULE_VOCABULARY, FilterCompiler, Params, address_words


@dataclass(frozen=True, slots=True)
class ThreadSummary:
    id: int
    account_id: int
    account_name: str
    subject: str
    last_message_at: datetime | None
    message_count: int
    unread_count: int
    has_attachments: bool
    starred: bool
    category: str | None
    sender_name: str
    sender_address: str
    preview: str
    binned: bool = False
    snoozed_until: datetime | None = None
    label_ids: tuple[int, ...] = ()  # the thread's labels, for the chips on its row
    participants: tuple[tuple[str, bool], ...] = ()  # (name or address, is one of the user's) by first message
    has_invitation: bool = False  # its newest message carries a calendar part (the row's invitation chip)


@dataclass(frozen=True, slots=True)
class MessageView:
    id: int
    thread_id: int | None
    account_id: int
    subject: str
    from_name: str
    from_address: str
    to: tuple[dict[str, str], ...]
    cc: tuple[dict[str, str], ...]
    sent_at: datetime | None
    received_at: datetime | None
    unread: bool
    starred: bool
    body_text: str | None
    body_html: str | None  # raw: only ever re-sanitised, never rendered
    body_html_safe: str | None
    headers: dict[str, Any]
    provider_labels: list[str] | None
    category: str | None
    attachments: tuple[AttachmentView, ...]
    parse_note: str | None = None  # what was not read of a hostile message
    is_draft: bool = False
    bcc: tuple[dict[str, str], ...] = ()  # known only on the user's own copies
    rfc_message_id: str | None = None
    in_reply_to: tuple[str, ...] = ()
    references: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AttachmentView:
    id: int
    filename: str
    content_type: str
    size: int
    content_id: str | None
    is_inline: bool
    sha256: str | None


_SEARCH_COMPILER = FilterCompiler(RULE_VOCABULARY)
_TAB = thread_tab("t")
_SUMMARY = f"""
SELECT t.id, t.account_id, a.name AS account_name, coalesce(t.subject, '') AS subject, t.last_message_at,
       t.message_count, t.unread_count, t.attachment_count > 0 AS has_attachments, t.starred_at IS NOT NULL AS starred,
       {_TAB} AS category, coalesce(latest.from_name, '') AS sender_name,
       coalesce(latest.from_address, '') AS sender_address, coalesce(latest.preview, '') AS preview, t.binned,
       t.snoozed_until,
       -- The newest message's calendar part, by a partial index that holds only those: a page reads no more
       -- message rows for its chips than it does without them (tests/integration/mail/test_plans.py).
       EXISTS (SELECT 1 FROM message_part ip WHERE ip.message_id = latest.id AND ip.is_calendar) AS has_invitation,
       ARRAY(SELECT tl.label_id FROM thread_label tl WHERE tl.thread_id = t.id ORDER BY tl.label_id) AS label_ids,
       -- Who wrote in the conversation, in the order they first did (the list's "me, Carol, Dave"); drafts not.
       -- Dates that tie (clients write whole seconds) fall back on arrival, as the thread's own order does.
       (SELECT coalesce(jsonb_agg(jsonb_build_array(p.name, p.me) ORDER BY p.first, p.arrived, p.first_id),
                        '[]'::jsonb) FROM (
           SELECT min(coalesce(m.sent_at, m.received_at, m.created_at)) AS first,  -- when they wrote (Date)
                  min(coalesce(m.received_at, m.created_at)) AS arrived, min(m.id) AS first_id,
                  (array_agg(coalesce(nullif(m.from_name, ''), m.from_address, '')
                             ORDER BY coalesce(m.sent_at, m.received_at, m.created_at) DESC))[1] AS name,
                  bool_or(EXISTS (SELECT 1 FROM account ia WHERE ia.user_id = a.user_id
                                     AND lower(ia.email) = lower(m.from_address))
                          OR EXISTS (SELECT 1 FROM identity i JOIN account ia ON ia.id = i.account_id
                                      WHERE ia.user_id = a.user_id AND lower(i.email) = lower(m.from_address))) AS me
             FROM message m WHERE m.thread_id = t.id AND NOT coalesce(m.flags ? '$draft', false)
            GROUP BY lower(coalesce(m.from_address, ''))) p) AS participants
  FROM message_thread t
  JOIN account a ON a.id = t.account_id
  LEFT JOIN LATERAL (
       SELECT m.id, m.from_name, m.from_address, m.preview FROM message m WHERE m.thread_id = t.id
        ORDER BY coalesce(m.received_at, m.sent_at, m.created_at) DESC, m.id DESC LIMIT 1) latest ON true
"""


# An address term with more messages than this counts as frequent when a search picks the rarest to walk.
RAREST_TERM_CAP = 500
_COMMON_TERMS = """common AS MATERIALIZED (
    SELECT f.term COLLATE "C" AS term, f.freq FROM pg_stats s,
           unnest(s.most_common_vals::text::text[], s.most_common_freqs) AS f(term, freq)
     WHERE s.schemaname = current_schema() AND s.tablename = 'message_address_term' AND s.attname = 'term'),"""
# Above this many threads a view is always walked (see label_threads_query).
SPARSE_VIEW_THREADS = 5_000
# The candidates come from the kept counts' per-thread shares, indexed by (label, account, tab); the
# thread_label condition of the query stays the truth.
_LABELLED_FIRST = """
labelled AS MATERIALIZED (
    SELECT s.thread_id AS id FROM label_count_share s
     WHERE s.label_id = $2 AND s.threads > 0 AND ($7::int IS NULL OR s.account_id = $7)
       AND ($3::text IS NULL OR s.category = $3) AND ($6 OR NOT s.binned)),
"""
# The same for the view's threads that are not binned (a view that lists binned ones walks those apart).
_UNBINNED_FIRST = _LABELLED_FIRST.replace("($6 OR NOT s.binned)", "NOT s.binned")


def _page_of(inner: str, ctes: str = "", *, recursive: bool = False) -> str:
    """The summaries of the threads `inner` selects (id, rank), in its order: the page is chosen first, so
    the newest message of a thread is looked up for the threads on the page only."""
    return (f"WITH {'RECURSIVE ' if recursive else ''}{ctes} page AS MATERIALIZED ({inner}) " + _SUMMARY
            + " JOIN page ON page.id = t.id ORDER BY page.rank DESC NULLS LAST, t.last_message_at DESC, t.id DESC")


def _summary(r: asyncpg.Record) -> ThreadSummary:
    return ThreadSummary(
        r["id"], r["account_id"], r["account_name"] or "", r["subject"], r["last_message_at"], r["message_count"],
        r["unread_count"], r["has_attachments"], r["starred"], r["category"], r["sender_name"], r["sender_address"],
        r["preview"], r["binned"], r["snoozed_until"], tuple(r["label_ids"] or ()),
        tuple((str(name), bool(me)) for name, me in (_loads(r["participants"]) or ())), bool(r["has_invitation"]),
    )


def _loads(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


class MailViewRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def label_threads(
        self, user_id: int, label_id: int, *, category: str | None, limit: int, offset: int,
        account_id: int | None = None, include_binned: bool = False,
    ) -> list[ThreadSummary]:
        sql, args = await self.label_threads_query(user_id, label_id, category=category, limit=limit, offset=offset,
                                                   account_id=account_id, include_binned=include_binned)
        return [_summary(r) for r in await self.db.fetch(sql, *args)]

    async def label_threads_query(
        self, user_id: int, label_id: int, *, category: str | None, limit: int, offset: int,
        account_id: int | None = None, include_binned: bool = False,
    ) -> tuple[str, tuple[Any, ...]]:
        """The SQL of one page of a label view, in the shape the view's kept thread count calls for.

        A view with many threads walks the threads newest first and stops after one page; one with few
        (a label one account hardly uses, an empty tab) would walk every thread for it, so its labelled
        threads are gathered first and sorted, whichever touches fewer rows."""
        row = await self.db.fetchrow(
            """SELECT (SELECT coalesce(sum(threads), 0) FROM label_count
                        WHERE label_id = $1 AND ($2::int IS NULL OR account_id = $2) AND ($3 OR NOT binned)
                          AND ($4::text IS NULL OR category = $4)) AS threads,
                      (SELECT greatest(reltuples, 0) FROM pg_class WHERE oid = 'message_thread'::regclass) AS every""",
            label_id, account_id, False, category,  # the threads outside the Trash: the part whose shape is chosen
        )
        assert row is not None
        # Gathering costs the view's threads (each about four times a walked one: measured at 100k messages);
        # the walk about (offset + limit) × every thread / the view's.
        threads, every = int(row["threads"]), float(row["every"] or 0)
        sparse = threads <= SPARSE_VIEW_THREADS and 4 * threads * threads < (offset + limit) * every
        view = """
                   JOIN account a ON a.id = t.account_id
                  WHERE a.user_id = $1 AND {binned}
                    AND EXISTS (SELECT 1 FROM thread_label tl WHERE tl.thread_id = t.id AND tl.label_id = $2)
                    AND ($3::text IS NULL OR """ + _TAB + """ = $3) AND ($7::int IS NULL OR t.account_id = $7)
                  ORDER BY t.last_message_at DESC, t.id DESC"""
        source = "labelled l JOIN message_thread t ON t.id = l.id" if sparse else "message_thread t"
        if not include_binned:
            inner = ("SELECT t.id, NULL::real AS rank FROM " + source
                     + view.format(binned="($6 OR NOT t.binned)") + " LIMIT $4 OFFSET $5")
            return _page_of(inner, _LABELLED_FIRST if sparse else ""), (
                user_id, label_id, category, limit, offset, include_binned, account_id)
        # The Trash: its binned threads walked newest first down their own small index (a binned thread is in the
        # Trash by definition: every message of it is), and its other threads (some of their messages in it), if the
        # kept count has any, as any view's; then the page of the two. Walking every thread for the binned ones read
        # a hundred for each listed where one in a hundred is binned.
        page = " LIMIT $4::bigint + $5::bigint"
        binned = """SELECT t.id, t.last_message_at FROM message_thread t JOIN account a ON a.id = t.account_id
                     WHERE a.user_id = $1 AND $6 AND t.binned AND $2::int IS NOT NULL
                       AND ($3::text IS NULL OR """ + _TAB + """ = $3) AND ($7::int IS NULL OR t.account_id = $7)
                     ORDER BY t.last_message_at DESC, t.id DESC""" + page
        unbinned = " UNION ALL (SELECT t.id, t.last_message_at FROM " + source + view.format(
            binned="NOT t.binned") + page + ")" if threads else ""
        inner = ("SELECT x.id, NULL::real AS rank FROM ((" + binned + ")" + unbinned + ") x"
                 " ORDER BY x.last_message_at DESC, x.id DESC LIMIT $4 OFFSET $5")
        return _page_of(inner, _UNBINNED_FIRST if sparse and threads else ""), (
            user_id, label_id, category, limit, offset, include_binned, account_id)

    async def walked_threads(self, user_id: int, *, without_labels: Sequence[int], limit: int, offset: int
                             ) -> list[ThreadSummary]:
        sql, args = self.walked_threads_query(user_id, without_labels=without_labels, limit=limit, offset=offset)
        return [_summary(r) for r in await self.db.fetch(sql, *args)]

    def walked_threads_query(self, user_id: int, *, without_labels: Sequence[int], limit: int, offset: int
                             ) -> tuple[str, tuple[Any, ...]]:
        """A page of the views that are no label, All mail and Archive: every thread but those carrying one of
        `without_labels` (and never a binned one), walked newest first and stopping after a page."""
        inner = """SELECT t.id, NULL::real AS rank FROM message_thread t JOIN account a ON a.id = t.account_id
                    WHERE a.user_id = $1 AND NOT t.binned
                      AND NOT EXISTS (SELECT 1 FROM thread_label tl
                                       WHERE tl.thread_id = t.id AND tl.label_id = ANY($2::int[]))
                    ORDER BY t.last_message_at DESC, t.id DESC LIMIT $3 OFFSET $4"""
        return _page_of(inner), (user_id, list(without_labels), limit, offset)

    async def label_thread_ids(
        self, user_id: int, label_id: int, *, category: str | None, account_id: int | None, include_binned: bool,
        cap: int,
    ) -> list[int]:
        """Every thread of a view, for "select all conversations in this view"."""
        rows = await self.db.fetch(
            f"""SELECT t.id FROM message_thread t JOIN account a ON a.id = t.account_id
                WHERE a.user_id = $1 AND ($4 OR NOT t.binned)
                  AND EXISTS (SELECT 1 FROM thread_label tl WHERE tl.thread_id = t.id AND tl.label_id = $2)
                  AND ($3::text IS NULL OR {_TAB} = $3) AND ($5::int IS NULL OR t.account_id = $5)
                ORDER BY t.last_message_at DESC, t.id DESC LIMIT $6""",
            user_id, label_id, category, include_binned, account_id, cap,
        )
        return [r["id"] for r in rows]

    async def thread_stamps(self, user_id: int, thread_ids: Sequence[int]) -> dict[int, str]:
        """A short text per thread that changes when what its page shows does (a new message, read, starred), for
        the offline copies of the service worker."""
        rows = await self.db.fetch(
            """SELECT t.id, concat_ws(':', extract(epoch FROM t.last_message_at)::text, t.message_count,
                                      t.unread_count, t.starred_at IS NOT NULL) AS stamp
                 FROM message_thread t JOIN account a ON a.id = t.account_id
                WHERE a.user_id = $1 AND t.id = ANY($2::bigint[])""",
            user_id, list(thread_ids))
        return {r["id"]: r["stamp"] for r in rows}

    async def account_labels(self, user_id: int) -> list[tuple[int, int, str, str | None, int]]:
        """(account id, label id, name, role, unread threads) for the per-account parts of the sidebar."""
        rows = await self.db.fetch(
            """SELECT b.account_id, l.id, l.name, l.role,
                      (SELECT coalesce(sum(c.unread_threads), 0) FROM label_count c
                        WHERE c.label_id = l.id AND c.account_id = b.account_id AND NOT c.binned) AS unread
                 FROM label_binding b JOIN label l ON l.id = b.label_id JOIN account a ON a.id = b.account_id
                WHERE a.user_id = $1 AND l.is_visible
                ORDER BY b.account_id, l.sort_order NULLS LAST, lower(l.name)""",
            user_id,
        )
        return [(r["account_id"], r["id"], r["name"], r["role"], r["unread"]) for r in rows]

    async def unread_by_category(self, user_id: int, label_id: int) -> dict[str, int]:
        rows = await self.db.fetch(
            """SELECT c.category, sum(c.unread_threads)::int AS n FROM label_count c
                 JOIN account a ON a.id = c.account_id
                WHERE a.user_id = $1 AND c.label_id = $2 AND NOT c.binned AND c.category <> ''
                GROUP BY c.category HAVING sum(c.unread_threads) > 0""",
            user_id, label_id,
        )
        return {r["category"]: r["n"] for r in rows}

    async def search(
        self, user_id: int, query: SearchQuery, label_ids: Sequence[int], *, ranked: bool, limit: int, offset: int,
    ) -> list[ThreadSummary]:
        """Threads of the user matching a parsed search: labels and states on the thread, conditions and
        free text on its messages. Every value goes in as a parameter."""
        sql, args = self.search_query(user_id, query, label_ids, ranked=ranked, limit=limit, offset=offset)
        return [_summary(r) for r in await self.db.fetch(sql, *args)]

    def search_query(
        self, user_id: int, query: SearchQuery, label_ids: Sequence[int], *, ranked: bool, limit: int, offset: int,
    ) -> tuple[str, tuple[Any, ...]]:
        params = Params()
        params.add(user_id)
        threads = ["TRUE" if query.includes_trash else "NOT t.binned"]
        for label_id in label_ids:
            threads.append(f"EXISTS (SELECT 1 FROM thread_label tl WHERE tl.thread_id = t.id "
                           f"AND tl.label_id = {params.add(label_id)})")
        if query.unread is not None:
            threads.append("t.unread_count > 0" if query.unread else "t.unread_count = 0")
        if query.starred:
            threads.append("t.starred_at IS NOT NULL")
        messages: list[str] = []
        if query.conditions:
            messages.append(_SEARCH_COMPILER.compile({"operator": "AND", "conditions": query.conditions}, params))
        tsquery = None
        if query.text:
            text = params.add(query.text)
            # English stems words, 'simple' keeps addresses and hosts whole: "invoices" and "example.org" match.
            tsquery = f"(websearch_to_tsquery('english', {text}) || websearch_to_tsquery('simple', {text}))"
            messages.append(f"EXISTS (SELECT 1 FROM message_search ms WHERE ms.message_id = m.id "
                            f"AND ms.search_vector @@ {tsquery})")
        matching = ""
        if messages:
            # A correlated EXISTS leaves the planner both flat shapes: walk the threads newest first and stop
            # after a page (common terms), or gather the few matching messages from an index (rare ones). The
            # thread's own account is the user's, so the messages need no join of their own.
            matching = f" AND EXISTS (SELECT 1 FROM message m WHERE m.thread_id = t.id AND {' AND '.join(messages)})"
        walked = [(ADDRESS_WORD_FIELDS[name], address_words(value, name))
                  for condition in query.conditions for name, value in condition.items() if name in ADDRESS_WORD_FIELDS]
        if walked and not (ranked and tsquery is not None):
            return self._address_walk(walked, threads + messages, params, limit=limit, offset=offset)
        rank = "NULL::real"
        if ranked and tsquery is not None:
            rank = (f"(SELECT max(ts_rank(ms.search_vector, {tsquery})) FROM message m "
                    f"JOIN message_search ms ON ms.message_id = m.id WHERE m.thread_id = t.id)")
        inner = (f"SELECT t.id, {rank} AS rank FROM message_thread t JOIN account a ON a.id = t.account_id "
                 f"WHERE a.user_id = $1 AND {' AND '.join(threads)}{matching} "
                 f"ORDER BY rank DESC NULLS LAST, t.last_message_at DESC, t.id DESC "
                 f"LIMIT {params.add(limit)} OFFSET {params.add(offset)}")
        return _page_of(inner), tuple(params.values)

    @staticmethod
    def _address_walk(
        walked: list[tuple[str, list[str]]], conditions: list[str], params: Params, *, limit: int, offset: int,
    ) -> tuple[str, tuple[Any, ...]]:
        """A search with from:/to:/cc:/bcc: walks one of its address terms newest first (its own btree) and stops
        once it has found the page's threads: the same cost for a sender of ten messages as for one of ten
        thousand. The term walked is the rarest (counted up to a cap, then the longest); the conditions
        (the other terms included) are checked on each message the walk meets. Threads come in the order of
        their newest matching message, as JMAP's collapsed Email/query has them."""
        candidates = " UNION ALL ".join(
            f"SELECT '{field}'::\"char\" AS field, unnest(plmail_query_address_terms({params.add(words)}::text[])) "
            f"COLLATE \"C\" AS term" for field, words in walked)
        rarest, common = "", ""
        if sum(len(words) for _, words in walked) > 1:
            # Counted up to a cap, then by the planner's most common values (a word every sender has, such as
            # a first name or "info", is there; a rarer one is not), then the longer.
            common = _COMMON_TERMS
            rarest = (f"ORDER BY (SELECT count(*) FROM (SELECT 1 FROM message_address_term x WHERE x.user_id = $1 "
                      f"AND x.field = c.field AND x.term = c.term LIMIT {RAREST_TERM_CAP}) s), "
                      f"(SELECT common.freq FROM common WHERE common.term = c.term) NULLS FIRST, length(c.term) DESC")
        wanted, skipped = params.add(offset + limit), params.add(offset)
        ctes = f"""{common} drive AS MATERIALIZED (SELECT c.field, c.term FROM ({candidates}) c {rarest} LIMIT 1),
        walk (n, thread_id, arrived_at, message_id, seen) AS (
            SELECT 0, NULL::bigint, 'infinity'::timestamptz, {2**63 - 1}::bigint, '{{}}'::bigint[]
            UNION ALL
            SELECT w.n + 1, s.thread_id, s.arrived_at, s.message_id, w.seen || s.thread_id
              FROM walk w CROSS JOIN LATERAL (
                   SELECT m.thread_id, x.arrived_at, x.message_id FROM message_address_term x
                     JOIN message m ON m.id = x.message_id JOIN message_thread t ON t.id = m.thread_id
                    WHERE x.user_id = $1 AND x.field = (SELECT field FROM drive) AND x.term = (SELECT term FROM drive)
                      AND (x.arrived_at, x.message_id) < (w.arrived_at, w.message_id)
                      AND m.thread_id <> ALL(w.seen) AND {' AND '.join(conditions)}
                    ORDER BY x.arrived_at DESC, x.message_id DESC LIMIT 1) s
             WHERE w.n < {wanted}),"""
        inner = f"SELECT thread_id AS id, arrived_at AS rank FROM walk WHERE n > {skipped}"
        return _page_of(inner, ctes, recursive=True), tuple(params.values)

    async def thread(self, user_id: int, thread_id: int) -> ThreadSummary | None:
        row = await self.db.fetchrow(_SUMMARY + " WHERE a.user_id = $1 AND t.id = $2", user_id, thread_id)
        return _summary(row) if row else None

    async def thread_messages(self, user_id: int, thread_id: int) -> list[MessageView]:
        rows = await self.db.fetch(
            """SELECT m.* FROM message m JOIN account a ON a.id = m.account_id
                WHERE a.user_id = $1 AND m.thread_id = $2
                ORDER BY coalesce(m.received_at, m.sent_at, m.created_at), m.id""",
            user_id, thread_id,
        )
        return await self._views(rows)

    async def message(self, user_id: int, message_id: int) -> MessageView | None:
        rows = await self.db.fetch(
            "SELECT m.* FROM message m JOIN account a ON a.id = m.account_id WHERE a.user_id = $1 AND m.id = $2",
            user_id, message_id,
        )
        views = await self._views(rows)
        return views[0] if views else None

    async def _views(self, rows: Sequence[asyncpg.Record]) -> list[MessageView]:
        if not rows:
            return []
        parts = await self.db.fetch(
            """SELECT id, message_id, coalesce(filename, '') AS filename, content_type, coalesce(size, 0) AS size,
                      content_id, is_inline, sha256 FROM message_part
                WHERE message_id = ANY($1::bigint[]) ORDER BY message_id, id""",
            [r["id"] for r in rows],
        )
        by_message: dict[int, list[AttachmentView]] = {}
        for p in parts:
            by_message.setdefault(p["message_id"], []).append(
                AttachmentView(p["id"], p["filename"], p["content_type"], p["size"], p["content_id"], p["is_inline"],
                               p["sha256"]))
        return [
            MessageView(
                id=r["id"], thread_id=r["thread_id"], account_id=r["account_id"], subject=r["subject"] or "",
                from_name=r["from_name"] or "", from_address=r["from_address"] or "",
                to=tuple(_loads(r["to_addresses"]) or ()), cc=tuple(_loads(r["cc_addresses"]) or ()),
                sent_at=r["sent_at"], received_at=r["received_at"], unread=r["seen_at"] is None,
                starred=r["starred_at"] is not None, body_text=r["body_text"], body_html=r["body_html"],
                body_html_safe=r["body_html_safe"], headers=_loads(r["headers"]) or {},
                provider_labels=_loads(r["provider_labels"]), category=r["category"],
                attachments=tuple(by_message.get(r["id"], ())), parse_note=r["parse_note"],
                is_draft=flags_say_draft(_loads(r["flags"]) or ()),
                bcc=tuple(_loads(r["bcc_addresses"]) or ()), rfc_message_id=r["rfc_message_id"],
                in_reply_to=tuple(_loads(r["in_reply_to"]) or ()),
                references=tuple(_loads(r["thread_references"]) or ()),
            )
            for r in rows
        ]

    async def part_by_content_id(self, user_id: int, message_id: int, content_id: str) -> AttachmentView | None:
        row = await self.db.fetchrow(
            """SELECT p.id, coalesce(p.filename, '') AS filename, p.content_type, coalesce(p.size, 0) AS size,
                      p.content_id, p.is_inline, p.sha256
                 FROM message_part p JOIN message m ON m.id = p.message_id JOIN account a ON a.id = m.account_id
                WHERE a.user_id = $1 AND p.message_id = $2 AND p.content_id = $3 LIMIT 1""",
            user_id, message_id, content_id,
        )
        if row is None:
            return None
        return AttachmentView(row["id"], row["filename"], row["content_type"], row["size"], row["content_id"],
                              row["is_inline"], row["sha256"])

    async def part(self, user_id: int, part_id: int) -> AttachmentView | None:
        row = await self.db.fetchrow(
            """SELECT p.id, coalesce(p.filename, '') AS filename, p.content_type, coalesce(p.size, 0) AS size,
                      p.content_id, p.is_inline, p.sha256
                 FROM message_part p JOIN message m ON m.id = p.message_id JOIN account a ON a.id = m.account_id
                WHERE a.user_id = $1 AND p.id = $2""",
            user_id, part_id,
        )
        if row is None:
            return None
        return AttachmentView(row["id"], row["filename"], row["content_type"], row["size"], row["content_id"],
                              row["is_inline"], row["sha256"])
