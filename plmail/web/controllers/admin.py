"""The administrator's view of queues, workers, failures and users."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, get, post
from litestar.response import Template

from plmail.domain.errors import ValidationError
from plmail.web.auth import admin_only, services_from
from plmail.web.controllers.forms import URLENCODED, NewUserForm
from plmail.web.pages import render


async def _queue_context(request: Request[Any, Any, Any]) -> dict[str, Any]:
    services = services_from(request)
    supervisor = request.app.state.get("supervisor")
    return {
        "counts": await services.queue_overview.counts(),
        "probes": {p.queue: p for p in await services.probes.latest()},
        "failures": await services.queue_overview.failures(),
        "local_workers": supervisor.status() if supervisor is not None else {},
    }


class AdminController(Controller):
    path = "/admin"
    guards = [admin_only]  # noqa: RUF012  (Litestar reads this as a plain class attribute)

    @get("/")
    async def page(self, request: Request[Any, Any, Any]) -> Template:
        users = await services_from(request).users.all_users()
        return await render(request, "admin.html", users=users, **await _queue_context(request))

    @get("/queues")
    async def queues(self, request: Request[Any, Any, Any]) -> Template:
        """The queue panel alone, for htmx to refresh in place."""
        return await render(request, "partials/admin_queues.html", bare=True, **await _queue_context(request))

    @post("/probe")
    async def probe(self, request: Request[Any, Any, Any]) -> Template:
        await services_from(request).probes.request_all()
        return await render(request, "partials/admin_queues.html", bare=True, **await _queue_context(request))

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
        users = await services.users.all_users()
        return await render(request, "admin.html", status_code=400 if error else 200, users=users,
                            user_error=error, user_added=notice, **await _queue_context(request))
