"""Settings → Signed-in browsers: every session of the user, where and when it was last used; end one, or all."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, get, post
from litestar.exceptions import NotFoundException
from litestar.params import FromPath
from litestar.response import Redirect, Template

from plmail.domain.errors import NotFoundError
from plmail.services import services_from
from plmail.web.auth import clear_session_cookie, current_session
from plmail.web.pages import render, signed_in_user


class SessionsController(Controller):
    path = "/settings/sessions"

    async def _page(self, request: Request[Any, Any, Any], **context: Any) -> Template:
        user = signed_in_user(request)
        sessions = await services_from(request).sessions.active(user.id)
        here = current_session(request)
        return await render(request, "settings_sessions.html", sessions=sessions,
                            current_id=here.id if here else None, **context)

    @get("/")
    async def page(self, request: Request[Any, Any, Any]) -> Template:
        return await self._page(request)

    @post("/{session_id:int}/revoke")
    async def revoke(self, request: Request[Any, Any, Any], session_id: FromPath[int]) -> Template | Redirect:
        user = signed_in_user(request)
        try:
            await services_from(request).sessions.revoke(user.id, session_id)
        except NotFoundError:
            raise NotFoundException() from None
        here = current_session(request)
        if here is not None and here.id == session_id:
            return clear_session_cookie(Redirect("/login"))  # type: ignore[return-value]
        return await self._page(request, notice="That browser is signed out.")

    @post("/end-all")
    async def end_all(self, request: Request[Any, Any, Any]) -> Redirect:
        """Sign out everywhere, this browser included."""
        await services_from(request).sessions.end_all(signed_in_user(request).id)
        request.clear_session()
        return clear_session_cookie(Redirect("/login"))  # type: ignore[return-value]
