"""/_styleguide: every component of the design system and its tokens, in light and dark, for administrators."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, get
from litestar.response import Template

from plmail.web.auth import admin_only
from plmail.web.pages import render

COLOUR_TOKENS = (
    "bg", "surface", "surface-2", "text", "muted", "border", "border-strong", "primary", "primary-text",
    "primary-soft", "danger", "danger-text", "danger-soft", "success", "success-soft", "warning", "warning-soft",
    "focus", "inverse-bg", "inverse-text", "star",
)
SPACES = tuple(range(1, 9))
RADII = ("s", "m", "l", "full")
TYPE_SIZES = ("xs", "s", "m", "l", "xl", "2xl")
SHADOWS = (1, 2, 3)


class StyleguideController(Controller):
    path = "/_styleguide"
    guards = [admin_only]  # noqa: RUF012  (Litestar reads this as a plain class attribute)

    @get("/")
    async def page(self, request: Request[Any, Any, Any]) -> Template:
        return await render(request, "styleguide.html", colour_tokens=COLOUR_TOKENS, spaces=SPACES, radii=RADII,
                            type_sizes=TYPE_SIZES, shadows=SHADOWS)
