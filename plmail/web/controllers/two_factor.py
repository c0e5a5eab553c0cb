"""Settings → Two-factor sign-in: enrol an authenticator app (QR code), recovery codes, switch it off."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Controller, Request, get, post
from litestar.response import Template

from plmail.domain.errors import AuthenticationError, ValidationError
from plmail.services import services_from
from plmail.web.auth import reauthenticate, reauthentication_error
from plmail.web.controllers.forms import URLENCODED
from plmail.web.i18n import translate
from plmail.web.pages import render, signed_in_user


@dataclass(frozen=True)
class EnrolForm:
    secret: str = ""
    code: str = ""
    password: str = ""


@dataclass(frozen=True)
class PasswordCheckForm:
    password: str = ""


class TwoFactorController(Controller):
    path = "/settings/two-factor"

    async def _page(self, request: Request[Any, Any, Any], *, status_code: int = 200, secret: str | None = None,
                    **context: Any) -> Template:
        user = signed_in_user(request)
        services = services_from(request)
        enrolment = None if user.two_factor else services.two_factor.new_enrolment(user, secret)
        left = await services.two_factor.recovery_codes_left(user.id) if user.two_factor else 0
        return await render(request, "settings_two_factor.html", status_code=status_code, enrolment=enrolment,
                            codes_left=left, **context)

    @get("/")
    async def page(self, request: Request[Any, Any, Any]) -> Template:
        return await self._page(request)

    @post("/")
    async def enrol(self, request: Request[Any, Any, Any], data: Annotated[EnrolForm, URLENCODED]) -> Template:
        """Confirm the scanned secret with a code from it; the recovery codes are shown once."""
        user = signed_in_user(request)
        services = services_from(request)
        try:
            await reauthenticate(request, user, data.password)
        except AuthenticationError as exc:
            return await self._page(request, status_code=400, secret=data.secret.strip() or None,
                                    error=reauthentication_error(exc, user.locale))
        try:
            codes = await services.two_factor.confirm(user, data.secret.strip(), data.code)
        except ValidationError as exc:
            return await self._page(request, status_code=400, secret=data.secret.strip() or None,
                                    error=translate(str(exc), user.locale))
        request.scope["user"] = await services.users.by_id(user.id)
        return await self._page(request, recovery_codes=codes, notice="Two-factor sign-in is on.")

    @post("/codes")
    async def new_codes(self, request: Request[Any, Any, Any], data: Annotated[PasswordCheckForm, URLENCODED]
                        ) -> Template:
        user = signed_in_user(request)
        services = services_from(request)
        try:
            await reauthenticate(request, user, data.password)
        except AuthenticationError as exc:
            return await self._page(request, status_code=400, error=reauthentication_error(exc, user.locale))
        codes = await services.two_factor.new_recovery_codes(user.id)
        return await self._page(request, recovery_codes=codes,
                                notice="New recovery codes; the old ones no longer work.")

    @post("/disable")
    async def disable(self, request: Request[Any, Any, Any], data: Annotated[PasswordCheckForm, URLENCODED]
                      ) -> Template:
        user = signed_in_user(request)
        services = services_from(request)
        try:
            await reauthenticate(request, user, data.password)
            await services.users.disable_second_factor(user)
        except AuthenticationError as exc:
            return await self._page(request, status_code=400, error=reauthentication_error(exc, user.locale))
        request.scope["user"] = await services.users.by_id(user.id)
        return await self._page(request, notice="Two-factor sign-in is off.")
