"""Querying an account's emails (JMAP's Email/query and /queryChanges) over the shared filter compiler.

The filter is the one compiler the user's rules use too (FilterCompiler with JMAP's vocabulary), so
a rule and a phone's query can never disagree about what a condition means.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from plmail.db.database import Database
from plmail.db.repos.jmap_changes import JmapChangeRepository
from plmail.domain.enums import JmapObjectType
from plmail.domain.errors import FilterError, UnanswerableError, ValidationError
from plmail.domain.mailstore import MailScope
from plmail.mail.query_cache import ResultCache, ScanState
from plmail.mail.repos.filter_sql import JMAP_VOCABULARY, UNIFIED_VOCABULARY, FilterCompiler, Params
from plmail.mail.repos.jmap_email import JmapEmailRepository
from plmail.mail.repos.jmap_query import (
    KEYWORD_SORTS,
    MARK_END,
    MARK_START,
    SORT_EXPRESSIONS,
    THREAD_SORTS,
    EmailQuery,
    JmapQueryRepository,
    order_by,
    sort_expression,
)

__all__ = ["COLLATIONS", "MARK_END", "MARK_START", "SORT_PROPERTIES", "EmailQueryService", "QueryDelta", "QueryPage",
           "QueryPlan", "SortKey", "sort_comparators"]

COLLATIONS = ("i;ascii-numeric", "i;ascii-casemap", "i;unicode-casemap")
_CHUNK = 256
_THREAD_CONDITIONS = frozenset({"allInThreadHaveKeyword", "someInThreadHaveKeyword", "noneInThreadHaveKeyword",
                                "threadCategory"})
MAX_QUERY_CHANGES = 10_000  # beyond this many changed emails, querying again is cheaper for everyone
SORT_PROPERTIES = (*SORT_EXPRESSIONS, *sorted(KEYWORD_SORTS))


@dataclass(frozen=True, slots=True)
class SortKey:
    property: str
    ascending: bool
    keyword: str | None = None  # the keyword of a hasKeyword / …InThreadHaveKeyword sort


@dataclass(frozen=True, slots=True)
class QueryPlan:
    query: EmailQuery
    collapse: bool
    thread_dependent: bool  # membership or position can move when another email of the thread changes
    # A filter that is one mailbox and nothing else ($2 of the query): its total is read from the kept counts.
    mailbox_only: bool = False


@dataclass(frozen=True, slots=True)
class QueryPage:
    position: int
    ids: list[int]
    total: int | None


@dataclass(frozen=True, slots=True)
class QueryDelta:
    removed: list[int]
    added: list[tuple[int, int]]  # (id, index in the new results)
    total: int | None


def _conditions(node: Any) -> set[str]:
    if not isinstance(node, Mapping):
        return set()
    if "operator" in node:
        found: set[str] = set()
        for child in node.get("conditions") or []:
            found |= _conditions(child)
        return found
    return set(node)


def sort_comparators(value: Any) -> list[SortKey]:
    if value is None:
        return [SortKey("receivedAt", False)]
    if not isinstance(value, list):
        raise ValidationError("'sort' must be a list of comparators.", field="sort")
    comparators = []
    for comparator in value:
        if not isinstance(comparator, dict) or not isinstance(comparator.get("property"), str):
            raise ValidationError("A comparator is an object with a 'property'.", field="sort")
        if comparator["property"] not in SORT_PROPERTIES:
            raise UnanswerableError(f"Emails cannot be sorted by {comparator['property']!r}.", reason="unsupportedSort")
        keyword = comparator.get("keyword")
        if comparator["property"] in KEYWORD_SORTS:
            if not isinstance(keyword, str):
                raise ValidationError(f"Sorting by {comparator['property']} needs a 'keyword'.", field="sort")
        elif "keyword" in comparator:
            raise ValidationError("Only keyword sorts take a 'keyword'.", field="sort")
        collation = comparator.get("collation")
        if collation is not None and collation not in COLLATIONS:
            raise UnanswerableError(f"Unknown collation {collation!r}.", reason="unsupportedSort")
        ascending = comparator.get("isAscending", True)
        if not isinstance(ascending, bool):
            raise ValidationError("'isAscending' is true or false.", field="sort")
        comparators.append(SortKey(comparator["property"], ascending, keyword))
    return comparators or [SortKey("receivedAt", False)]


class EmailQueryService:
    def __init__(self, db: Database) -> None:
        self.repo = JmapQueryRepository(db)
        self.emails = JmapEmailRepository(db)
        self.changes = JmapChangeRepository(db)
        self.compiler = FilterCompiler(JMAP_VOCABULARY)
        self.unified_compiler = FilterCompiler(UNIFIED_VOCABULARY)
        self.results = ResultCache()

    async def snippets(self, scope: MailScope, ids: Sequence[int], subject_terms: str, body_terms: str
                       ) -> dict[int, tuple[str | None, str | None]]:
        """(subject, preview) with the matches between MARK_START and MARK_END; None where nothing is looked for."""
        return await self.repo.snippets(scope.account_ids, ids, subject_terms, body_terms)

    def plan(self, scope: MailScope, tree: Any, sort: Any, *, collapse: bool, categories: bool) -> QueryPlan:
        if tree is not None and not isinstance(tree, Mapping):
            raise ValidationError("'filter' must be an object.", field="filter")
        used = _conditions(tree)
        if "threadCategory" in used and not categories:
            raise UnanswerableError("'threadCategory' needs the categories capability in 'using'.",
                                    reason="unsupportedFilter")
        params = Params()
        # $1 in every statement built from the plan: the account, or the unified account's accounts
        params.add(list(scope.account_ids) if scope.unified else scope.account_id)
        where = (self.unified_compiler if scope.unified else self.compiler).compile(tree, params)
        keys = sort_comparators(sort)
        try:
            sorting = tuple((sort_expression(k.property, k.keyword, params), k.ascending) for k in keys)
        except FilterError as exc:
            raise ValidationError(str(exc), field="sort") from None
        query = EmailQuery(where, tuple(params.values), order_by(sorting), sorting, unified=scope.unified)
        thread_sorted = any(k.property in THREAD_SORTS for k in keys)
        mailbox_only = isinstance(tree, Mapping) and set(tree) == {"inMailbox"}
        return QueryPlan(query, collapse, collapse or thread_sorted or bool(used & _THREAD_CONDITIONS),
                         mailbox_only)

    async def _total(self, plan: QueryPlan) -> int:
        """A mailbox's total is Mailbox/get's own count (RFC 8621 §2: totalEmails, totalThreads), kept by the
        triggers in the same transaction as every write: counting the mailbox's mail again grew with its size."""
        if plan.mailbox_only:
            return await self.repo.mailbox_total(plan.query, collapse=plan.collapse)
        return await self.repo.total(plan.query, collapse=plan.collapse)

    async def _scan(self, plan: QueryPlan, scan: ScanState, *, stop: int | None = None,
                    anchor: int | None = None, total: bool = False) -> None:
        """Read on until `stop` results, the anchor, or the end; collapsing keeps each thread's first email. With
        `total` (a mailbox's), the first read brings the total along."""
        while not scan.done:
            if (stop is not None and len(scan.ids) >= stop) or (anchor is not None and anchor in scan.index):
                return
            wanted = _CHUNK if stop is None else max(_CHUNK, 2 * (stop - len(scan.ids)))
            size = min(wanted, 2048)
            if total and scan.total is None:
                rows, scan.total = await self.repo.page_and_mailbox_total(plan.query, size, scan.offset,
                                                                          collapse=plan.collapse)
            else:
                rows = await self.repo.page(plan.query, size, scan.offset)
            scan.offset += len(rows)
            for email_id, thread in rows:
                scan.add(email_id, thread, plan.collapse)
            scan.done = len(rows) < size

    async def run(self, plan: QueryPlan, states: tuple[int, ...], *, position: int, anchor: int | None,
                  anchor_offset: int, limit: int, want_total: bool) -> QueryPage:
        """`states` are the states read before the query: results are remembered under them."""
        q = plan.query
        params = tuple(tuple(v) if isinstance(v, list) else v for v in q.params)  # lists of ids are not hashable
        scan = self.results.entry((q.where, params, q.order, plan.collapse, states))
        async with scan.lock:
            # A mailbox's total rides on the page read that follows, where one does (one round trip less).
            rides = (want_total and scan.total is None and plan.mailbox_only and anchor is None and position >= 0
                     and limit > 0 and (plan.collapse or bool(scan.ids)) and not scan.done
                     and len(scan.ids) < position + limit)
            if (want_total or position < 0) and scan.total is None and not rides:
                scan.total = await self._total(plan)
            if anchor is not None:
                await self._scan(plan, scan, anchor=anchor)
                if anchor not in scan.index:
                    raise UnanswerableError("The anchor is not in the results.", reason="anchorNotFound")
                position = max(scan.index[anchor] + anchor_offset, 0)
            elif position < 0:
                assert scan.total is not None
                position = max(scan.total + position, 0)
            total = scan.total if want_total else None
            if limit == 0:
                return QueryPage(position, [], total)
            if plan.collapse or scan.ids:
                await self._scan(plan, scan, stop=position + limit, total=rides)
                if want_total and scan.total is None:  # no row came back to carry it
                    scan.total = await self._total(plan)
                return QueryPage(position, scan.ids[position:position + limit], scan.total if want_total else None)
        # Without collapsing a page is one indexed read; nothing is worth remembering.
        return QueryPage(position, [email_id for email_id, _ in await self.repo.page(q, limit, position)], total)

    async def delta(self, scope: MailScope, plan: QueryPlan, since: int, current: int, max_changes: int | None,
                    want_total: bool) -> QueryDelta:
        """Every email changed since the old state is removed and, where it is in the results now, added
        at its new index; unchanged emails keep their order, because every change is in the log."""
        email = JmapObjectType.EMAIL.value
        changed = {int(i) for i in await self.changes.changed_ids(scope.log_accounts(email), email, since, current,
                                                                  MAX_QUERY_CHANGES) if i.isdigit()}
        if plan.thread_dependent:
            thread = JmapObjectType.THREAD.value
            threads = {int(i) for i in await self.changes.changed_ids(
                scope.log_accounts(thread), thread, since, current, MAX_QUERY_CHANGES) if i.isdigit()}
            threads |= set(await self.emails.threads_of_emails(scope.account_ids, sorted(changed)))
            changed |= set(await self.emails.emails_of_threads(scope.account_ids, sorted(threads)))
        if len(changed) > MAX_QUERY_CHANGES:
            raise UnanswerableError("Too much has changed; run the query again.", reason="cannotCalculateChanges")
        positions = await self.repo.positions(plan.query, sorted(changed), collapse=plan.collapse)
        added = sorted(positions.items(), key=lambda item: item[1])
        if max_changes is not None and len(changed) + len(added) > max_changes:
            raise UnanswerableError(f"More than {max_changes} changes.", reason="tooManyChanges")
        total = await self._total(plan) if want_total else None
        return QueryDelta(sorted(changed), added, total)
