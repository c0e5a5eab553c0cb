"""Email/query in SQL: a filter fragment from the shared FilterCompiler (alias `m`), a sort from a
fixed vocabulary, and pages, totals and positions over the result.

The default order (newest first, id as tie-break) is read straight off
idx_message_account_received_id; dates missing from broken mail sort as the oldest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from plmail.db.database import Database
from plmail.mail.repos.filter_sql import Params, keyword_sql, thread_keyword_sql

SORT_EXPRESSIONS = {
    "receivedAt": "m.received_at",
    "sentAt": "m.sent_at",  # RFC 8621 §4.4.2 lists it; the Date header, null when it was missing or broken
    "size": "coalesce(m.size, 0)",
    "subject": "lower(coalesce(m.subject, ''))",
    "from": "lower(coalesce(nullif(m.from_name, ''), m.from_address, ''))",
    "to": "lower(coalesce(nullif(m.to_addresses->0->>'name', ''), m.to_addresses->0->>'address', ''))",
}
# Sorts by a keyword (RFC 8621 §4.4.2): whether the email, or all / some emails of its thread, have it.
KEYWORD_SORTS = frozenset({"hasKeyword", "allInThreadHaveKeyword", "someInThreadHaveKeyword"})
THREAD_SORTS = frozenset({"allInThreadHaveKeyword", "someInThreadHaveKeyword"})
# A message without a thread (its thread failed) is a thread of its own.
THREAD_KEY = "coalesce(m.thread_id, -m.id)"
_SERIAL_ROWS = 512


def sort_expression(name: str, keyword: str | None, params: Params) -> str:
    """The SQL a comparator sorts by; a keyword sort's keyword becomes a parameter."""
    if name == "hasKeyword":
        return f"({keyword_sql(keyword, params)})"
    if name in THREAD_SORTS:
        return f"({thread_keyword_sql(keyword, params, 'all' if name.startswith('all') else 'some')})"
    return SORT_EXPRESSIONS[name]


def order_by(keys: Sequence[tuple[str, bool]], id_column: str = "m.id") -> str:
    """ORDER BY for (SQL expression, ascending) pairs; the id breaks ties in the first key's direction."""
    parts = []
    for expression, ascending in keys:
        direction = "ASC NULLS FIRST" if ascending else "DESC NULLS LAST"
        parts.append(f"{expression} {direction}")
    first_ascending = keys[0][1] if keys else False
    parts.append(f"{id_column} ASC" if first_ascending else f"{id_column} DESC")
    return ", ".join(parts)


# Sentinels no mail text contains: the caller escapes the text as HTML and only then turns them into
# <mark> tags, so a highlighted snippet can never smuggle markup out of a message.
MARK_START, MARK_END = "\x02", "\x03"
_SUBJECT_OPTIONS = f"StartSel={MARK_START}, StopSel={MARK_END}, HighlightAll=true"
_PREVIEW_OPTIONS = (f"StartSel={MARK_START}, StopSel={MARK_END}, MaxFragments=2, MaxWords=20, MinWords=6, "
                    'FragmentDelimiter=" … "')
_QUERY = "(websearch_to_tsquery('english', {p}) || websearch_to_tsquery('simple', {p}))"


@dataclass(frozen=True, slots=True)
class EmailQuery:
    where: str  # compiled filter over alias m; $1 is the account id (or, unified, the account ids)
    params: tuple[Any, ...]
    order: str  # from order_by(keys)
    keys: tuple[tuple[str, bool], ...]  # what `order` is made of: (SQL expression, ascending) pairs
    unified: bool = False

    def arg(self, position_offset: int) -> str:
        return f"${len(self.params) + position_offset}"

    @property
    def accounts(self) -> str:
        return "m.account_id = ANY($1::bigint[])" if self.unified else "m.account_id = $1"


def page_query(query: EmailQuery, limit: int, offset: int, total: str | None = None) -> tuple[str, tuple[Any, ...]]:
    """The SQL of one page of a query's emails in order: (id, thread key); with `total` (a scalar subquery over
    the query's parameters, see mailbox_total_query) also that, on every row, computed once."""
    also = f", ({total}) AS total" if total is not None else ""
    if query.unified:
        # Each account's first rows walked down its own (account_id, received_at, id) index, then merged: an
        # account_id = ANY(...) over the whole set would sort every matching message of every account. The walks
        # hand up what the merge sorts by, so it reads no message again (at 1M, 1.3 instead of 2.5 ms for 256).
        sorted_by = "".join(f", {expression} AS s{n}" for n, (expression, _) in enumerate(query.keys))
        merged = order_by([(f"x.s{n}", ascending) for n, (_, ascending) in enumerate(query.keys)], "x.id")
        sql = f"""SELECT x.id, x.thread{also} FROM unnest($1::bigint[]) AS acc(account_id)
                   CROSS JOIN LATERAL (SELECT m.id, {THREAD_KEY} AS thread{sorted_by} FROM message m
                                        WHERE m.account_id = acc.account_id AND {query.where}
                                        ORDER BY {query.order}
                                        LIMIT {query.arg(1)}::bigint + {query.arg(2)}::bigint) x
                   ORDER BY {merged} LIMIT {query.arg(1)} OFFSET {query.arg(2)}"""
    else:
        sql = f"""SELECT m.id, {THREAD_KEY} AS thread{also} FROM message m
                   WHERE {query.accounts} AND {query.where}
                   ORDER BY {query.order} LIMIT {query.arg(1)} OFFSET {query.arg(2)}"""
    return sql, (*query.params, limit, offset)


