"""Thread/get and Thread/changes (RFC 8621 §3).

A thread the ingest made is announced as created, one that grew as updated, and one a late reply merged
into another as destroyed (RFC 8620 §5.2).
"""

from __future__ import annotations

from typing import Any

from plmail.domain.enums import JmapObjectType
from plmail.jmap.capabilities import CATEGORIES, LIMITS, MAIL
from plmail.jmap.common import GET_ARGUMENTS, changes_response, get_ids, properties, split_ids
from plmail.jmap.errors import MethodError
from plmail.jmap.registry import Call, MethodTable

table = MethodTable()
THREAD = JmapObjectType.THREAD


@table.method("Thread/get", MAIL)
async def get(call: Call) -> dict[str, Any]:
    args = call.args(*GET_ARGUMENTS)
    scope = call.scope(args)
    categories = call.uses(CATEGORIES)
    known = ("id", "emailIds", *(("category",) if categories else ()))
    props = properties(args, known, known)
    ids = get_ids(args)
    repo = call.ctx.services.emails
    state = await call.ctx.states.state(scope, THREAD)
    if ids is None:
        thread_ids = await repo.thread_ids(scope, LIMITS.max_objects_in_get + 1)
        if len(thread_ids) > LIMITS.max_objects_in_get:
            raise MethodError("requestTooLarge", "Too many threads to return them all; ask for ids.")
        ids = [str(t) for t in thread_ids]
    numeric, _ = split_ids(ids)
    threads = await repo.thread_emails(scope, numeric)
    found = {str(t): v for t, v in threads.items()}
    listed = []
    for thread_id in ids:
        if thread_id in found:
            email_ids, category = found[thread_id]
            values = {"id": thread_id, "emailIds": [str(e) for e in email_ids], "category": category}
            listed.append({p: values[p] for p in props})
    return {"accountId": call.jmap_id(scope), "state": state, "list": listed,
            "notFound": [i for i in ids if i not in found]}


@table.method("Thread/changes", MAIL)
async def changes(call: Call) -> dict[str, Any]:
    return await changes_response(call, THREAD)
