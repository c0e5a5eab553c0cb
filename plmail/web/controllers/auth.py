"""First-run setup, sign-in (password, then a second-factor code when the user has one) and sign-out."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, get, post
from litestar.params import QueryParameter
from litestar.response import Redirect, Template

from plmail.domain.enums import Locale
from plmail.domain.errors import (
    AuthenticationError,
    LoginThrottledError,
    SecondFactorAttemptSpentError,
    SecondFactorLockedError,
    SetupAlreadyDoneError,
    ValidationError,
)
from plmail.services import services_from
from plmail.web.auth import (
    SESSION_COOKIE,
    browser_of,
    clear_session_cookie,
    drop_second_factor,
    hold_second_factor,
    pending_second_factor,
    safe_next,
    set_sign_in_cookies,
)
from plmail.web.controllers.forms import URLENCODED, CodeForm, LoginForm, SetupForm
from plmail.web.i18n import translate
from plmail.web.pages import clocktime, locale_for, render


def _throttled(exc: LoginThrottledError, locale: Locale) -> tuple[str, dict[str, str]]:
    message = translate("Too many failed sign-in attempts. Try again in {seconds} seconds.", locale,
                        seconds=exc.retry_after)
    return message, {"Retry-After": str(exc.retry_after)}


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
        result = await services.users.start_session(user, browser_of(request))
        return set_sign_in_cookies(Redirect("/"), result)  # type: ignore[return-value]

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
        locale = locale_for(request)
        form = LoginForm(email=data.email, next=safe_next(data.next), remember=data.remember)
        remember = data.remember == "on"
        try:
            result = await services.users.sign_in(data.email, data.password, browser_of(request), remember=remember)
        except LoginThrottledError as exc:
            message, headers = _throttled(exc, locale)
            return await render(request, "login.html", status_code=429, form=form, error=message, headers=headers)
        except AuthenticationError as exc:
            message = translate(str(exc), locale)
            return await render(request, "login.html", status_code=401, form=form, error=message)
        if result.session is None:
            hold_second_factor(request, result, remember=remember, next_path=form.next)
            return Redirect("/login/code")
        return set_sign_in_cookies(Redirect(form.next), result)  # type: ignore[return-value]

    @get("/login/code")
    async def code_page(self, request: Request[Any, Any, Any]) -> Template | Redirect:
        if pending_second_factor(request) is None:
            return Redirect("/login")
        return await render(request, "login_code.html")

    @post("/login/code")
    async def code(self, request: Request[Any, Any, Any], data: Annotated[CodeForm, URLENCODED]
                   ) -> Template | Redirect:
        pending = pending_second_factor(request)
        if pending is None:
            return Redirect("/login")
        services = services_from(request)
        locale = locale_for(request)
        try:
            result = await services.users.sign_in_with_code(
                pending["uid"], data.code, browser_of(request), code_attempt=pending["attempt"],
                remember=bool(pending.get("remember")), remember_device=data.remember_device == "on")
        except SecondFactorLockedError as exc:
            user = await services.users.by_id(pending["uid"])
            message = translate("Too many wrong codes for this account. Try again after {time}.", locale,
                                time=clocktime(exc.until, user))
            return await render(request, "login_code.html", status_code=429, error=message,
                                headers={"Retry-After": str(exc.retry_after)})
        except SecondFactorAttemptSpentError as exc:
            drop_second_factor(request)
            form = LoginForm(email=(await services.users.by_id(pending["uid"])).email,
                             next=safe_next(pending.get("next")))
            return await render(request, "login.html", status_code=401, form=form, error=translate(str(exc), locale))
        except LoginThrottledError as exc:
            message, headers = _throttled(exc, locale)
            return await render(request, "login_code.html", status_code=429, error=message, headers=headers)
        except AuthenticationError as exc:
            return await render(request, "login_code.html", status_code=401, error=translate(str(exc), locale))
        drop_second_factor(request)
        return set_sign_in_cookies(Redirect(safe_next(pending.get("next"))), result)  # type: ignore[return-value]

    @post("/logout")
    async def logout(self, request: Request[Any, Any, Any]) -> Redirect:
        """Deletes the session row: a copy of the cookie made before stops working too."""
        await services_from(request).sessions.end(request.cookies.get(SESSION_COOKIE))
        request.clear_session()
        # This browser's offline copies of the mailbox and its service worker (with its push subscription) go too:
        # after signing out, nothing of the mail stays on the device.
        leave = Redirect("/login", headers={"Clear-Site-Data": '"cache", "storage"'})
        return clear_session_cookie(leave)  # type: ignore[return-value]
