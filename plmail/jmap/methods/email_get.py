"""Email/get (RFC 8621 §4.2)."""

from __future__ import annotations

from typing import Any

from plmail.domain.enums import JmapObjectType
from plmail.jmap.args import Args
from plmail.jmap.capabilities import CATEGORIES, LIMITS, MAIL
from plmail.jmap.common import GET_ARGUMENTS, ensure_bound, get_ids, properties, split_ids
from plmail.jmap.email_mapper import (
    BODY_PROPERTIES,
    DEFAULT_BODY_PROPERTIES,
    DEFAULT_EMAIL_PROPERTIES,
    EMAIL_PROPERTIES,
    VENDOR_PROPERTIES,
    EmailSpec,
    email_json,
)
from plmail.jmap.errors import MethodError, invalid_arguments
from plmail.jmap.headers import parse_header_property
from plmail.jmap.registry import Call, MethodTable
from plmail.mail.email_reader import ReadSpec

table = MethodTable()


def email_spec(call: Call, args: Args) -> EmailSpec:
    categories = call.uses(CATEGORIES)
    known = EMAIL_PROPERTIES + (VENDOR_PROPERTIES if categories else ())
    default = DEFAULT_EMAIL_PROPERTIES + (VENDOR_PROPERTIES if categories else ())
    props = properties(args, known, default, extra_ok=("header:",))
    body_props = args.strings("bodyProperties")
    if body_props is None:
        body_props = list(DEFAULT_BODY_PROPERTIES)
    unknown = [p for p in body_props if p not in BODY_PROPERTIES and not p.startswith("header:")]
    if unknown:
        raise invalid_arguments(f"Unknown body properties: {', '.join(unknown)}.")
    header_requests = tuple(parse_header_property(p) for p in props if p.startswith("header:"))
    read = ReadSpec(
        properties=tuple(p for p in props if not p.startswith("header:")),
        # The top part's header fields are the message's: read them for bodyProperties that show headers.
        header_lines=bool(header_requests) or any(p == "headers" or p.startswith("header:") for p in body_props),
        fetch_text=args.boolean("fetchTextBodyValues"),
        fetch_html=args.boolean("fetchHTMLBodyValues"),
        fetch_all=args.boolean("fetchAllBodyValues"),
        max_body_bytes=args.integer("maxBodyValueBytes", 0, minimum=0) or 0,
    )
    return EmailSpec(
        read=read,
        header_requests=header_requests,
        body_properties=tuple(p for p in body_props if not p.startswith("header:")),
        body_header_requests=tuple(parse_header_property(p) for p in body_props if p.startswith("header:")),
    )


@table.method("Email/get", MAIL)
async def get(call: Call) -> dict[str, Any]:
    args = call.args(*GET_ARGUMENTS, "bodyProperties", "fetchTextBodyValues", "fetchHTMLBodyValues",
                     "fetchAllBodyValues", "maxBodyValueBytes")
    scope = call.scope(args)
    ids = get_ids(args)
    spec = email_spec(call, args)
    services = call.ctx.services
    state = await call.ctx.states.state(scope, JmapObjectType.EMAIL)  # new bindings would not move it
    if ids is None:
        if await services.emails.count(scope) > LIMITS.max_objects_in_get:
            raise MethodError("requestTooLarge", "Too many emails to return them all; ask for ids.")
        ids = [str(i) for i in await services.emails.all_ids(scope, LIMITS.max_objects_in_get)]
    numeric, _ = split_ids(ids)
    if "mailboxIds" in spec.properties and scope not in call.ctx.bound_scopes:
        # Whether a label created since lacks its Mailbox is asked with the rows: one statement, not two.
        records, unbound = await services.emails.get_checking_bindings(call.ctx.principal.user_id, scope, numeric,
                                                                      spec.read)
        if unbound:
            await ensure_bound(call, scope)
            records = await services.emails.get(scope, numeric, spec.read)
        elif records:
            call.ctx.bound_scopes.add(scope)
    else:
        records = await services.emails.get(scope, numeric, spec.read)
    found = {str(n): records[n] for n in numeric if n in records}
    return {"accountId": call.jmap_id(scope), "state": state,
            "list": [email_json(found[i], spec) for i in ids if i in found],
            "notFound": [i for i in ids if i not in found]}
