"""Settings → Devices: app passwords for JMAP clients, created (secret shown once), listed, revoked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Controller, Request, get, post
from litestar.exceptions import NotFoundException
from litestar.params import FromPath
from litestar.response import Template

from plmail.domain.errors import AuthenticationError, NotFoundError, ValidationError
from plmail.services import services_from
from plmail.web.auth import reauthenticate, reauthentication_error
from plmail.web.controllers.forms import URLENCODED
from plmail.web.i18n import translate
from plmail.web.pages import render, signed_in_user


@dataclass(frozen=True)
class DeviceForm:
    name: str = ""
    password: str = ""


class DevicesController(Controller):
    path = "/settings/devices"

    async def _page(self, request: Request[Any, Any, Any], *, status_code: int = 200, **context: Any) -> Template:
        user = signed_in_user(request)
        passwords = await services_from(request).app_passwords.active(user.id)
        server = str(request.base_url).rstrip("/")
        return await render(request, "settings_devices.html", status_code=status_code, passwords=passwords,
                            server=server, **context)

    @get("/")
    async def page(self, request: Request[Any, Any, Any]) -> Template:
        return await self._page(request)

    @post("/")
    async def create(self, request: Request[Any, Any, Any], data: Annotated[DeviceForm, URLENCODED]) -> Template:
        user = signed_in_user(request)
        try:
            await reauthenticate(request, user, data.password)
        except AuthenticationError as exc:
            return await self._page(request, status_code=400, error=reauthentication_error(exc, user.locale))
        try:
            created = await services_from(request).app_passwords.create(user.id, data.name)
        except ValidationError as exc:
            return await self._page(request, status_code=400, error=translate(str(exc), user.locale))
        return await self._page(request, created=created)

    @post("/{password_id:int}/revoke")
    async def revoke(self, request: Request[Any, Any, Any], password_id: FromPath[int]) -> Template:
        user = signed_in_user(request)
        try:
            await services_from(request).app_passwords.revoke(user.id, password_id)
        except NotFoundError:
            raise NotFoundException() from None
        return await self._page(request, notice="The device can no longer sign in.")
