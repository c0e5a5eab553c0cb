"""Thread and message actions from the list toolbar and the conversation view.

Every action calls ThreadOperations, the same service JMAP uses: archiving from the browser and from
a phone is one code path. "Delete forever" and "Empty trash" are MailDestroyer's, as JMAP's destroy is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from litestar import Controller, Request, post
from litestar.exceptions import NotFoundException
from litestar.params import FromPath
from litestar.response import Redirect, Response

from plmail.domain.errors import NotFoundError, ValidationError
from plmail.mail.destroy import Destroyed
from plmail.mail.operations import OperationResult, ThreadOperations
from plmail.mail.snooze import resolve_snooze
from plmail.services import services_from
from plmail.web.auth import safe_next
from plmail.web.controllers.forms import parse_form
from plmail.web.pages import signed_in_user

Scope = dict[str, list[int]]
Action = Callable[[ThreadOperations, int, Scope, "ActionForm"], Awaitable[OperationResult]]


@dataclass(frozen=True)
class ActionForm:
    action: str = ""
    thread_ids: list[int] = field(default_factory=list)
    all_in_view: str = ""
    view: str = ""
    label_id: int | None = None
    snooze: str = ""
    snooze_custom: str = ""
    snooze_date: str = ""  # the snooze menu's date picker: a date field and a time choice, joined here
    snooze_time: str = ""
    next: str = "/"

    @property
    def chosen_action(self) -> str:
        """A snooze menu item is one button that names only its time (name=snooze value=tomorrow): the action
        it means is snooze."""
        return self.action or ("snooze" if self.snooze else "")

    @property
    def custom_time(self) -> str:
        """The picked time as `YYYY-MM-DDTHH:MM`: from the date and time fields, else the one-field form."""
        if self.snooze_date.strip():
            return f"{self.snooze_date.strip()}T{self.snooze_time.strip() or '08:00'}"
        return self.snooze_custom


def _label(form: ActionForm) -> int:
    if form.label_id is None:
        raise ValidationError("Choose a label.")
    return form.label_id


async def _snooze(ops: ThreadOperations, user_id: int, scope: Scope, form: ActionForm,
                  time_zone: str) -> OperationResult:
    until = resolve_snooze(form.snooze, form.custom_time, datetime.now(UTC), time_zone)
    return await ops.snooze(user_id, scope["thread_ids"], until)


# The toolbar's vocabulary; each entry is one ThreadOperations call.
ACTIONS: dict[str, Action] = {
    "archive": lambda ops, u, s, f: ops.archive(u, **s),
    "trash": lambda ops, u, s, f: ops.trash(u, **s),
    "untrash": lambda ops, u, s, f: ops.untrash(u, **s),
    "spam": lambda ops, u, s, f: ops.spam(u, **s),
    "not_spam": lambda ops, u, s, f: ops.not_spam(u, **s),
    "inbox": lambda ops, u, s, f: ops.move_to_inbox(u, **s),
    "read": lambda ops, u, s, f: ops.set_seen(u, True, **s),
    "unread": lambda ops, u, s, f: ops.set_seen(u, False, **s),
    "star": lambda ops, u, s, f: ops.set_starred(u, True, **s),
    "unstar": lambda ops, u, s, f: ops.set_starred(u, False, **s),
    "label_add": lambda ops, u, s, f: ops.add_label(u, _label(f), **s),
    "label_remove": lambda ops, u, s, f: ops.remove_label(u, _label(f), **s),
    "move": lambda ops, u, s, f: ops.move_to_label(u, _label(f), **s),
    "wake": lambda ops, u, s, f: ops.wake(u, s["thread_ids"]),
}


IDEMPOTENCY_KEY = "idempotency-key"  # draft-ietf-httpapi-idempotency-key-header

# What the toast offers to undo: the moves (labels). Read, unread and star are one click to reverse by hand.
UNDOABLE = frozenset({"archive", "trash", "spam", "move", "label_add", "snooze"})


@dataclass(frozen=True)
class UndoForm:
    undo: str = ""
    next: str = "/"


def _with_toast(target: str, **values: str | int) -> str:
    """The page the action returns to, told what to say (the toast reads these and removes them)."""
    split = urlsplit(target)
    query = [(k, v) for k, v in parse_qsl(split.query) if k not in ("toast", "undo", "n")]
    query += [(k, str(v)) for k, v in values.items()]
    return urlunsplit(("", "", split.path, urlencode(query), split.fragment))


class ActionController(Controller):
    @post("/actions/undo")
    async def undo(self, request: Request[Any, Any, Any]) -> Redirect:
        data = parse_form(await request.form(), UndoForm)
        user = signed_in_user(request)
        try:
            await services_from(request).operations.undo(user.id, data.undo)
        except NotFoundError:
            return Redirect(_with_toast(safe_next(data.next), toast="undo_gone"))
        return Redirect(_with_toast(safe_next(data.next), toast="undone"))

    @post("/actions")
    async def threads(self, request: Request[Any, Any, Any]) -> Redirect | Response[dict[str, Any]]:
        """With an Idempotency-Key header (the service worker's replay of an action made offline), applied once:
        a key already applied is refused with 409 and changes nothing."""
        key = request.headers.get(IDEMPOTENCY_KEY)
        if key is None:
            return await self._threads(request)
        async with services_from(request).applied_actions.once(signed_in_user(request).id, key) as fresh:
            if not fresh:
                return Response({"applied": False, "error": "This action was applied already."}, status_code=409)
            return await self._threads(request)

    async def _threads(self, request: Request[Any, Any, Any]) -> Redirect:
        data = parse_form(await request.form(), ActionForm)
        data = replace(data, action=data.chosen_action)
        user = signed_in_user(request)
        services = services_from(request)
        thread_ids = list(data.thread_ids)
        if data.all_in_view and data.view:
            try:
                thread_ids = await services.reader.view_thread_ids(user.id, data.view)
            except NotFoundError:
                raise NotFoundException() from None
        if data.action == "empty_trash":
            _refused(await services.destroyer.empty_trash(user.id))
            return Redirect(safe_next(data.next))
        if data.action == "destroy":
            _refused(await services.destroyer.destroy_threads(user.id, thread_ids))
            return Redirect(safe_next(data.next))
        scope: Scope = {"thread_ids": thread_ids}
        if data.action not in UNDOABLE:
            await _run(services.operations, user.id, user.time_zone, scope, data)
            return Redirect(safe_next(data.next))
        with services.operations.undoable() as ticket:
            result = await _run(services.operations, user.id, user.time_zone, scope, data)
        if not ticket.used:
            return Redirect(safe_next(data.next))
        return Redirect(_with_toast(safe_next(data.next), toast=data.action, undo=ticket.key,
                                    n=len(result.threads) or 1))

    @post("/message/{message_id:int}/action")
    async def message(self, request: Request[Any, Any, Any], message_id: FromPath[int]) -> Redirect:
        data = parse_form(await request.form(), ActionForm)
        user = signed_in_user(request)
        if data.action == "destroy":
            _refused(await services_from(request).destroyer.destroy(user.id, [message_id]))
        else:
            await _run(services_from(request).operations, user.id, user.time_zone, {"message_ids": [message_id]},
                       data)
        return Redirect(safe_next(data.next))


def _refused(outcome: Destroyed) -> None:
    """What a provider would not delete for good stays where it was, and the page says why."""
    if outcome.refused:
        reasons = sorted(set(outcome.refused.values()))
        raise ValidationError(" ".join(reasons))


async def _run(ops: ThreadOperations, user_id: int, time_zone: str, scope: Scope, form: ActionForm
               ) -> OperationResult:
    try:
        if form.action == "snooze":
            if "thread_ids" not in scope:
                raise ValidationError("Only conversations can be snoozed.")
            return await _snooze(ops, user_id, scope, form, time_zone)
        action = ACTIONS.get(form.action)
        if action is None:
            raise ValidationError(f"Unknown action {form.action!r}.")
        return await action(ops, user_id, scope, form)
    except NotFoundError:
        raise NotFoundException() from None
