"""First-run setup, sign-in and sign-out."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, get, post
from litestar.params import QueryParameter
from litestar.response import Redirect, Template

from plmail.domain.enums import Locale
from plmail.domain.errors import (
    AuthenticationError,
    LoginThrottledError,
    SetupAlreadyDoneError,
    ValidationError,
)
from plmail.web.auth import safe_next, services_from, start_session
from plmail.web.controllers.forms import URLENCODED, LoginForm, SetupForm
from plmail.web.i18n import translate
from plmail.web.pages import locale_for, render


class AuthController(Controller):
    @get("/setup")
    async def setup_page(self, request: Request[Any, Any, Any]) -> Template | Redirect:
        if not await services_from(request).users.setup_needed():
            return Redirect("/login")
        return await render(request, "setup.html", form=SetupForm(locale=locale_for(request).value))

    @post("/setup")
    async def setup(
        self, request: Request[Any, Any, Any], data: Annotated[SetupForm, URLENCODED]
    ) -> Template | Redirect:
        services = services_from(request)
        try:
            user = await services.users.create_user(
                data.email,
                data.password,
                display_name=data.display_name,
                locale=Locale(data.locale) if data.locale in ("en", "de") else Locale.EN,
                time_zone=data.time_zone or "UTC",
                first_run=True,
            )
        except SetupAlreadyDoneError:
            return Redirect("/login")
        except ValidationError as exc:
            return await render(request, "setup.html", status_code=400, form=data, error=str(exc))
        start_session(request, user)
        return Redirect("/")

    @get("/login")
    async def login_page(
        self, request: Request[Any, Any, Any], next_: Annotated[str, QueryParameter(name="next")] = "/"
    ) -> Template | Redirect:
        if await services_from(request).users.setup_needed():
            return Redirect("/setup")
        return await render(request, "login.html", form=LoginForm(next=safe_next(next_)))

    @post("/login")
    async def login(
        self, request: Request[Any, Any, Any], data: Annotated[LoginForm, URLENCODED]
    ) -> Template | Redirect:
        services = services_from(request)
        client = request.client.host if request.client else "unknown"
        locale = locale_for(request)
        form = LoginForm(email=data.email, next=safe_next(data.next))
        try:
            user = await services.users.authenticate(data.email, data.password, client=client)
        except LoginThrottledError as exc:
            message = translate(
                "Too many failed sign-in attempts. Try again in {seconds} seconds.", locale, seconds=exc.retry_after
            )
            return await render(request, "login.html", status_code=429, form=form, error=message,
                                headers={"Retry-After": str(exc.retry_after)})
        except AuthenticationError:
            message = translate("The email address or password is wrong.", locale)
            return await render(request, "login.html", status_code=401, form=form, error=message)
        start_session(request, user)
        return Redirect(safe_next(data.next))

    @post("/logout")
    async def logout(self, request: Request[Any, Any, Any]) -> Redirect:
        request.clear_session()
        return Redirect("/login")
