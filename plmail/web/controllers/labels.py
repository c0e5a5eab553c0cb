"""Label management: create, rename, colour, nest, hide, delete (the mail stays)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Controller, Request, get, post
from litestar.params import FromPath
from litestar.response import Redirect, Template

from plmail.domain.errors import NotFoundError, ValidationError
from plmail.mail.labels import COLOURS
from plmail.services import services_from
from plmail.web.controllers.forms import URLENCODED
from plmail.web.pages import render, signed_in_user


@dataclass(frozen=True)
class LabelForm:
    name: str = ""
    parent_id: str = ""
    color: str = ""
    visible: str = ""


def _parent(value: str) -> int | None:
    return int(value) if value.strip().isdigit() else None


class LabelController(Controller):
    path = "/labels"

    async def _page(self, request: Request[Any, Any, Any], *, status_code: int = 200, error: str | None = None
                    ) -> Template:
        user = signed_in_user(request)
        labels = await services_from(request).labels.all_for_user(user.id)
        return await render(request, "labels.html", status_code=status_code, labels=labels, colours=COLOURS,
                            error=error)

    @get("/")
    async def page(self, request: Request[Any, Any, Any]) -> Template:
        return await self._page(request)

    @post("/")
    async def create(self, request: Request[Any, Any, Any], data: Annotated[LabelForm, URLENCODED]
                     ) -> Template | Redirect:
        user = signed_in_user(request)
        try:
            await services_from(request).labels.create(user.id, data.name, parent_id=_parent(data.parent_id),
                                                                 color=data.color or None)
        except (ValidationError, NotFoundError) as exc:
            return await self._page(request, status_code=400, error=str(exc))
        return Redirect("/labels")

    @post("/{label_id:int}")
    async def update(self, request: Request[Any, Any, Any], label_id: FromPath[int],
                     data: Annotated[LabelForm, URLENCODED]) -> Template | Redirect:
        user = signed_in_user(request)
        manager = services_from(request).labels
        label = await manager.owned(user.id, label_id)
        try:
            await manager.update(
                user.id, label_id,
                name=data.name if label is not None and label.role is None and data.name else None,
                color=data.color or None,
                parent_id=_parent(data.parent_id), move=label is not None and label.role is None,
                visible=data.visible == "on",
            )
        except (ValidationError, NotFoundError) as exc:
            return await self._page(request, status_code=400 if isinstance(exc, ValidationError) else 404,
                                    error=str(exc))
        return Redirect("/labels")

    @post("/{label_id:int}/delete")
    async def delete(self, request: Request[Any, Any, Any], label_id: FromPath[int]) -> Template | Redirect:
        user = signed_in_user(request)
        try:
            await services_from(request).labels.delete(user.id, label_id)
        except (ValidationError, NotFoundError) as exc:
            return await self._page(request, status_code=400 if isinstance(exc, ValidationError) else 404,
                                    error=str(exc))
        return Redirect("/labels")
