"""The signed-in user's own preferences and password."""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass, field
from typing import Annotated, Any

from litestar import Controller, Request, get, post
from litestar.response import Template

from plmail.domain.errors import AuthenticationError, ValidationError
from plmail.services import services_from
from plmail.web.auth import browser_of, current_session, reauthentication_error, set_sign_in_cookies
from plmail.web.controllers.forms import URLENCODED, PasswordForm, PreferencesForm, parse_form
from plmail.web.i18n import translate
from plmail.web.pages import CATEGORY_TABS, render, signed_in_user

_ZONES = sorted(zoneinfo.available_timezones())


def _zone_groups() -> list[tuple[str, list[str]]]:
    """The zones by region (Europe, America, …), the ~600 names a flat list would show."""
    groups: dict[str, list[str]] = {}
    for name in _ZONES:
        region, slash, _rest = name.partition("/")
        if not slash or region in ("Etc", "SystemV", "US", "Brazil", "Canada", "Chile", "Mexico"):
            region = "Other"
        groups.setdefault(region, []).append(name)
    return sorted(groups.items(), key=lambda item: (item[0] == "Other", item[0]))


ZONE_GROUPS = _zone_groups()


@dataclass(frozen=True)
class AppearanceForm:
    theme: str = "system"
    density: str = "comfortable"
    hour_cycle: str = ""
    shortcuts: str = ""


@dataclass(frozen=True)
class SortingForm:
    sorting: str = "assistant"
    enabled: list[str] = field(default_factory=list)  # the tabs left switched on


async def _page(request: Request[Any, Any, Any], *, status_code: int = 200, **context: Any) -> Template:
    """Settings → Account: name, language, time zone, appearance."""
    return await render(request, "settings.html", status_code=status_code, zones=_ZONES, zone_groups=ZONE_GROUPS,
                        **context)


async def _sorting_page(request: Request[Any, Any, Any], *, status_code: int = 200, **context: Any) -> Template:
    """Settings → Inbox sorting: who sorts new mail, which tabs are on."""
    services = services_from(request)
    user = signed_in_user(request)
    return await render(request, "settings_sorting.html", status_code=status_code,
                        sorting=await services.sorting.load(user.id),
                        assistant_available=(await services.assistant_settings.load()).classifying, **context)


async def _security_page(request: Request[Any, Any, Any], *, status_code: int = 200, **context: Any) -> Template:
    """Settings → Security: the password, and the ways to the second factor and the signed-in browsers."""
    return await render(request, "settings_security.html", status_code=status_code, **context)


class SettingsController(Controller):
    path = "/settings"

    @get("/")
    async def page(self, request: Request[Any, Any, Any]) -> Template:
        return await _page(request)

    @get("/sorting")
    async def sorting_page(self, request: Request[Any, Any, Any]) -> Template:
        return await _sorting_page(request)

    @get("/security")
    async def security_page(self, request: Request[Any, Any, Any]) -> Template:
        return await _security_page(request)

    @post("/sorting")
    async def sorting(self, request: Request[Any, Any, Any]) -> Template:
        """Who sorts the inbox, and which tabs are on; a change re-sorts stored mail in the background."""
        user = signed_in_user(request)
        data = parse_form(await request.form(), SortingForm)
        enabled = set(data.enabled)
        disabled = [value for value, _name in CATEGORY_TABS if value not in enabled and value != "primary"]
        try:
            changed = await services_from(request).sorting.save(user.id, sorting=data.sorting, disabled=disabled)
        except ValidationError as exc:
            return await _sorting_page(request, status_code=400, sorting_error=translate(str(exc), user.locale))
        notice = "Saved. Your mail is being sorted again." if changed else "Saved."
        return await _sorting_page(request, sorting_notice=notice)

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
            return await _page(request, status_code=400, error=str(exc))
        request.scope["user"] = await services.users.by_id(user.id)
        return await _page(request, notice="Saved.")

    @post("/appearance")
    async def appearance(self, request: Request[Any, Any, Any]) -> Template:
        user = signed_in_user(request)
        data = parse_form(await request.form(), AppearanceForm)
        services = services_from(request)
        try:
            await services.users.save_appearance(user, theme=data.theme, density=data.density,
                                                 hour_cycle=data.hour_cycle, shortcuts=data.shortcuts == "on")
        except ValidationError as exc:
            return await _page(request, status_code=400, error=translate(str(exc), user.locale))
        request.scope["user"] = await services.users.by_id(user.id)
        return await _page(request, appearance_notice="Saved.")

    @post("/password")
    async def password(self, request: Request[Any, Any, Any], data: Annotated[PasswordForm, URLENCODED]) -> Template:
        user = signed_in_user(request)
        services = services_from(request)
        here = current_session(request)
        try:
            result = await services.users.change_password(user, data.current_password, data.new_password,
                                                          browser_of(request), remember=bool(here and here.remember))
        except AuthenticationError as exc:
            return await _security_page(request, status_code=400,
                                        password_error=reauthentication_error(exc, user.locale))
        except ValidationError as exc:
            return await _security_page(request, status_code=400, password_error=translate(str(exc), user.locale))
        # Every session ended; this browser goes on in a new one.
        notice = "Password changed. Other sessions were signed out."
        page = await _security_page(request, password_notice=notice)
        set_sign_in_cookies(page, result)
        return page
