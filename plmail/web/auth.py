"""Sessions for the web UI: who is signed in, and the gate every page except a few passes through."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote, urlsplit

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.enums import ScopeType
from litestar.exceptions import PermissionDeniedException
from litestar.handlers.base import BaseRouteHandler
from litestar.middleware import ASGIMiddleware
from litestar.response.base import ASGIResponse
from litestar.response.redirect import ASGIRedirectResponse
from litestar.types import ASGIApp, Receive, Scope, Send

from plmail.domain.models import User

if TYPE_CHECKING:
    from plmail.services import Services

SESSION_USER = "uid"
SESSION_EPOCH = "ep"

# Pages reachable without a session: sign-in, first-run setup, health checks, assets, JMAP, which
# authenticates each request with an app password instead of a cookie, and calendar feeds, whose URL
# carries a long random token instead.
PUBLIC_PATHS: Final = ("^/login", "^/setup", "^/healthz", "^/metrics", "^/static/", "^/jmap", "^/.well-known/",
                       "^/favicon.ico", "^/calendar/feed/")


def services_from(connection: ASGIConnection[Any, Any, Any, Any]) -> Services:
    return connection.app.state.services  # type: ignore[no-any-return]


def start_session(request: Request[Any, Any, Any], user: User) -> None:
    request.set_session({SESSION_USER: user.id, SESSION_EPOCH: user.session_epoch})


def safe_next(target: str | None) -> str:
    """Only same-site paths: an absolute or protocol-relative URL would make sign-in an open redirect."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


class RequireSignIn(ASGIMiddleware):
    scopes = (ScopeType.HTTP,)
    exclude_path_pattern = PUBLIC_PATHS

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        request: Request[Any, Any, Any] = Request(scope)
        services = services_from(request)
        raw_session = scope.get("session")
        session: dict[str, Any] = raw_session if isinstance(raw_session, dict) else {}
        user: User | None = None
        uid, epoch = session.get(SESSION_USER), session.get(SESSION_EPOCH)
        if isinstance(uid, int) and isinstance(epoch, int):
            user = await services.users.session_user(uid, epoch)
        if user is None:
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
        scope["user"] = user
        await next_app(scope, receive, send)


def admin_only(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    user = connection.scope.get("user")
    if not isinstance(user, User) or not user.is_admin:
        raise PermissionDeniedException("Only administrators can open this page.")
