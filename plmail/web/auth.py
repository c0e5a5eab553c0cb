"""Sessions for the web UI: who is signed in, and the gate every page except a few passes through.

The session cookie names a row on the server (users/sessions.py); signing out deletes the row. A second,
encrypted cookie (`plmail_flow`, Litestar's client-side session) carries only short-lived steps in between:
the OAuth state, and a sign-in waiting for its second-factor code.
"""

from __future__ import annotations

import dataclasses
import re
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote, urlsplit

from litestar import Request, Response
from litestar.connection import ASGIConnection
from litestar.datastructures import Cookie
from litestar.enums import ScopeType
from litestar.exceptions import PermissionDeniedException
from litestar.handlers.base import BaseRouteHandler
from litestar.middleware import ASGIMiddleware
from litestar.response.base import ASGIResponse
from litestar.response.redirect import ASGIRedirectResponse
from litestar.types import ASGIApp, Receive, Scope, Send

from plmail.domain.enums import Locale
from plmail.domain.errors import AuthenticationError, LoginThrottledError
from plmail.domain.models import User, WebSessionRow
from plmail.services import services_from
from plmail.users.service import Browser, SignInResult
from plmail.users.sessions import DEVICE_SECONDS, SessionService
from plmail.web.i18n import translate

if TYPE_CHECKING:
    pass

SESSION_COOKIE: Final = "plmail_session"
DEVICE_COOKIE: Final = "plmail_device"
FLOW_COOKIE: Final = "plmail_flow"
PENDING_SECOND_FACTOR: Final = "second_factor"
PENDING_SECONDS: Final = 300  # how long a right password waits for its code

# Pages reachable without a session: sign-in, first-run setup, health checks, assets, JMAP, which
# authenticates each request with an app password instead of a cookie, and calendar feeds and a sending
# address's confirmation link, whose URLs carry a long random token instead.
PUBLIC_PATHS: Final = ("^/login", "^/setup", "^/healthz", "^/metrics", "^/static/", "^/jmap", "^/.well-known/",
                       "^/favicon.ico", "^/calendar/feed/", "^/identities/confirm/", "^/provider-push/",
                       "^/sw.js$", "^/manifest.webmanifest$", "^/offline$", "^/push/action$")
_PUBLIC = re.compile("|".join(PUBLIC_PATHS))
AUTHENTICATES_ITSELF: Final = "authenticates_itself"  # a route handler's opt: no session asked for


def is_public(scope: Scope) -> bool:
    """Judged on the request's path: Litestar 3 matches `exclude_path_pattern` against the route's template
    instead, and would then ask for a sign-in on /calendar/feed/<token>.ics and /static/<file>."""
    return _PUBLIC.search(scope["path"]) is not None


def client_address(connection: ASGIConnection[Any, Any, Any, Any]) -> str:
    """The client's address: the peer, or what a trusted proxy said it was (web/proxy.py rewrote the scope)."""
    return connection.client.host if connection.client else "unknown"


def browser_of(request: Request[Any, Any, Any]) -> Browser:
    return Browser(client_address(request), request.headers.get("user-agent", ""),
                   request.cookies.get(DEVICE_COOKIE))


def current_session(request: Request[Any, Any, Any]) -> WebSessionRow | None:
    session = request.scope.get("auth")
    return session if isinstance(session, WebSessionRow) else None


def reauthentication_needed(request: Request[Any, Any, Any]) -> bool:
    """Whether a change to how this user signs in must ask for the password (not given again in ten minutes)."""
    return not SessionService.recently_reauthenticated(current_session(request))


async def reauthenticate(request: Request[Any, Any, Any], user: User, password: str) -> None:
    """The current password (or a recent one on this session) before a sign-in change; raises
    AuthenticationError (LoginThrottledError, ReauthenticationRequiredError) otherwise."""
    session = current_session(request)
    await services_from(request).users.reauthenticate(user, session, password, browser_of(request))
    if session is not None and password:
        request.scope["auth"] = dataclasses.replace(session, reauthenticated_at=datetime.now(UTC))


