"""The signed-in user's own preferences and password."""

from __future__ import annotations

import zoneinfo
from typing import Annotated, Any

from litestar import Controller, Request, get, post
from litestar.response import Template

from plmail.domain.errors import AuthenticationError, ValidationError
from plmail.web.auth import services_from, start_session
from plmail.web.controllers.forms import URLENCODED, PasswordForm, PreferencesForm
from plmail.web.i18n import translate
from plmail.web.pages import render, signed_in_user

_ZONES = sorted(zoneinfo.available_timezones())


class SettingsController(Controller):
    path = "/settings"

    @get("/")
    async def page(self, request: Request[Any, Any, Any]) -> Template:
        return await render(request, "settings.html", zones=_ZONES)

    @post("/preferences")
    async def preferences(
        self, request: Request[Any, Any, Any], data: Annotated[PreferencesForm, URLENCODED]
    ) -> Template:
        user = signed_in_user(request)
        services = services_from(request)
        try:
            await services.users.update_preferences(
                user, display_name=data.display_name, locale=data.locale, time_zone=data.time_zone
            )
        except ValidationError as exc:
            return await render(request, "settings.html", status_code=400, zones=_ZONES, error=str(exc))
        request.scope["user"] = await services.users.by_id(user.id)
        return await render(request, "settings.html", zones=_ZONES, notice="Saved.")

    @post("/password")
    async def password(self, request: Request[Any, Any, Any], data: Annotated[PasswordForm, URLENCODED]) -> Template:
        user = signed_in_user(request)
        services = services_from(request)
        try:
            await services.users.change_password(user, data.current_password, data.new_password)
        except (AuthenticationError, ValidationError) as exc:
            message = translate(str(exc), user.locale)
            return await render(request, "settings.html", status_code=400, zones=_ZONES, password_error=message)
        # This session continues under the new epoch; every other one is now invalid.
        start_session(request, await services.users.by_id(user.id))
        notice = "Password changed. Other sessions were signed out."
        return await render(request, "settings.html", zones=_ZONES, password_notice=notice)
