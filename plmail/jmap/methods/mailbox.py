"""Mailbox/get, /query, /queryChanges, /changes and /set (RFC 8621 §2)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plmail.domain.enums import JmapObjectType
from plmail.domain.errors import PlmailError
from plmail.domain.ids import parse_id
from plmail.domain.mailstore import MailboxRow, MailScope
from plmail.jmap.args import Args
from plmail.jmap.capabilities import MAIL
from plmail.jmap.common import (
    CHANGES_ARGUMENTS,
    GET_ARGUMENTS,
    SET_ARGUMENTS,
    changes_response,
    check_state,
    ensure_bound,
    get_ids,
    page_of,
    properties,
    set_request,
    set_response,
)
from plmail.jmap.errors import MethodError, SetError, invalid_arguments, invalid_properties, refusal
from plmail.jmap.mappers import COUNT_PROPERTIES, MAILBOX_PROPERTIES, mailbox_json, mailbox_rights, mailbox_role
from plmail.jmap.registry import Call, MethodTable
from plmail.mail.mailboxes import USER_LABEL_SORT_ORDER, MailboxView

table = MethodTable()
MAILBOX = JmapObjectType.MAILBOX
_WRITABLE = {"name", "parentId", "isSubscribed", "sortOrder"}
_SERVER_SET = {"id", "totalEmails", "unreadEmails", "totalThreads", "unreadThreads", "myRights"}
MAX_SORT_ORDER = 2**32 - 1  # sortOrder is an UnsignedInt (RFC 8621 §2)


@table.method("Mailbox/get", MAIL)
async def get(call: Call) -> dict[str, Any]:
    args = call.args(*GET_ARGUMENTS)
    scope = call.scope(args)
    ids = get_ids(args)
    props = properties(args, MAILBOX_PROPERTIES, MAILBOX_PROPERTIES)
    await ensure_bound(call, scope)
    counted = bool(COUNT_PROPERTIES & set(props)) and ids != []
    # Both states in one read when the counts need the Email state too.
    mailbox, *email = await call.ctx.states.sequences(scope, (MAILBOX, JmapObjectType.EMAIL) if counted else (MAILBOX,))
    state = str(mailbox)
    counts_at = (email[0], mailbox) if counted else None
    views = await call.ctx.services.mailboxes.views(call.ctx.principal.user_id, scope, counts_at=counts_at,
                                                only=set(ids) if ids is not None else None)
    by_id = {str(v.row.binding_id): v for v in views}
    wanted = ids if ids is not None else list(by_id)
    return {"accountId": call.jmap_id(scope), "state": state,
            "list": [mailbox_json(by_id[i], props) for i in wanted if i in by_id],
            "notFound": [i for i in wanted if i not in by_id]}


@table.method("Mailbox/changes", MAIL)
async def changes(call: Call) -> dict[str, Any]:
    await ensure_bound(call, call.scope(call.args(*CHANGES_ARGUMENTS)))
    # Any property may have moved, counts included: null tells the client to fetch them all.
    return await changes_response(call, MAILBOX, updatedProperties=None)


def _matches(view: MailboxView, condition: dict[str, Any]) -> bool:
    row = view.row
    checks: dict[str, Callable[[Any], bool]] = {
        "parentId": lambda v: (str(row.parent_binding_id) if row.parent_binding_id else None) == v,
        "name": lambda v: isinstance(v, str) and v.lower() in row.name.lower(),
        "role": lambda v: mailbox_role(row.role) == v,
        "hasAnyRole": lambda v: (row.role is not None) == v,
        "isSubscribed": lambda v: row.is_visible == v,
    }
    unknown = set(condition) - set(checks)
    if unknown:
        raise MethodError("unsupportedFilter", f"Mailboxes cannot be filtered by {', '.join(sorted(unknown))}.")
    return all(checks[name](value) for name, value in condition.items())


def _filter(view: MailboxView, node: Any) -> bool:
    if not isinstance(node, dict):
        raise invalid_arguments("A filter must be an object.")
    if "operator" in node:
        operator, conditions = node.get("operator"), node.get("conditions")
        if operator not in ("AND", "OR", "NOT") or not isinstance(conditions, list):
            raise invalid_arguments("An operator needs AND, OR or NOT and a list of conditions.")
        results = [_filter(view, c) for c in conditions]
        return all(results) if operator == "AND" else any(results) if operator == "OR" else not any(results)
    return _matches(view, node)


def _sort_key(args: Args) -> Callable[[MailboxView], tuple[Any, ...]]:
    comparators = args.raw("sort") or []
    if not isinstance(comparators, list):
        raise invalid_arguments("'sort' must be a list of comparators.")
    keys: list[tuple[str, bool]] = []
    for comparator in comparators:
        if not isinstance(comparator, dict) or comparator.get("property") not in ("sortOrder", "name"):
            raise MethodError("unsupportedSort", "Mailboxes sort by sortOrder or name.")
        keys.append((comparator["property"], comparator.get("isAscending", True) is not False))

    def key(view: MailboxView) -> tuple[Any, ...]:
        parts: list[Any] = []
        for name, ascending in keys:
            value: Any = (view.row.sort_order if view.row.sort_order is not None else USER_LABEL_SORT_ORDER) \
                if name == "sortOrder" else view.row.name.lower()
            parts.append(_Reversed(value) if not ascending else value)
        return (*parts, view.row.binding_id)
    return key


class _Reversed:
    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __lt__(self, other: _Reversed) -> bool:
        return bool(other.value < self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Reversed) and bool(other.value == self.value)

    def __hash__(self) -> int:
        return hash(self.value)


@table.method("Mailbox/query", MAIL)
async def query(call: Call) -> dict[str, Any]:
    args = call.args("accountId", "filter", "sort", "position", "anchor", "anchorOffset", "limit",
                     "calculateTotal", "sortAsTree", "filterAsTree")
    scope = call.scope(args)
    await ensure_bound(call, scope)
    state = await call.ctx.states.state(scope, MAILBOX)
    views = await call.ctx.services.mailboxes.views(call.ctx.principal.user_id, scope)
    key = _sort_key(args)
    node = args.raw("filter")
    matching = {v.row.binding_id for v in views if node is None or _filter(v, node)}
    if args.boolean("filterAsTree"):
        parents = {v.row.binding_id: v.row.parent_binding_id for v in views}

        def ancestors_match(binding: int) -> bool:
            parent = parents.get(binding)
            return parent is None or (parent in matching and ancestors_match(parent))
        matching = {b for b in matching if ancestors_match(b)}
    if args.boolean("sortAsTree"):
        children: dict[int | None, list[MailboxView]] = {}
        for view in views:
            children.setdefault(view.row.parent_binding_id, []).append(view)
        ordered: list[MailboxView] = []

        def walk(parent: int | None) -> None:
            for child in sorted(children.get(parent, []), key=key):
                ordered.append(child)
                walk(child.row.binding_id)
        walk(None)
    else:
        ordered = sorted(views, key=key)
    page = page_of([str(v.row.binding_id) for v in ordered if v.row.binding_id in matching], args)
    response: dict[str, Any] = {"accountId": call.jmap_id(scope), "queryState": state, "canCalculateChanges": False,
                                "position": page.position, "ids": page.ids}
    if args.boolean("calculateTotal"):
        response["total"] = page.total
    if page.limit is not None:
        response["limit"] = page.limit
    return response


@table.method("Mailbox/queryChanges", MAIL)
async def query_changes(call: Call) -> dict[str, Any]:
    call.scope(call.args("accountId", "filter", "sort", "sinceQueryState", "maxChanges", "upToId",
                           "calculateTotal", "sortAsTree", "filterAsTree"))
    raise MethodError("cannotCalculateChanges", "Mailbox queries are cheap to run again; query afresh.")


@table.method("Mailbox/set", MAIL)
async def set_(call: Call) -> dict[str, Any]:
    args = call.args(*SET_ARGUMENTS, "onDestroyRemoveEmails")
    scope = call.scope(args)
    request = set_request(args)
    await ensure_bound(call, scope)
    old_state = await check_state(call, args, scope, MAILBOX)
    service, user_id = call.ctx.services.mailboxes, call.ctx.principal.user_id
    created: dict[str, Any] = {}
    not_created: dict[str, Any] = {}
    for creation_id, values in _parents_first(request.create):
        try:
            refused = (set(values) - _WRITABLE - {"role"}) | (_SERVER_SET & set(values))
            if refused:
                raise invalid_properties("These properties cannot be set.", *sorted(refused))
            if values.get("role") is not None:
                raise invalid_properties("Roles belong to the system mailboxes.", "role")
            name = values.get("name")
            if not isinstance(name, str):
                raise invalid_properties("A mailbox needs a name.", "name")
            # RFC 8621 §2: "sortOrder: UnsignedInt (default: 0)"
            sort_order = _sort_order(values.get("sortOrder")) or 0
            parent = await _parent(call, scope, values.get("parentId"))
            binding_id = await service.create(user_id, scope, name, parent,
                                              visible=values.get("isSubscribed", True) is not False,
                                              sort_order=sort_order)
            call.ctx.created_ids[creation_id] = str(binding_id)
            created[creation_id] = {"id": str(binding_id), "role": None,
                                    "totalEmails": 0, "unreadEmails": 0, "totalThreads": 0, "unreadThreads": 0,
                                    "myRights": mailbox_rights(system=False)} | (
                {} if "sortOrder" in values else {"sortOrder": 0})
        except (SetError, PlmailError) as exc:
            not_created[creation_id] = refusal(exc)
    updated: dict[str, Any] = {}
    not_updated: dict[str, Any] = {}
    for raw_id, patch in request.update.items():
        try:
            await _update(call, scope, raw_id, patch)
            updated[raw_id] = None
        except (SetError, PlmailError) as exc:
            not_updated[raw_id] = refusal(exc)
    destroyed: list[str] = []
    not_destroyed: dict[str, Any] = {}
    for raw_id in request.destroy:
        try:
            mailbox = await _mailbox(call, scope, raw_id)
            await service.destroy(user_id, mailbox, remove_emails=args.boolean("onDestroyRemoveEmails"),
                                  destroyer=call.ctx.services.destroyer)
            destroyed.append(raw_id)
        except (SetError, PlmailError) as exc:
            not_destroyed[raw_id] = refusal(exc)
    call.ctx.states.invalidate()
    new_state = await call.ctx.states.state(scope, MAILBOX)
    return set_response(call.jmap_id(scope), old_state, new_state, created=created, updated=updated,
                        destroyed=destroyed,
                        not_created=not_created, not_updated=not_updated, not_destroyed=not_destroyed)


def _parents_first(create: dict[str, dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """The creations ordered so a `parentId` of "#x" naming another creation of this call comes after it (RFC 8620
    §5.3: the server must resolve creation-id references within one call whatever their order in the map); a
    cycle is left in the client's order and fails as an unknown parent."""
    ordered: list[tuple[str, dict[str, Any]]] = []
    placed: set[str] = set()
    visiting: set[str] = set()

    def place(creation_id: str) -> None:
        if creation_id in placed or creation_id in visiting:
            return
        visiting.add(creation_id)
        parent = create[creation_id].get("parentId")
        if isinstance(parent, str) and parent.startswith("#") and parent[1:] in create:
            place(parent[1:])
        visiting.discard(creation_id)
        placed.add(creation_id)
        ordered.append((creation_id, create[creation_id]))

    for creation_id in create:
        place(creation_id)
    return ordered


