"""Settings → Devices: app passwords for JMAP clients, created (secret shown once), listed, revoked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Controller, Request, get, post
from litestar.exceptions import NotFoundException
from litestar.params import FromPath
from litestar.response import Response, Template

from plmail.domain.errors import AuthenticationError, NotFoundError, ValidationError
from plmail.services import services_from
from plmail.users.phone_setup import PROFILE_TYPE, android_setup, apple_profile
from plmail.web.auth import reauthenticate, reauthentication_error
from plmail.web.controllers.forms import URLENCODED
from plmail.web.i18n import translate
from plmail.web.pages import render, signed_in_user


@dataclass(frozen=True)
class DeviceForm:
    name: str = ""
    password: str = ""


@dataclass(frozen=True)
class ProfileForm:
    secret: str = ""  # the app password just shown, which the profile carries to the phone
    device: str = ""


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
        user_email = user.email
        phone = android_setup(str(request.base_url), user_email, created.token)
        return await self._page(request, created=created, phone=phone)

    @post("/apple-profile", status_code=200)
    async def apple_profile(self, request: Request[Any, Any, Any], data: Annotated[ProfileForm, URLENCODED]
                            ) -> Response[bytes]:
        """The configuration profile for an app password just created: the phone installs its calendar and
        contacts accounts from it. Only the user's own live app password is put in one."""
        user = signed_in_user(request)
        if not await services_from(request).app_passwords.belongs_to(user.id, data.secret):
            raise NotFoundException()
        profile = apple_profile(str(request.base_url), email=user.email, user_id=user.id, secret=data.secret.strip(),
                                device=" ".join(data.device.split())[:100] or "Phone")
        return Response(profile, media_type=PROFILE_TYPE, headers={
            "Content-Disposition": 'attachment; filename="plmail.mobileconfig"', "Cache-Control": "no-store"})

    @post("/{password_id:int}/revoke")
    async def revoke(self, request: Request[Any, Any, Any], password_id: FromPath[int]) -> Template:
        user = signed_in_user(request)
        try:
            await services_from(request).app_passwords.revoke(user.id, password_id)
        except NotFoundError:
            raise NotFoundException() from None
        return await self._page(request, notice="The device can no longer sign in.")
