"""SearchSnippet/get (RFC 8621 §5)."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from plmail.jmap.capabilities import CATEGORIES, LIMITS, MAIL
from plmail.jmap.common import split_ids
from plmail.jmap.errors import MethodError
from plmail.jmap.registry import Call, MethodTable
from plmail.mail.email_query import MARK_END, MARK_START

table = MethodTable()


def _terms(node: Any, subject: list[str], body: list[str], negated: bool = False) -> None:
    """Words to highlight: text, subject and body conditions the email matched (not the NOT-ed ones)."""
    if not isinstance(node, Mapping):
        return
    if "operator" in node:
        for child in node.get("conditions") or []:
            _terms(child, subject, body, negated or node.get("operator") == "NOT")
        return
    if negated:
        return
    for name, value in node.items():
        if isinstance(value, str) and value.strip():
            if name in ("text", "subject"):
                subject.append(value.strip())
            if name in ("text", "body"):
                body.append(value.strip())


def highlighted(value: str | None) -> str | None:
    """HTML-escaped text with the matches in <mark>; None when nothing in it matched."""
    if value is None or MARK_START not in value:
        return None
    return html.escape(" ".join(value.split())).replace(MARK_START, "<mark>").replace(MARK_END, "</mark>")


@table.method("SearchSnippet/get", MAIL)
async def snippets(call: Call) -> dict[str, Any]:
    args = call.args("accountId", "filter", "emailIds")
    scope = call.scope(args)
    email_ids = args.strings("emailIds", required=True) or []
    if len(email_ids) > LIMITS.max_objects_in_get:
        raise MethodError("requestTooLarge", f"At most {LIMITS.max_objects_in_get} emails per call.")
    tree = args.raw("filter")
    services = call.ctx.services
    # The filter must be one Email/query accepts: compiling it refuses what the query would refuse.
    services.email_query.plan(scope, tree, None, collapse=False, categories=call.uses(CATEGORIES))
    subject_terms: list[str] = []
    body_terms: list[str] = []
    _terms(tree, subject_terms, body_terms)
    numeric, _ = split_ids(email_ids)
    found = await services.email_query.snippets(scope, numeric, " or ".join(subject_terms),
                                                 " or ".join(body_terms))
    by_id = {str(k): v for k, v in found.items()}
    return {"accountId": call.jmap_id(scope),
            "list": [{"emailId": i, "subject": highlighted(by_id[i][0]), "preview": highlighted(by_id[i][1])}
                     for i in email_ids if i in by_id],
            "notFound": [i for i in email_ids if i not in by_id] or None}
