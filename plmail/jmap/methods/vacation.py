"""VacationResponse/get and /set (RFC 8621 §8): the user's automatic reply, one per user ("singleton"), in the
unified account (it answers mail of every account)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from plmail.domain.enums import JmapObjectType
from plmail.domain.errors import PlmailError
from plmail.domain.mailstore import MailScope
from plmail.domain.outgoing import VacationSettings
from plmail.jmap.capabilities import VACATION
from plmail.jmap.common import (
    GET_ARGUMENTS,
    SET_ARGUMENTS,
    check_state,
    get_ids,
    properties,
    set_request,
    set_response,
    utc_date,
)
from plmail.jmap.email_mapper import utc
from plmail.jmap.errors import MethodError, SetError, invalid_properties, refusal
from plmail.jmap.registry import Call, MethodTable

table = MethodTable()
VACATION_TYPE = JmapObjectType.VACATION_RESPONSE
SINGLETON = "singleton"
PROPERTIES = ("id", "isEnabled", "fromDate", "toDate", "subject", "textBody", "htmlBody")


def vacation_json(settings: VacationSettings) -> dict[str, Any]:
    return {"id": SINGLETON, "isEnabled": settings.is_enabled, "fromDate": utc(settings.from_date),
            "toDate": utc(settings.to_date), "subject": settings.subject, "textBody": settings.text_body,
            "htmlBody": settings.html_body}


def _unified(call: Call, scope: MailScope) -> None:
    if not scope.unified:
        raise MethodError("accountNotSupportedByMethod",
                          "The automatic reply is the user's: use the unified (primary) account.")


@table.method("VacationResponse/get", VACATION)
async def get(call: Call) -> dict[str, Any]:
    args = call.args(*GET_ARGUMENTS)
    scope = call.scope(args)
    _unified(call, scope)
    props = properties(args, PROPERTIES, PROPERTIES)
    ids = get_ids(args)
    wanted = [SINGLETON] if ids is None else ids
    shown = vacation_json(await call.ctx.services.vacation.get(scope.user_id))
    return {"accountId": call.jmap_id(scope), "state": await call.ctx.states.state(scope, VACATION_TYPE),
            "list": [{p: shown[p] for p in props} for i in wanted if i == SINGLETON],
            "notFound": [i for i in wanted if i != SINGLETON]}


def _date(value: Any, name: str) -> datetime | None:
    return None if value is None else utc_date(value, name)


def _text(value: Any, name: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise invalid_properties(f"'{name}' is a string or null.", name)
    return value


def _patched(current: VacationSettings, patch: dict[str, Any]) -> VacationSettings:
    unknown = sorted(set(patch) - set(PROPERTIES))
    if unknown:
        raise invalid_properties("Unknown properties.", *unknown)
    if "id" in patch and patch["id"] != SINGLETON:
        raise invalid_properties("The id cannot be changed.", "id")
    enabled = patch.get("isEnabled", current.is_enabled)
    if not isinstance(enabled, bool):
        raise invalid_properties("'isEnabled' is true or false.", "isEnabled")
    return VacationSettings(
        is_enabled=enabled,
        from_date=_date(patch["fromDate"], "fromDate") if "fromDate" in patch else current.from_date,
        to_date=_date(patch["toDate"], "toDate") if "toDate" in patch else current.to_date,
        subject=_text(patch["subject"], "subject") if "subject" in patch else current.subject,
        text_body=_text(patch["textBody"], "textBody") if "textBody" in patch else current.text_body,
        html_body=_text(patch["htmlBody"], "htmlBody") if "htmlBody" in patch else current.html_body,
    )


@table.method("VacationResponse/set", VACATION)
async def set_(call: Call) -> dict[str, Any]:
    args = call.args(*SET_ARGUMENTS)
    scope = call.scope(args)
    _unified(call, scope)
    request = set_request(args)
    old_state = await check_state(call, args, scope, VACATION_TYPE)
    service = call.ctx.services.vacation
    # RFC 8621 §8: there is exactly one; it can neither be created nor destroyed.
    not_created = {c: SetError("singleton", "There is one automatic reply; update it.").as_json()
                   for c in request.create}
    not_destroyed = {i: SetError("singleton", "The automatic reply cannot be destroyed; switch it off.").as_json()
                     for i in request.destroy}
    updated: dict[str, Any] = {}
    not_updated: dict[str, Any] = {}
    for raw, patch in request.update.items():
        try:
            if raw != SINGLETON:
                raise SetError("notFound", f"No VacationResponse {raw!r}: its id is {SINGLETON!r}.")
            await service.set(scope.user_id, _patched(await service.get(scope.user_id), patch))
            updated[raw] = None
        except (SetError, PlmailError) as exc:
            not_updated[raw] = refusal(exc)
    call.ctx.states.invalidate()
    new_state = await call.ctx.states.state(scope, VACATION_TYPE)
    return set_response(call.jmap_id(scope), old_state, new_state, created={}, updated=updated, destroyed=[],
                        not_created=not_created, not_updated=not_updated, not_destroyed=not_destroyed)
