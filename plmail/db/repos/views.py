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
from plmail.db.repos.filter_sql import RULE_VOCABULARY, FilterCompiler, Params
from plmail.domain.search import SearchQuery


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
    gmail_label_ids: list[str] | None
    category: str | None
    attachments: tuple[AttachmentView, ...]
    is_draft: bool = False


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
_SUMMARY = """
SELECT t.id, t.account_id, a.name AS account_name, coalesce(t.subject, '') AS subject, t.last_message_at,
       t.message_count, t.unread_count, t.attachment_count > 0 AS has_attachments, t.starred_at IS NOT NULL AS starred,
       t.category, coalesce(latest.from_name, '') AS sender_name, coalesce(latest.from_address, '') AS sender_address,
       coalesce(latest.preview, '') AS preview, t.binned, t.snoozed_until,
       ARRAY(SELECT tl.label_id FROM thread_label tl WHERE tl.thread_id = t.id ORDER BY tl.label_id) AS label_ids
  FROM message_thread t
  JOIN account a ON a.id = t.account_id
  LEFT JOIN LATERAL (
       SELECT m.from_name, m.from_address, m.preview FROM message m WHERE m.thread_id = t.id
        ORDER BY coalesce(m.received_at, m.sent_at, m.created_at) DESC, m.id DESC LIMIT 1) latest ON true
"""


def _summary(r: asyncpg.Record) -> ThreadSummary:
    return ThreadSummary(
        r["id"], r["account_id"], r["account_name"] or "", r["subject"], r["last_message_at"], r["message_count"],
        r["unread_count"], r["has_attachments"], r["starred"], r["category"], r["sender_name"], r["sender_address"],
        r["preview"], r["binned"], r["snoozed_until"], tuple(r["label_ids"] or ()),
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
        rows = await self.db.fetch(
            _SUMMARY + """
             WHERE a.user_id = $1 AND ($6 OR NOT t.binned)
               AND EXISTS (SELECT 1 FROM thread_label tl WHERE tl.thread_id = t.id AND tl.label_id = $2)
               AND ($3::text IS NULL OR t.category = $3)
               AND ($7::int IS NULL OR t.account_id = $7)
             ORDER BY t.last_message_at DESC, t.id DESC LIMIT $4 OFFSET $5""",
            user_id, label_id, category, limit, offset, include_binned, account_id,
        )
        return [_summary(r) for r in rows]

    async def label_thread_ids(
        self, user_id: int, label_id: int, *, category: str | None, account_id: int | None, include_binned: bool,
        cap: int,
    ) -> list[int]:
        """Every thread of a view, for "select all conversations in this view"."""
        rows = await self.db.fetch(
            """SELECT t.id FROM message_thread t JOIN account a ON a.id = t.account_id
                WHERE a.user_id = $1 AND ($4 OR NOT t.binned)
                  AND EXISTS (SELECT 1 FROM thread_label tl WHERE tl.thread_id = t.id AND tl.label_id = $2)
                  AND ($3::text IS NULL OR t.category = $3) AND ($5::int IS NULL OR t.account_id = $5)
                ORDER BY t.last_message_at DESC, t.id DESC LIMIT $6""",
            user_id, label_id, category, include_binned, account_id, cap,
        )
        return [r["id"] for r in rows]

    async def account_labels(self, user_id: int) -> list[tuple[int, int, str, str | None, int]]:
        """(account id, label id, name, role, unread threads) for the per-account parts of the sidebar."""
        rows = await self.db.fetch(
            """SELECT b.account_id, l.id, l.name, l.role,
                      (SELECT count(*) FROM thread_label tl JOIN message_thread t ON t.id = tl.thread_id
                        WHERE tl.label_id = l.id AND t.account_id = b.account_id AND t.unread_count > 0
                          AND NOT t.binned) AS unread
                 FROM label_binding b JOIN label l ON l.id = b.label_id JOIN account a ON a.id = b.account_id
                WHERE a.user_id = $1 AND l.is_visible
                ORDER BY b.account_id, l.sort_order NULLS LAST, lower(l.name)""",
            user_id,
        )
        return [(r["account_id"], r["id"], r["name"], r["role"], r["unread"]) for r in rows]

    async def unread_by_category(self, user_id: int, label_id: int) -> dict[str, int]:
        rows = await self.db.fetch(
            """SELECT t.category, count(*) AS n FROM message_thread t
                 JOIN account a ON a.id = t.account_id
                 JOIN thread_label tl ON tl.thread_id = t.id AND tl.label_id = $2
                WHERE a.user_id = $1 AND NOT t.binned AND t.unread_count > 0 AND t.category IS NOT NULL
                GROUP BY t.category""",
            user_id, label_id,
        )
        return {r["category"]: r["n"] for r in rows}

    async def search(
        self, user_id: int, query: SearchQuery, label_ids: Sequence[int], *, ranked: bool, limit: int, offset: int,
    ) -> list[ThreadSummary]:
        """Threads of the user matching a parsed search: labels and states on the thread, conditions and
        free text on its messages. Every value goes in as a parameter."""
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
            messages.append(f"m.search_vector @@ {tsquery}")
        matching = ""
        if messages:
            matching = (" AND t.id IN (SELECT m.thread_id FROM message m JOIN account ma ON ma.id = m.account_id "
                        f"WHERE ma.user_id = $1 AND m.thread_id IS NOT NULL AND {' AND '.join(messages)})")
        order = "t.last_message_at DESC, t.id DESC"
        if ranked and tsquery is not None:
            order = (f"(SELECT max(ts_rank(m.search_vector, {tsquery})) FROM message m WHERE m.thread_id = t.id) "
                     f"DESC NULLS LAST, {order}")
        rows = await self.db.fetch(
            _SUMMARY + f" WHERE a.user_id = $1 AND {' AND '.join(threads)}{matching} ORDER BY {order} "
                       f"LIMIT {params.add(limit)} OFFSET {params.add(offset)}",
            *params.values,
        )
        return [_summary(r) for r in rows]

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
                gmail_label_ids=_loads(r["gmail_label_ids"]), category=r["category"],
                attachments=tuple(by_message.get(r["id"], ())), is_draft="$draft" in (_loads(r["flags"]) or ()),
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