async def _mailbox(call: Call, scope: MailScope, raw_id: str) -> MailboxRow:
    resolved = call.ctx.creation_id(raw_id)
    binding_id = parse_id(resolved)
    found = await call.ctx.services.mailboxes.by_binding(call.ctx.principal.user_id, scope, binding_id) \
        if binding_id else None
    if found is None:
        raise SetError("notFound", f"No mailbox {raw_id!r} in this account.")
    return found


async def _parent(call: Call, scope: MailScope, value: Any) -> MailboxRow | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise invalid_properties("'parentId' is a mailbox id or null.", "parentId")
    try:
        return await _mailbox(call, scope, value)
    except SetError:
        raise invalid_properties("No such parent mailbox.", "parentId") from None


def _sort_order(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SORT_ORDER:
        raise invalid_properties("'sortOrder' is an unsigned integer.", "sortOrder")
    return value


async def _update(call: Call, scope: MailScope, raw_id: str, patch: dict[str, Any]) -> None:
    mailbox = await _mailbox(call, scope, raw_id)
    # A client may send back what it read (RFC 8620 §5.3 lets a server accept unchanged server-set values).
    fixed = [p for p in patch if p not in _WRITABLE]
    current: dict[str, Any] = {}
    if fixed:
        counts_at = (await call.ctx.states.sequence(scope, JmapObjectType.EMAIL),
                     await call.ctx.states.sequence(scope, MAILBOX))
        views = await call.ctx.services.mailboxes.views(call.ctx.principal.user_id, scope, counts_at=counts_at,
                                                        only={str(mailbox.binding_id)})
        view = next((v for v in views if v.row.binding_id == mailbox.binding_id), MailboxView(mailbox, None))
        current = mailbox_json(view, MAILBOX_PROPERTIES)
    refused = [p for p in fixed if not (p in current and current[p] == patch[p])]
    if refused:
        raise invalid_properties("These properties cannot be changed.", *refused)
    name = patch.get("name", mailbox.name)
    if not isinstance(name, str):
        raise invalid_properties("A mailbox needs a name.", "name")
    visible = patch.get("isSubscribed")
    if visible is not None and not isinstance(visible, bool):
        raise invalid_properties("'isSubscribed' is true or false.", "isSubscribed")
    parent = await _parent(call, scope, patch.get("parentId")) if "parentId" in patch else None
    move = "parentId" in patch and (parent.label_id if parent else None) != mailbox.parent_label_id
    await call.ctx.services.mailboxes.update(call.ctx.principal.user_id, mailbox,
                                             name=name if name != mailbox.name else None, move=move, parent=parent,
                                             visible=visible, sort_order=_sort_order(patch.get("sortOrder")))
