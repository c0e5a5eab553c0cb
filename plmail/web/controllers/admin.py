"""The administrator's view of queues, workers, failures and users."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Controller, Request, get, post
from litestar.params import FromPath
from litestar.response import Template

from plmail.domain.errors import NotFoundError, ValidationError
from plmail.services import services_from
from plmail.web.auth import admin_only
from plmail.web.controllers.admin_page import admin_page, queue_context
from plmail.web.controllers.forms import URLENCODED, NewUserForm, parse_form
from plmail.web.i18n import translate
from plmail.web.pages import locale_for, render, signed_in_user


@dataclass(frozen=True)
class ConnectionsForm:
    any_port: str = ""


class AdminController(Controller):
    path = "/admin"
    guards = [admin_only]  # noqa: RUF012  (Litestar reads this as a plain class attribute)

    @get("/")
    async def page(self, request: Request[Any, Any, Any]) -> Template:
        return await admin_page(request)

    @get("/queues")
    async def queues(self, request: Request[Any, Any, Any]) -> Template:
        """The queue panel alone, for htmx to refresh in place."""
        return await render(request, "partials/admin_queues.html", bare=True, **await queue_context(request))

    @post("/probe")
    async def probe(self, request: Request[Any, Any, Any]) -> Template:
        await services_from(request).probes.request_all()
        return await render(request, "partials/admin_queues.html", bare=True, **await queue_context(request))

    @post("/jobs/{key:str}/retry")
    async def retry_job(self, request: Request[Any, Any, Any], key: FromPath[str]) -> Template:
        await services_from(request).queue_overview.retry_failed(key)
        return await render(request, "partials/admin_queues.html", bare=True, **await queue_context(request))

    @post("/jobs/{key:str}/discard")
    async def discard_job(self, request: Request[Any, Any, Any], key: FromPath[str]) -> Template:
        await services_from(request).queue_overview.discard_failed(key)
        return await render(request, "partials/admin_queues.html", bare=True, **await queue_context(request))

    @post("/users")
    async def add_user(self, request: Request[Any, Any, Any], data: Annotated[NewUserForm, URLENCODED]) -> Template:
        services = services_from(request)
        notice = error = None
        try:
            created = await services.users.create_user(
                data.email, data.password, display_name=data.display_name, is_admin=data.is_admin == "on"
            )
            notice = created.email
        except ValidationError as exc:
            error = str(exc)
        return await admin_page(request, status_code=400 if error else 200, user_error=error, user_added=notice)

    @post("/users/{user_id:int}/disable")
    async def disable_user(self, request: Request[Any, Any, Any], user_id: FromPath[int]) -> Template:
        """The user can no longer sign in; their sessions end at once and their app passwords stop working."""
        return await self._user_change(request, user_id, disabled=True)

    @post("/users/{user_id:int}/enable")
    async def enable_user(self, request: Request[Any, Any, Any], user_id: FromPath[int]) -> Template:
        return await self._user_change(request, user_id, disabled=False)

    async def _user_change(self, request: Request[Any, Any, Any], user_id: int, *, disabled: bool) -> Template:
        try:
            await services_from(request).users.set_disabled(signed_in_user(request), user_id, disabled)
        except (ValidationError, NotFoundError) as exc:
            return await admin_page(request, status_code=400, user_error=translate(str(exc), locale_for(request)))
        return await admin_page(request, user_notice="User disabled; their sessions ended." if disabled
                                else "User enabled.")

    @post("/users/{user_id:int}/reset-second-factor")
    async def reset_second_factor(self, request: Request[Any, Any, Any], user_id: FromPath[int]) -> Template:
        try:
            await services_from(request).users.reset_second_factor(user_id)
        except NotFoundError as exc:
            return await admin_page(request, status_code=400, user_error=translate(str(exc), locale_for(request)))
        return await admin_page(request, user_notice="Second factor removed; the user signs in with the password.")

    @post("/connections")
    async def connections(self, request: Request[Any, Any, Any]) -> Template:
        """Whether users' connection tests (and new accounts) may use any port, not only the mail ports."""
        form = parse_form(await request.form(), ConnectionsForm)
        await services_from(request).connection_tests.allow_any_port(form.any_port == "on")
        return await admin_page(request, connections_notice="Saved.")
