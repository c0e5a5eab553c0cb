"""Argument handling shared by the standard methods: /get ids and properties, /changes, /set shape."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from plmail.domain.enums import JmapObjectType
from plmail.domain.errors import PlmailError
from plmail.domain.ids import parse_id
from plmail.domain.mailstore import MailScope
from plmail.jmap.args import Args
from plmail.jmap.capabilities import LIMITS
from plmail.jmap.errors import MethodError, SetError, invalid_arguments, invalid_properties, refusal
from plmail.jmap.registry import Call

K = TypeVar("K")
V = TypeVar("V")

GET_ARGUMENTS = ("accountId", "ids", "properties")
CHANGES_ARGUMENTS = ("accountId", "sinceState", "maxChanges")
SET_ARGUMENTS = ("accountId", "ifInState", "create", "update", "destroy")


def get_ids(args: Args, *, required: bool = False) -> list[str] | None:
    ids = args.strings("ids", required=required)
    if ids is not None and len(ids) > LIMITS.max_objects_in_get:
        raise MethodError("requestTooLarge", f"At most {LIMITS.max_objects_in_get} ids per call.")
    return ids


def split_ids(ids: Sequence[str]) -> tuple[list[int], list[str]]:
    """(numeric ids in order, ids that cannot name anything) — the latter go straight to notFound."""
    found: list[int] = []
    bad: list[str] = []
    for value in ids:
        number = parse_id(value)
        if number is None:
            bad.append(value)
        else:
            found.append(number)
    return found, bad


def properties(args: Args, known: Iterable[str], default: Sequence[str], *, extra_ok: tuple[str, ...] = ()
               ) -> list[str]:
    """The requested properties (always with id), or the default set; unknown names are refused."""
    requested = args.strings("properties")
    if requested is None:
        return list(default)
    allowed = set(known)
    unknown = [p for p in requested if p not in allowed and not p.startswith(extra_ok)]
    if unknown:
        raise invalid_arguments(f"Unknown properties: {', '.join(unknown)}.")
    return ["id", *[p for p in requested if p != "id"]]


def max_changes(args: Args) -> int:
    value = args.integer("maxChanges", minimum=1)
    return min(value or LIMITS.max_changes, LIMITS.max_changes)


async def changes_response(call: Call, kind: JmapObjectType, **extra: Any) -> dict[str, Any]:
    args = call.args(*CHANGES_ARGUMENTS)
    scope = call.scope(args)
    since = args.raw("sinceState")
    if since is None:
        raise invalid_arguments("'sinceState' is required.")
    result = await call.ctx.states.changes(scope, kind, since, max_changes(args))
    return {"accountId": call.jmap_id(scope), "oldState": result.old_state, "newState": result.new_state,
            "hasMoreChanges": result.has_more_changes, "created": result.created, "updated": result.updated,
            "destroyed": result.destroyed, **extra}


@dataclass(frozen=True, slots=True)
class SetRequest:
    create: dict[str, dict[str, Any]]
    update: dict[str, dict[str, Any]]
    destroy: list[str]


def set_request(args: Args) -> SetRequest:
    create = args.objects("create") or {}
    update = args.objects("update") or {}
    destroy = args.strings("destroy") or []
    if len(create) + len(update) + len(destroy) > LIMITS.max_objects_in_set:
        raise MethodError("requestTooLarge", f"At most {LIMITS.max_objects_in_set} objects per /set.")
    return SetRequest(create, update, destroy)


async def check_state(call: Call, args: Args, scope: MailScope, kind: JmapObjectType) -> str:
    """The state before the writes; with ifInState, refuse unless the client's view is current."""
    current = await call.ctx.states.state(scope, kind)
    expected = args.string("ifInState")
    if expected is not None and expected != current:
        raise MethodError("stateMismatch", "The state has changed since you last read it.")
    return current


