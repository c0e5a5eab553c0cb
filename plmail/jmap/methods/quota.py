"""Quota/get, /changes, /query and /queryChanges (RFC 9425): the database space the account's mail takes, as one
"account"-scoped octets quota for Mail, against the room the disk holding plmail's data has left; and the room
the user's pending uploads (RFC 8620 6.1, the last 24 hours') may take."""

from __future__ import annotations

from typing import Any

from plmail.domain.enums import JmapObjectType
from plmail.jmap.capabilities import QUOTA
from plmail.jmap.common import CHANGES_ARGUMENTS, GET_ARGUMENTS, get_ids, max_changes, page_of, properties
from plmail.jmap.errors import MethodError, invalid_arguments
from plmail.jmap.registry import Call, MethodTable
from plmail.mail.downloads import MAX_PENDING_UPLOADS
from plmail.mail.states import parse_state

table = MethodTable()
QUOTA_ID = "mail"
UPLOADS_ID = "uploads"
PROPERTIES = ("id", "resourceType", "used", "hardLimit", "scope", "name", "types", "warnLimit", "softLimit",
              "description")


async def _state(call: Call, args: Any) -> tuple[Any, str]:
    """What was used moves with the account's mail: the Quota state is its Email state."""
    scope = call.scope(args)
    return scope, await call.ctx.states.state(scope, JmapObjectType.EMAIL)


@table.method("Quota/get", QUOTA)
async def get(call: Call) -> dict[str, Any]:
    args = call.args(*GET_ARGUMENTS)
    scope, state = await _state(call, args)
    props = properties(args, PROPERTIES, PROPERTIES)
    ids = get_ids(args)
    wanted = [QUOTA_ID, UPLOADS_ID] if ids is None else ids
    listed = []
    if QUOTA_ID in wanted:
        quota = await call.ctx.services.quota.mail(scope)
        values = {"id": QUOTA_ID, "resourceType": "octets", "used": quota.used, "hardLimit": quota.hard_limit,
                  "scope": "account", "name": "Mail storage", "types": ["Mail"], "warnLimit": None,
                  "softLimit": None,
                  "description": "The database space this account's mail takes, of the room the disk has."}
        listed.append({p: values[p] for p in props})
    if UPLOADS_ID in wanted:
        values = {"id": UPLOADS_ID, "resourceType": "octets",
                  "used": await call.ctx.services.downloads.pending_uploads(call.ctx.principal.user_id),
                  "hardLimit": MAX_PENDING_UPLOADS, "scope": "account", "name": "Pending uploads", "types": ["Mail"],
                  "warnLimit": None, "softLimit": None,
                  "description": "Files uploaded in the last 24 hours that no email holds yet; they expire then."}
        listed.append({p: values[p] for p in props})
    return {"accountId": call.jmap_id(scope), "state": state, "list": listed,
            "notFound": [i for i in wanted if i not in (QUOTA_ID, UPLOADS_ID)]}


@table.method("Quota/changes", QUOTA)
async def changes(call: Call) -> dict[str, Any]:
    args = call.args(*CHANGES_ARGUMENTS)
    scope, state = await _state(call, args)
    since = args.string("sinceState", required=True)
    max_changes(args)
    if parse_state(since) > int(state):
        raise MethodError("cannotCalculateChanges", "This state is newer than the server's.")
    return {"accountId": call.jmap_id(scope), "oldState": since, "newState": state, "hasMoreChanges": False,
            "created": [], "updated": [QUOTA_ID] if since != state else [], "destroyed": [],
            "updatedProperties": ["used"] if since != state else None}


@table.method("Quota/query", QUOTA)
async def query(call: Call) -> dict[str, Any]:
    args = call.args("accountId", "filter", "sort", "position", "anchor", "anchorOffset", "limit", "calculateTotal")
    scope, state = await _state(call, args)
    condition = args.mapping("filter") or {}
    unknown = set(condition) - {"name", "scope", "resourceType", "type"}
    if unknown:
        raise MethodError("unsupportedFilter", f"Quotas cannot be filtered by {', '.join(sorted(unknown))}.")
    matches = (condition.get("scope") in (None, "account") and condition.get("resourceType") in (None, "octets")
               and condition.get("type") in (None, "Mail")
               and (condition.get("name") is None or str(condition["name"]).lower() in "mail storage"))
    if args.raw("sort") not in (None, []):
        sort = args.raw("sort")
        if not isinstance(sort, list) or any(not isinstance(c, dict) or c.get("property") not in ("name", "used")
                                             for c in sort):
            raise MethodError("unsupportedSort", "Quotas sort by name or used.")
    page = page_of([QUOTA_ID] if matches else [], args)
    response: dict[str, Any] = {"accountId": call.jmap_id(scope), "queryState": state, "canCalculateChanges": False,
                                "position": page.position, "ids": page.ids}
    if args.boolean("calculateTotal"):
        response["total"] = page.total
    return response


@table.method("Quota/queryChanges", QUOTA)
async def query_changes(call: Call) -> dict[str, Any]:
    args = call.args("accountId", "filter", "sort", "sinceQueryState", "maxChanges", "upToId", "calculateTotal")
    call.scope(args)
    if args.raw("sinceQueryState") is None:
        raise invalid_arguments("'sinceQueryState' is required.")
    raise MethodError("cannotCalculateChanges", "There is one quota; query again.")