def mailbox_total_query(query: EmailQuery, *, collapse: bool) -> tuple[str, tuple[Any, ...]]:
    """The total of a query whose filter is `inMailbox` alone ($2: the label in the unified account, the binding in
    one): the kept label counts, plus the mail in the mailbox not (yet) in a thread, which they leave out."""
    label = "$2" if query.unified else "(SELECT b.label_id FROM label_binding b WHERE b.id = $2 AND b.account_id = $1)"
    counted = "email_threads" if collapse else "emails"
    accounts = "c.account_id = ANY($1::bigint[])" if query.unified else "c.account_id = $1"
    return (f"""SELECT coalesce((SELECT sum(c.{counted}) FROM label_count c
                                  WHERE {accounts} AND c.label_id = {label}), 0)
                       + (SELECT count(*) FROM message m
                           WHERE {query.accounts} AND m.thread_id IS NULL AND {query.where})""", query.params)


class JmapQueryRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def page(self, query: EmailQuery, limit: int, offset: int) -> list[tuple[int, int]]:
        """(id, thread key) of matching emails in order."""
        return [(r["id"], r["thread"]) for r in await self._page(*page_query(query, limit, offset), limit + offset)]

    async def page_and_mailbox_total(self, query: EmailQuery, limit: int, offset: int, *, collapse: bool
                                     ) -> tuple[list[tuple[int, int]], int | None]:
        """A page of a query whose filter is `inMailbox` alone, and its total (mailbox_total) in the same statement:
        one round trip less when both are wanted. The total is None when the page is empty (no row carried it)."""
        total, _ = mailbox_total_query(query, collapse=collapse)
        rows = await self._page(*page_query(query, limit, offset, total), limit + offset)
        return [(r["id"], r["thread"]) for r in rows], (int(rows[0]["total"]) if rows else None)

    async def _page(self, sql: str, args: tuple[Any, ...], depth: int) -> list[Any]:
        if depth <= _SERIAL_ROWS:
            return await self.db.fetch(sql, *args)
        async with self.db.transaction():
            # Deeper pages are still cheapest walked down the index in order; split across parallel
            # workers (the planner's choice past ~1,000 rows) they took 4 times as long.
            await self.db.execute("SET LOCAL max_parallel_workers_per_gather = 0")
            rows = await self.db.fetch(sql, *args)
        return rows

    async def total(self, query: EmailQuery, *, collapse: bool) -> int:
        counted = f"count(DISTINCT {THREAD_KEY})" if collapse else "count(*)"
        return int(await self.db.fetchval(
            f"SELECT {counted} FROM message m WHERE {query.accounts} AND {query.where}", *query.params))

    async def mailbox_total(self, query: EmailQuery, *, collapse: bool) -> int:
        sql, args = mailbox_total_query(query, collapse=collapse)
        return int(await self.db.fetchval(sql, *args))

    async def positions(self, query: EmailQuery, ids: Sequence[int], *, collapse: bool) -> dict[int, int]:
        """Index in the (collapsed) result of each of `ids` that is in it."""
        if not ids:
            return {}
        if collapse:
            sql = f"""WITH firsts AS (
                          SELECT DISTINCT ON ({THREAD_KEY}) m.id FROM message m
                           WHERE {query.accounts} AND {query.where}
                           ORDER BY {THREAD_KEY}, {query.order})
                      SELECT id, idx FROM (
                          SELECT m.id, row_number() OVER (ORDER BY {query.order}) - 1 AS idx
                            FROM message m JOIN firsts f ON f.id = m.id) ranked
                       WHERE id = ANY({query.arg(1)}::bigint[])"""
        else:
            sql = f"""SELECT id, idx FROM (
                          SELECT m.id, row_number() OVER (ORDER BY {query.order}) - 1 AS idx
                            FROM message m WHERE {query.accounts} AND {query.where}) ranked
                       WHERE id = ANY({query.arg(1)}::bigint[])"""
        rows = await self.db.fetch(sql, *query.params, list(ids))
        return {r["id"]: int(r["idx"]) for r in rows}

    async def snippets(self, account_ids: Sequence[int], ids: Sequence[int], subject_terms: str, body_terms: str
                       ) -> dict[int, tuple[str | None, str | None]]:
        """(subject, preview) with matches between the sentinels; None where there is nothing to look for."""
        rows = await self.db.fetch(
            f"""SELECT m.id,
                       CASE WHEN $3 = '' THEN NULL ELSE ts_headline('english', coalesce(m.subject, ''),
                            {_QUERY.format(p="$3")}, $5) END AS subject,
                       CASE WHEN $4 = '' THEN NULL ELSE ts_headline('english', left(coalesce(m.body_text, ''), 200000),
                            {_QUERY.format(p="$4")}, $6) END AS preview
                  FROM message m WHERE m.account_id = ANY($1::bigint[]) AND m.id = ANY($2::bigint[])""",
            list(account_ids), list(ids), subject_terms, body_terms, _SUBJECT_OPTIONS, _PREVIEW_OPTIONS,
        )
        return {r["id"]: (r["subject"], r["preview"]) for r in rows}
