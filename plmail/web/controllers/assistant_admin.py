"""Administration → Assistant: the model host, holding new mail for it, and how long mail waited."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from litestar import Controller, Request, post
from litestar.response import Template

from plmail.assistant.settings import AssistantSettings, ModelHost
from plmail.domain.errors import ValidationError
from plmail.services import services_from
from plmail.web.auth import admin_only
from plmail.web.controllers.admin_page import admin_page
from plmail.web.controllers.forms import parse_form
from plmail.web.i18n import translate
from plmail.web.pages import locale_for, render, signed_in_user


@dataclass(frozen=True)
class AssistantForm:
    kind: str = "openai"
    url: str = ""
    model: str = ""
    api_key: str = ""
    hold_enabled: str = ""
    hold_max_seconds: int | None = None
    timeout_seconds: int | None = None


def _settings_from(form: AssistantForm, stored: AssistantSettings) -> AssistantSettings:
    """The form's values as settings, for a connection test before anything is saved."""
    host = None
    if form.url.strip():
        host = ModelHost(form.kind, form.url.strip().rstrip("/"), form.model.strip(), bool(form.api_key))
    return dataclasses.replace(stored, host=host, timeout_seconds=float(form.timeout_seconds or 30))


class AssistantAdminController(Controller):
    path = "/admin/assistant"
    guards = [admin_only]  # noqa: RUF012  (Litestar reads this as a plain class attribute)

    @post("/")
    async def save(self, request: Request[Any, Any, Any]) -> Template:
        form = parse_form(await request.form(), AssistantForm)
        services = services_from(request)
        try:
            await services.assistant_settings.save(
                kind=form.kind, url=form.url, model=form.model, api_key=form.api_key or None,
                hold_enabled=form.hold_enabled == "on",
                hold_max_seconds=form.hold_max_seconds if form.hold_max_seconds is not None else 60,
                timeout_seconds=float(form.timeout_seconds if form.timeout_seconds is not None else 30),
            )
        except ValidationError as exc:
            message = translate(str(exc), locale_for(request))
            return await admin_page(request, status_code=400, assistant_error=message)
        return await admin_page(request, assistant_notice="Saved.")

    @post("/test")
    async def test(self, request: Request[Any, Any, Any]) -> Template:
        """Ask the host in the form (saved or not) about a sample newsletter; the stored key is used
        when the key field is left empty."""
        signed_in_user(request)
        form = parse_form(await request.form(), AssistantForm)
        services = services_from(request)
        settings = _settings_from(form, await services.assistant_settings.load())
        result = await services.assistant.test_connection(settings, api_key=form.api_key or None)
        return await render(request, "partials/assistant_test.html", bare=True, result=result)
