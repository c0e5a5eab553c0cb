"""Email/query (RFC 8621 §4.4) and Email/queryChanges (§4.5)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plmail.domain.enums import JmapObjectType
from plmail.domain.mailstore import MailScope
from plmail.jmap.capabilities import CATEGORIES, LIMITS, MAIL
from plmail.jmap.errors import MethodError
from plmail.jmap.registry import Call, MethodTable
from plmail.mail.states import parse_state

table = MethodTable()
EMAIL, THREAD = JmapObjectType.EMAIL, JmapObjectType.THREAD


def parse_anchor(value: str | None) -> int | None:
    if value is None:
        return None
    if not value.isdigit():
        raise MethodError("anchorNotFound", "The anchor is not in the results.")
    return int(value)


def id_strings(ids: Sequence[int]) -> list[str]:
    return [str(i) for i in ids]


async def _states(call: Call, scope: MailScope, thread_dependent: bool) -> tuple[int, ...]:
    """The states a query's results depend on. Sequences are one counter for all types, so the larger of
    them is a query state that moves with either, and /changes from it misses neither."""
    return await call.ctx.states.sequences(scope, (EMAIL, THREAD) if thread_dependent else (EMAIL,))


@table.method("Email/query", MAIL)
async def query(call: Call) -> dict[str, Any]:
    args = call.args("accountId", "filter", "sort", "position", "anchor", "anchorOffset", "limit", "calculateTotal",
                     "collapseThreads")
    scope = call.scope(args)
    service = call.ctx.services.email_query
    plan = service.plan(scope, args.raw("filter"), args.raw("sort"), collapse=args.boolean("collapseThreads"),
                        categories=call.uses(CATEGORIES))
    requested = args.integer("limit", minimum=0)
    limit = LIMITS.max_query_limit if requested is None else min(requested, LIMITS.max_query_limit)
    states = await _states(call, scope, plan.thread_dependent)
    page = await service.run(plan, states, position=args.integer("position", 0) or 0,
                             anchor=parse_anchor(args.string("anchor")),
                             anchor_offset=args.integer("anchorOffset", 0) or 0, limit=limit,
                             want_total=args.boolean("calculateTotal"))
    response: dict[str, Any] = {"accountId": call.jmap_id(scope), "queryState": str(max(states)),
                                "canCalculateChanges": True,
                                "position": page.position, "ids": id_strings(page.ids)}
    if page.total is not None and args.boolean("calculateTotal"):
        response["total"] = page.total
    if requested is None or requested > limit:
        response["limit"] = limit
    return response


@table.method("Email/queryChanges", MAIL)
async def query_changes(call: Call) -> dict[str, Any]:
    args = call.args("accountId", "filter", "sort", "sinceQueryState", "maxChanges", "upToId", "calculateTotal",
                     "collapseThreads")
    scope = call.scope(args)
    since_value = args.string("sinceQueryState", required=True)
    service = call.ctx.services.email_query
    plan = service.plan(scope, args.raw("filter"), args.raw("sort"), collapse=args.boolean("collapseThreads"),
                        categories=call.uses(CATEGORIES))
    max_changes = args.integer("maxChanges", minimum=1)
    since = parse_state(since_value)
    current = max(await _states(call, scope, plan.thread_dependent))
    kinds = (EMAIL, THREAD) if plan.thread_dependent else (EMAIL,)
    horizon = max([await call.ctx.states.horizon(scope, kind) for kind in kinds])
    if since > current or since < horizon:
        raise MethodError("cannotCalculateChanges", "This query state cannot be brought up to date; query again.")
    # upToId is an optimisation a server may skip: every change is reported whatever its position.
    delta = await service.delta(scope, plan, since, current, max_changes, args.boolean("calculateTotal"))
    response: dict[str, Any] = {"accountId": call.jmap_id(scope), "oldQueryState": since_value,
                                "newQueryState": str(current), "removed": id_strings(delta.removed),
                                "added": [{"id": str(i), "index": index} for i, index in delta.added]}
    if delta.total is not None:
        response["total"] = delta.total
    return response