def reauthentication_error(exc: AuthenticationError, locale: Locale | str) -> str:
    if isinstance(exc, LoginThrottledError):
        return translate("Too many failed sign-in attempts. Try again in {seconds} seconds.", locale,
                         seconds=exc.retry_after)
    return translate(str(exc), locale)


def set_sign_in_cookies(response: Response[Any], result: SignInResult) -> Response[Any]:
    """The session cookie (persistent only with "remember me") and, for a browser new to this user, the device
    cookie. `Secure` is added by web/security.py whenever the request came over HTTPS."""
    if result.session is not None:
        response.set_cookie(Cookie(key=SESSION_COOKIE, value=result.session.token, max_age=result.session.max_age,
                                   httponly=True, samesite="lax", path="/"))
    if result.device_token is not None:
        response.set_cookie(Cookie(key=DEVICE_COOKIE, value=result.device_token, max_age=DEVICE_SECONDS,
                                   httponly=True, samesite="strict", path="/"))
    return response


def clear_session_cookie(response: Response[Any]) -> Response[Any]:
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


def hold_second_factor(request: Request[Any, Any, Any], result: SignInResult, *, remember: bool, next_path: str
                       ) -> None:
    """Remember, for a few minutes, that this browser gave the right password and now owes a code. The wrong codes
    of this attempt are counted on the server under `attempt` (a replayed cookie cannot start the count over)."""
    flow = dict(request.session or {})
    flow[PENDING_SECOND_FACTOR] = {"uid": result.user.id, "at": int(time.time()), "remember": remember,
                                   "next": next_path, "attempt": result.code_attempt}
    request.set_session(flow)


def pending_second_factor(request: Request[Any, Any, Any]) -> dict[str, Any] | None:
    pending = (request.session or {}).get(PENDING_SECOND_FACTOR)
    if not isinstance(pending, dict) or not isinstance(pending.get("uid"), int):
        return None
    if not isinstance(pending.get("attempt"), str) or not pending["attempt"]:
        return None
    if not isinstance(pending.get("at"), int) or time.time() - pending["at"] > PENDING_SECONDS:
        return None
    return pending


def drop_second_factor(request: Request[Any, Any, Any]) -> None:
    flow = dict(request.session or {})
    if flow.pop(PENDING_SECOND_FACTOR, None) is not None:
        request.set_session(flow)


def safe_next(target: str | None) -> str:
    """Only same-site paths: an absolute or protocol-relative URL would make sign-in an open redirect."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


class RequireSignIn(ASGIMiddleware):
    scopes = (ScopeType.HTTP,)
    should_bypass_for_scope = staticmethod(is_public)
    # A mounted app (CalDAV at /dav) sees scope["path"] rewritten below its mount, so it says so by this opt.
    exclude_opt_key = AUTHENTICATES_ITSELF

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        request: Request[Any, Any, Any] = Request(scope)
        services = services_from(request)
        active = await services.sessions.resume(
            request.cookies.get(SESSION_COOKIE), user_agent=request.headers.get("user-agent", ""),
            client=client_address(request))
        if active is None:
            if await services.users.setup_needed():
                target = "/setup"
            else:
                target = "/login"
                here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
                if request.headers.get("hx-request") == "true":
                    # A fragment URL is no place to land; come back to the page that asked for it.
                    here = urlsplit(request.headers.get("hx-current-url", "/")).path or "/"
                if request.method == "GET" and here != "/":
                    target += "?next=" + quote(safe_next(here))
            response: ASGIResponse
            if request.headers.get("hx-request") == "true":
                # htmx follows HX-Redirect with a full page load; a 303 would be swapped into a fragment.
                response = ASGIResponse(status_code=200, headers={"HX-Redirect": target})
            else:
                response = ASGIRedirectResponse(path=target, status_code=303)
            await response(scope, receive, send)
            return
        scope["user"] = active.user
        scope["auth"] = active.session
        await next_app(scope, receive, send)


def admin_only(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    user = connection.scope.get("user")
    if not isinstance(user, User) or not user.is_admin:
        raise PermissionDeniedException("Only administrators can open this page.")
