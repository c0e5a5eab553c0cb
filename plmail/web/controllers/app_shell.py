"""The installable web app: its manifest, its service worker (served from the root so that it controls every
page), the page it shows offline, and the list of the inbox's conversations it keeps for reading offline."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from litestar import Controller, Request, get
from litestar.response import Response, Template

from plmail.services import services_from
from plmail.web.i18n import translate
from plmail.web.pages import locale_for, render, signed_in_user

STATIC: Final = Path(__file__).resolve().parents[2] / "static"
THEME_COLOUR: Final = "#2457c5"
BACKGROUND_COLOUR: Final = "#f7f7f5"
# Issue 33: the service worker keeps the last 50 conversations of the inbox for reading offline.
OFFLINE_CONVERSATIONS: Final = 50
# The header the service worker sends when it copies a conversation for later: the copy is no reading of it, so it
# must not mark the conversation read.
OFFLINE_COPY_HEADER: Final = "x-plmail-offline-copy"


def manifest(locale: str) -> dict[str, Any]:
    """The Web App Manifest (W3C): what a browser needs to install plmail as an app of its own."""
    def _(text: str) -> str:
        return translate(text, locale)
    return {
        "id": "/",
        "name": "plmail",
        "short_name": "plmail",
        "description": _("Your mail, calendar and assistant on your own server"),
        "lang": locale,
        "start_url": "/",
        "scope": "/",
        "display": "standalone",
        "background_color": BACKGROUND_COLOUR,
        "theme_color": THEME_COLOUR,
        "icons": [
            {"src": "/static/icons/plmail-192.png", "sizes": "192x192", "type": "image/png", "purpose": "any"},
            {"src": "/static/icons/plmail-512.png", "sizes": "512x512", "type": "image/png", "purpose": "any"},
            {"src": "/static/icons/plmail-maskable-192.png", "sizes": "192x192", "type": "image/png",
             "purpose": "maskable"},
            {"src": "/static/icons/plmail-maskable-512.png", "sizes": "512x512", "type": "image/png",
             "purpose": "maskable"},
            {"src": "/static/icons/plmail.svg", "sizes": "any", "type": "image/svg+xml", "purpose": "any"},
        ],
        "shortcuts": [
            {"name": _("Compose"), "short_name": _("Compose"), "description": _("Write a new message"),
             "url": "/compose", "icons": [{"src": "/static/icons/compose-96.png", "sizes": "96x96",
                                           "type": "image/png"}]},
            {"name": _("Calendar"), "short_name": _("Calendar"), "description": _("Open your calendar"),
             "url": "/calendar", "icons": [{"src": "/static/icons/calendar-96.png", "sizes": "96x96",
                                            "type": "image/png"}]},
        ],
    }


class AppShellController(Controller):
    @get("/manifest.webmanifest")
    async def manifest(self, request: Request[Any, Any, Any]) -> Response[dict[str, Any]]:
        """Fetched without cookies (a manifest link is anonymous), so in the language the browser asks for."""
        return Response(manifest(locale_for(request).value), media_type="application/manifest+json",
                        headers={"Cache-Control": "no-cache"})

    @get("/sw.js")
    async def service_worker(self) -> Response[bytes]:
        """From the root, so its scope is every page; never cached by HTTP, so an update reaches the browser at its
        next check (the Service Workers spec caps that at a day anyway)."""
        return Response((STATIC / "sw.js").read_bytes(), media_type="text/javascript; charset=utf-8",
                        headers={"Service-Worker-Allowed": "/", "Cache-Control": "no-cache"})

    @get("/offline")
    async def offline(self, request: Request[Any, Any, Any]) -> Template:
        """What the service worker shows for a page it has no copy of while the server is out of reach."""
        return await render(request, "offline.html")

    @get("/offline/inbox.json")
    async def offline_inbox(self, request: Request[Any, Any, Any]) -> Response[dict[str, Any]]:
        """The conversations to keep for reading offline: the inbox's newest 50, each with a stamp that changes
        when the conversation does (so only those are fetched again)."""
        user = signed_in_user(request)
        reader = services_from(request).reader
        ids = await reader.view_thread_ids(user.id, "inbox", cap=OFFLINE_CONVERSATIONS)
        stamps = await reader.views.thread_stamps(user.id, ids)
        return Response({"conversations": [{"url": f"/thread/{i}", "stamp": stamps.get(i, "")} for i in ids]},
                        headers={"Cache-Control": "no-store"})