def set_response(account_id: str, old_state: str, new_state: str, *, created: dict[str, Any],
                 updated: dict[str, Any], destroyed: list[str], not_created: dict[str, Any],
                 not_updated: dict[str, Any], not_destroyed: dict[str, Any]) -> dict[str, Any]:
    return {"accountId": account_id, "oldState": old_state, "newState": new_state,
            "created": created or None, "updated": updated or None, "destroyed": destroyed or None,
            "notCreated": not_created or None, "notUpdated": not_updated or None,
            "notDestroyed": not_destroyed or None}


async def ensure_bound(call: Call, scope: MailScope) -> None:
    """Labels created since the last request get their binding (and their Mailbox id) first."""
    if scope not in call.ctx.bound_scopes:
        if await call.ctx.services.mailboxes.bind_labels(call.ctx.principal.user_id, scope):
            call.ctx.states.invalidate()  # new Mailboxes moved the states read so far
        call.ctx.bound_scopes.add(scope)


@dataclass(frozen=True, slots=True)
class Page:
    position: int
    ids: list[str]
    total: int
    limit: int | None  # set when the server capped what the client asked for


def page_of(ids: Sequence[str], args: Args, cap: int = LIMITS.max_query_limit) -> Page:
    """position/anchor/anchorOffset/limit (RFC 8620 §5.5) over a result already in order."""
    total = len(ids)
    limit = args.integer("limit", minimum=0)
    anchor = args.string("anchor")
    if anchor is not None:
        if anchor not in ids:
            raise MethodError("anchorNotFound", "The anchor is not in the results.")
        position = max(ids.index(anchor) + (args.integer("anchorOffset") or 0), 0)
    else:
        position = args.integer("position") or 0
        if position < 0:
            position = max(total + position, 0)
    capped = cap if limit is None or limit > cap else None
    count = cap if capped is not None else limit
    assert count is not None
    return Page(position, list(ids[position:position + count]), total, capped)


def utc_date(value: Any, name: str) -> datetime:
    """A UTCDate or Date property (RFC 8620 §1.4): an RFC 3339 time with its offset."""
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            moment = None
        if moment is not None and moment.tzinfo is not None:
            return moment
    raise invalid_properties(f"'{name}' is a date such as 2026-03-01T09:00:00Z.", name)


async def each_object(keys: Iterable[K], act: Callable[[K], Awaitable[V]]) -> tuple[dict[K, V], dict[K, Any]]:
    """One /set operation per object: what each gave, and the SetError of each refused (the rest go on)."""
    done: dict[K, V] = {}
    refused: dict[K, Any] = {}
    for key in keys:
        try:
            done[key] = await act(key)
        except (SetError, PlmailError) as exc:
            refused[key] = refusal(exc)
    return done, refused


def query_response(account_id: int | str, state: str, page: Page, *, changes: bool, total: bool) -> dict[str, Any]:
    """A /query answer (RFC 8620 §5.5) for a result already paged."""
    response: dict[str, Any] = {"accountId": str(account_id), "queryState": state, "canCalculateChanges": changes,
                                "position": page.position, "ids": page.ids}
    if total:
        response["total"] = page.total
    if page.limit is not None:
        response["limit"] = page.limit
    return response


def apply_patch(current: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """An object with a PatchObject applied (RFC 8620 §5.3): each key a JSON Pointer (RFC 6901, its leading "/"
    implied) whose parents exist; null removes. Raises SetError invalidPatch for a path that names nothing."""
    result: dict[str, Any] = copy.deepcopy(dict(current))
    for shorter, longer in itertools.pairwise(sorted(patch)):
        if longer.startswith(shorter + "/"):  # one path inside another is an invalid patch (§5.3)
            raise SetError("invalidPatch", f"'{shorter}' and '{longer}' cannot both be patched.")
    for pointer, value in patch.items():
        parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")]
        if not pointer or any(not p for p in parts):
            raise SetError("invalidPatch", f"'{pointer}' is not a path into the object.")
        target: Any = result
        for part in parts[:-1]:
            target = target.get(part) if isinstance(target, dict) else None
            if not isinstance(target, dict):
                raise SetError("invalidPatch", f"'{pointer}' goes through something that is not there.")
        if value is None:
            target.pop(parts[-1], None)
        else:
            target[parts[-1]] = copy.deepcopy(value)
    return result
