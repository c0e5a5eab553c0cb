"""The inbox and label views."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, get
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, FromQuery
from litestar.response import Template

from plmail.web.auth import services_from
from plmail.web.pages import render, signed_in_user


class MailController(Controller):
    @get("/")
    async def inbox(self, request: Request[Any, Any, Any], tab: FromQuery[str] = "primary") -> Template:
        return await render(request, "inbox.html", tab=tab, threads=[], heading="Inbox")

    @get("/label/{label_id:int}")
    async def label(self, request: Request[Any, Any, Any], label_id: FromPath[int]) -> Template:
        user = signed_in_user(request)
        label = await services_from(request).labels.owned(user.id, label_id)
        if label is None:
            raise NotFoundException()
        return await render(request, "label.html", label=label, threads=[])
