"""Identity/get, Identity/changes and Identity/set (RFC 8621 §6): the addresses a user sends as."""

from __future__ import annotations

from typing import Any

from plmail.domain.enums import JmapObjectType
from plmail.domain.errors import PlmailError
from plmail.domain.messages import Address
from plmail.domain.outgoing import Identity
from plmail.jmap.capabilities import SUBMISSION
from plmail.jmap.common import (
    CHANGES_ARGUMENTS,
    GET_ARGUMENTS,
    SET_ARGUMENTS,
    changes_response,
    check_state,
    each_object,
    get_ids,
    properties,
    set_request,
    set_response,
)
from plmail.jmap.errors import SetError, invalid_properties, refusal
from plmail.jmap.registry import Call, MethodTable

table = MethodTable()
IDENTITY = JmapObjectType.IDENTITY
PROPERTIES = ("id", "name", "email", "replyTo", "bcc", "textSignature", "htmlSignature", "mayDelete")
_SETTABLE = frozenset({"name", "replyTo", "bcc", "textSignature", "htmlSignature"})


def _addresses(values: tuple[Address, ...]) -> list[dict[str, str]] | None:
    return [{"name": a.name, "email": a.address} for a in values] or None


def identity_json(identity: Identity) -> dict[str, Any]:
    return {"id": str(identity.id), "name": identity.name, "email": identity.email,
            "replyTo": _addresses(identity.reply_to), "bcc": _addresses(identity.bcc),
            "textSignature": identity.text_signature, "htmlSignature": identity.html_signature,
            "mayDelete": identity.may_delete}


def _address_list(value: Any, field: str) -> tuple[Address, ...]:
    """JMAP EmailAddress[] | null."""
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, dict) and isinstance(v.get("email"), str)
                                              for v in value):
        raise invalid_properties(f"'{field}' is a list of {{name, email}} or null.", field)
    return tuple(Address(str(v.get("name") or ""), v["email"]) for v in value)


def _text(value: Any, field: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise invalid_properties(f"'{field}' is a string.", field)
    return value


@table.method("Identity/get", SUBMISSION)
async def get(call: Call) -> dict[str, Any]:
    args = call.args(*GET_ARGUMENTS)
    scope = call.scope(args)
    props = properties(args, PROPERTIES, PROPERTIES)
    ids = get_ids(args)
    listed = await call.ctx.services.identities.for_scope(scope)
    state = await call.ctx.states.state(scope, IDENTITY)
    by_id = {str(i.id): identity_json(i) for i in listed}
    wanted = ids if ids is not None else list(by_id)
    return {"accountId": call.jmap_id(scope), "state": state,
            "list": [{p: by_id[i][p] for p in props} for i in wanted if i in by_id],
            "notFound": [i for i in wanted if i not in by_id]}


@table.method("Identity/changes", SUBMISSION)
async def changes(call: Call) -> dict[str, Any]:
    result = await changes_response(call, IDENTITY)
    scope = call.scope(call.args(*CHANGES_ARGUMENTS))
    if scope.unified:  # the unified account lists one identity per sendable address: announce only those
        listed = {str(i.id) for i in await call.ctx.services.identities.for_scope(scope)}
        result["created"] = [i for i in result["created"] if i in listed]
        result["updated"] = [i for i in result["updated"] if i in listed]
    return result


@table.method("Identity/set", SUBMISSION)
async def set_(call: Call) -> dict[str, Any]:
    args = call.args(*SET_ARGUMENTS)
    scope = call.scope(args)
    request = set_request(args)
    old_state = await check_state(call, args, scope, IDENTITY)
    service, user_id = call.ctx.services.identities, call.ctx.principal.user_id
    created: dict[str, Any] = {}
    not_created: dict[str, Any] = {}
    for creation_id, values in request.create.items():
        try:
            unknown = sorted(set(values) - _SETTABLE - {"email", "id", "mayDelete"})
            if unknown or "id" in values or "mayDelete" in values:
                raise invalid_properties("These properties cannot be set.", *(unknown or ["id", "mayDelete"]))
            email = values.get("email")
            if not isinstance(email, str):
                raise invalid_properties("'email' is required.", "email")
            owner = await service.account_for_new(scope, email)
            identity = await service.add_alias(user_id, owner, email, name=_text(values.get("name"), "name"),
                                               confirm_base=call.ctx.base_url)
            if set(values) & (_SETTABLE - {"name"}):
                identity = await _update(call, identity.id, values)
            call.ctx.created_ids[creation_id] = str(identity.id)
            created[creation_id] = {"id": str(identity.id), "mayDelete": identity.may_delete,
                                    **{k: v for k, v in identity_json(identity).items() if k not in values}}
        except (SetError, PlmailError) as exc:
            not_created[creation_id] = refusal(exc)
    known = {str(i.id) for i in await service.for_scope(scope)}

    def found(raw: str) -> int:
        target = call.ctx.creation_id(raw)
        if target is None or target not in known:
            raise SetError("notFound", f"No identity {raw!r} in this account.")
        return int(target)

    async def update(raw: str) -> None:
        patch = request.update[raw]
        fixed = sorted(set(patch) & {"email", "id", "mayDelete"})
        if fixed:
            raise invalid_properties("These properties cannot be changed.", *fixed)
        unknown = sorted(set(patch) - _SETTABLE)
        if unknown:
            raise invalid_properties("Unknown properties.", *unknown)
        await _update(call, found(raw), patch)

    async def destroy(raw: str) -> None:
        await service.remove(user_id, found(raw))

    updated, not_updated = await each_object(request.update, update)
    destroyed, not_destroyed = await each_object(request.destroy, destroy)
    call.ctx.states.invalidate()
    new_state = await call.ctx.states.state(scope, IDENTITY)
    return set_response(call.jmap_id(scope), old_state, new_state, created=created, updated=updated,
                        destroyed=list(destroyed),
                        not_created=not_created, not_updated=not_updated, not_destroyed=not_destroyed)


async def _update(call: Call, identity_id: int, values: dict[str, Any]) -> Identity:
    return await call.ctx.services.identities.update(
        call.ctx.principal.user_id, identity_id,
        name=_text(values["name"], "name") if "name" in values else None,
        reply_to=_address_list(values["replyTo"], "replyTo") if "replyTo" in values else None,
        bcc=_address_list(values["bcc"], "bcc") if "bcc" in values else None,
        text_signature=_text(values["textSignature"], "textSignature") if "textSignature" in values else None,
        html_signature=_text(values["htmlSignature"], "htmlSignature") if "htmlSignature" in values else None,
    )
