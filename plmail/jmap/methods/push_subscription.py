"""PushSubscription/get and /set (RFC 8620 §7.2): where a phone wants its StateChanges pushed (Web Push).

Neither takes an accountId: a subscription is the signed-in credentials', and only they see it. Its url and keys
are never read back (§7.2.1: asking for them is forbidden). Delivery is `push/dispatcher.py`'s.
"""

from __future__ import annotations

from typing import Any

from plmail.domain.errors import PlmailError
from plmail.domain.ids import parse_id
from plmail.domain.push import PushSubscriptionRow
from plmail.jmap.capabilities import CORE
from plmail.jmap.common import get_ids, properties, set_request, utc_date
from plmail.jmap.email_mapper import utc
from plmail.jmap.errors import MethodError, SetError, invalid_properties, refusal
from plmail.jmap.registry import Call, MethodTable
from plmail.push.subscriptions import Credentials

table = MethodTable()
PROPERTIES = ("id", "deviceClientId", "url", "keys", "verificationCode", "expires", "types")
SECRET = ("url", "keys")
SHOWN = tuple(p for p in PROPERTIES if p not in SECRET)
CREATE_PROPERTIES = frozenset({"deviceClientId", "url", "keys", "verificationCode", "expires", "types"})
UPDATE_PROPERTIES = frozenset({"verificationCode", "expires", "types"})


def _who(call: Call) -> Credentials:
    return Credentials(call.ctx.principal.user_id, call.ctx.principal.password_id)


def subscription_json(row: PushSubscriptionRow) -> dict[str, Any]:
    return {"id": str(row.id), "deviceClientId": row.device_client_id,
            "verificationCode": row.verification_code if row.verified else None,
            "expires": utc(row.expires_at), "types": list(row.types) if row.types is not None else None}


@table.method("PushSubscription/get", CORE)
async def get(call: Call) -> dict[str, Any]:
    args = call.args("ids", "properties")
    asked = args.strings("properties")
    if asked is not None and any(p in SECRET for p in asked):
        raise MethodError("forbidden", "A push subscription's url and keys are never returned (RFC 8620 §7.2.1).")
    props = properties(args, SHOWN, SHOWN)
    ids = get_ids(args)
    numbers = [n for n in (parse_id(i) for i in ids or []) if n is not None]
    rows = await call.ctx.services.push_subscriptions.owned(_who(call), None if ids is None else numbers)
    shown = {str(r.id): subscription_json(r) for r in rows}
    wanted = list(shown) if ids is None else ids
    return {"list": [{p: shown[i][p] for p in props} for i in wanted if i in shown],
            "notFound": [i for i in wanted if i not in shown]}


def _types(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise invalid_properties("'types' is a list of type names, or null for every type.", "types")
    return tuple(dict.fromkeys(value))


def _string(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise invalid_properties(f"'{name}' is a string and required.", name)
    return value


async def _create(call: Call, values: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(values) - CREATE_PROPERTIES)
    if unknown:
        raise invalid_properties("These properties cannot be set when creating a push subscription.", *unknown)
    if values.get("verificationCode") is not None:
        raise invalid_properties("'verificationCode' is set after the PushVerification arrived, not at creation.",
                                 "verificationCode")
    keys = values.get("keys")
    if not isinstance(keys, dict) or not isinstance(keys.get("p256dh"), str) or not isinstance(keys.get("auth"), str):
        raise invalid_properties("'keys' with 'p256dh' and 'auth' is required: this server only pushes encrypted "
                                 "(RFC 8291).", "keys")
    asked = values.get("expires")
    row = await call.ctx.services.push_subscriptions.create(
        _who(call), device_client_id=_string(values.get("deviceClientId"), "deviceClientId"),
        url=_string(values.get("url"), "url"), p256dh=keys["p256dh"], auth=keys["auth"],
        types=_types(values.get("types")), expires=None if asked is None else utc_date(asked, "expires"))
    return {"id": str(row.id), "expires": utc(row.expires_at)}


async def _update(call: Call, raw: str, patch: dict[str, Any]) -> dict[str, Any] | None:
    unknown = sorted(set(patch) - UPDATE_PROPERTIES)
    if unknown:
        raise invalid_properties("Only verificationCode, expires and types can be changed; make a new subscription "
                                 "for another url or keys.", *unknown)
    number = parse_id(raw)
    if number is None:
        raise SetError("notFound", f"No push subscription {raw!r}.")
    code = patch.get("verificationCode")
    if "verificationCode" in patch and not isinstance(code, str):
        raise invalid_properties("'verificationCode' is the code the PushVerification carried.", "verificationCode")
    renew = "expires" in patch
    asked = patch.get("expires")
    row = await call.ctx.services.push_subscriptions.update(
        _who(call), number, verification_code=code, renew=renew,
        expires=None if asked is None else utc_date(asked, "expires"),
        types=_types(patch.get("types")), set_types="types" in patch)
    # The server may shorten what was asked (§7.2.2): then it says what it kept.
    return {"expires": utc(row.expires_at)} if renew and utc(row.expires_at) != asked else None


async def _destroy(call: Call, raw: str) -> None:
    number = parse_id(raw)
    if number is None:
        raise SetError("notFound", f"No push subscription {raw!r}.")
    await call.ctx.services.push_subscriptions.destroy(_who(call), number)


@table.method("PushSubscription/set", CORE)
async def set_(call: Call) -> dict[str, Any]:
    request = set_request(call.args("create", "update", "destroy"))
    created: dict[str, Any] = {}
    not_created: dict[str, Any] = {}
    for creation_id, values in request.create.items():
        try:
            created[creation_id] = await _create(call, values)
            call.ctx.created_ids[creation_id] = created[creation_id]["id"]
        except (SetError, PlmailError) as exc:
            not_created[creation_id] = refusal(exc)
    updated: dict[str, Any] = {}
    not_updated: dict[str, Any] = {}
    for raw, patch in request.update.items():
        target = call.ctx.creation_id(raw) or raw
        try:
            updated[target] = await _update(call, target, patch)
        except (SetError, PlmailError) as exc:
            not_updated[target] = refusal(exc)
    destroyed: list[str] = []
    not_destroyed: dict[str, Any] = {}
    for raw in request.destroy:
        target = call.ctx.creation_id(raw) or raw
        try:
            await _destroy(call, target)
            destroyed.append(target)
        except (SetError, PlmailError) as exc:
            not_destroyed[target] = refusal(exc)
    return {"created": created or None, "updated": updated or None, "destroyed": destroyed or None,
            "notCreated": not_created or None, "notUpdated": not_updated or None,
            "notDestroyed": not_destroyed or None}
