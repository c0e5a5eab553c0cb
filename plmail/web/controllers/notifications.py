"""Settings → Notifications: Web Push to this browser (its PushManager subscription, kept like a JMAP one but owned
by this browser's session), what notifies and what a notification shows; and the endpoint a notification's Archive
and Mark read buttons post to from the service worker."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import time
from typing import Any

from litestar import Controller, Request, get, post
from litestar.exceptions import NotAuthorizedException
from litestar.response import Redirect, Response, Template

from plmail.domain.errors import AuthenticationError, ConflictError, ValidationError
from plmail.domain.push import NotificationPreference, NotifyScope
from plmail.services import services_from
from plmail.web.auth import current_session
from plmail.web.controllers.forms import parse_form
from plmail.web.i18n import translate
from plmail.web.pages import render, signed_in_user


@dataclass(frozen=True)
class PreferenceForm:
    notify: str = "primary"
    show: str = "content"
    labels: list[int] = field(default_factory=list)
    accounts: list[int] = field(default_factory=list)
    quiet: str = ""
    reminders: str = ""
    quiet_from: str = ""
    quiet_to: str = ""


@dataclass(frozen=True)
class VipForm:
    address: str = ""


@dataclass(frozen=True)
class SubscriptionKeys:
    p256dh: str = ""
    auth: str = ""


@dataclass(frozen=True)
class BrowserSubscription:
    """What PushSubscription.toJSON() gives (Push API)."""

    endpoint: str = ""
    keys: SubscriptionKeys = field(default_factory=SubscriptionKeys)


@dataclass(frozen=True)
class NotificationAction:
    token: str = ""
    action: str = ""
    key: str = ""


def _quiet_hours(data: PreferenceForm) -> tuple[time | None, time | None]:
    if not data.quiet:
        return None, None
    try:
        start, end = time.fromisoformat(data.quiet_from), time.fromisoformat(data.quiet_to)
    except ValueError:
        raise ValidationError("Enter the quiet hours as two times, such as 22:00 and 07:00.",
                              field="quiet_from") from None
    if start == end:
        raise ValidationError("Quiet hours need a start and an end that differ.", field="quiet_to")
    return start.replace(second=0, microsecond=0), end.replace(second=0, microsecond=0)


def _session_id(request: Request[Any, Any, Any]) -> int:
    session = current_session(request)
    if session is None:
        raise NotAuthorizedException()
    return session.id


class NotificationsController(Controller):
    path = "/settings/notifications"

    async def _page(self, request: Request[Any, Any, Any], *, status_code: int = 200, **context: Any) -> Template:
        user = signed_in_user(request)
        services = services_from(request)
        push = services.browser_push
        labels = [label for label in await services.labels.all_for_user(user.id) if label.role is None]
        accounts = await services.accounts.for_user(user.id)
        return await render(request, "settings_notifications.html", status_code=status_code,
                            on_here=await push.on_for_session(user.id, _session_id(request)),
                            preference=await push.preference(user.id), vapid_key=push.vapid_public_key,
                            labels=labels, accounts=accounts, **context)

    @get("/")
    async def page(self, request: Request[Any, Any, Any]) -> Template:
        return await self._page(request)

    @post("/")
    async def save(self, request: Request[Any, Any, Any]) -> Template:
        data = parse_form(await request.form(), PreferenceForm)
        scopes = {scope.value: scope for scope in NotifyScope}
        if data.notify not in scopes or data.show not in ("content", "hidden"):
            raise ValidationError("Choose one of the offered options.")
        user = signed_in_user(request)
        scope = scopes[data.notify]
        try:
            quiet_from, quiet_to = _quiet_hours(data)
            # The boxes of the scope not chosen are left as they were on the page, and mean nothing: kept empty.
            preference = NotificationPreference(
                scope=scope, show_content=data.show == "content",
                label_ids=tuple(data.labels) if scope is NotifyScope.LABELS else (),
                account_ids=tuple(data.accounts) if scope is NotifyScope.ACCOUNTS else (),
                quiet_from=quiet_from, quiet_to=quiet_to, reminders=bool(data.reminders))
            await services_from(request).browser_push.set_preference(user.id, preference)
        except ValidationError as exc:
            return await self._page(request, status_code=400, error=translate(str(exc), user.locale))
        return await self._page(request, notice="Notification settings saved.")

    @post("/vip")
    async def add_vip(self, request: Request[Any, Any, Any]) -> Template:
        data = parse_form(await request.form(), VipForm)
        user = signed_in_user(request)
        try:
            await services_from(request).browser_push.add_vip(user.id, data.address)
        except (ValidationError, ConflictError) as exc:
            return await self._page(request, status_code=400, error=translate(str(exc), user.locale))
        return await self._page(request, notice="VIP sender added.")

    @post("/vip/remove")
    async def remove_vip(self, request: Request[Any, Any, Any]) -> Template:
        data = parse_form(await request.form(), VipForm)
        await services_from(request).browser_push.remove_vip(signed_in_user(request).id, data.address)
        return await self._page(request, notice="VIP sender removed.")

    @post("/device")
    async def subscribe(self, request: Request[Any, Any, Any], data: BrowserSubscription) -> Response[dict[str, Any]]:
        """The page's script posts the browser's subscription here (with the CSRF token in its header)."""
        user = signed_in_user(request)
        try:
            await services_from(request).browser_push.subscribe(
                user.id, _session_id(request), endpoint=data.endpoint, p256dh=data.keys.p256dh, auth=data.keys.auth)
        except (ValidationError, ConflictError) as exc:
            return Response({"error": translate(str(exc), user.locale)}, status_code=400)
        return Response({"on": True}, status_code=201)

    @post("/device/off")
    async def unsubscribe(self, request: Request[Any, Any, Any]) -> Redirect:
        user = signed_in_user(request)
        await services_from(request).browser_push.unsubscribe(user.id, _session_id(request))
        return Redirect("/settings/notifications")


@post("/push/action")
async def notification_action(request: Request[Any, Any, Any], data: NotificationAction) -> Response[dict[str, Any]]:
    """Archive or Mark read from a notification, posted by the service worker. Authorised by the notification's
    signed token (not the cookie: it may act long after the page closed), applied once per idempotency key."""
    try:
        applied = await services_from(request).browser_push.act(data.token, data.action, data.key)
    except AuthenticationError:
        return Response({"error": "The notification's action is no longer valid."}, status_code=403)
    except ValidationError as exc:
        return Response({"error": str(exc)}, status_code=400)
    if not applied:
        return Response({"applied": False, "error": "This action was applied already."}, status_code=409)
    return Response({"applied": True}, status_code=200)
