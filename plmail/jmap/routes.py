"""HTTP endpoints of the JMAP server: session, API, blobs and push.

Every endpoint authenticates with an app password on each request; the session cookie is never
consulted here (the cookie and CSRF middlewares skip these paths), so a browser tab cannot be
tricked into acting as a JMAP client.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

from litestar import Request, Response, get, post
from litestar.exceptions import HTTPException
from litestar.exceptions.http_exceptions import RequestEntityTooLarge
from litestar.params import FromPath, FromQuery
from litestar.response import Redirect
from litestar.response.sse import ServerSentEvent, ServerSentEventMessage

from plmail.domain.errors import LimitError, NotFoundError
from plmail.jmap.api import ApiProcessor, parse_request
from plmail.jmap.auth import authenticate
from plmail.jmap.capabilities import LIMITS
from plmail.jmap.errors import RequestError
from plmail.jmap.methods import build_registry
from plmail.jmap.push import StreamOptions, state_stream
from plmail.jmap.session import build_session
from plmail.jmap.websocket import websocket_route
from plmail.services import services_from

_INLINE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp"})
_MEDIA_TYPE = re.compile(r"^[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*$")
_SAFE_HEADERS = {"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "default-src 'none'; sandbox",
                 "Cache-Control": "private, max-age=86400"}


# The process's method table and its per-user concurrency limit: JMAP's own machinery, not a service.
API = ApiProcessor(build_registry())

def _problem(request: Request[Any, Any, Any], exc: RequestError) -> Response[Any]:
    return Response(exc.problem(), status_code=exc.status, media_type="application/problem+json",
                    headers=exc.headers)


def _http_problem(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    return _problem(request, RequestError("about:blank", exc.detail, status=exc.status_code))


def _not_found(request: Request[Any, Any, Any], exc: NotFoundError) -> Response[Any]:
    return _problem(request, RequestError("about:blank", str(exc), status=404))


def _limit(request: Request[Any, Any, Any], exc: LimitError) -> Response[Any]:
    if exc.limit == "overQuota":  # the user's pending uploads are full: 413, as for an upload too large
        return _problem(request, RequestError("overQuota", str(exc), status=413))
    return _problem(request, RequestError("limit", str(exc), limit=exc.limit))


_HANDLERS: dict[Any, Any] = {RequestError: _problem, NotFoundError: _not_found, LimitError: _limit,
                             HTTPException: _http_problem}


@get("/.well-known/jmap", include_in_schema=False, exception_handlers=_HANDLERS)
async def well_known() -> Redirect:
    return Redirect("/jmap/session", status_code=307)


@get("/jmap/session", exception_handlers=_HANDLERS)
async def session(request: Request[Any, Any, Any]) -> Response[Any]:
    principal = await authenticate(request)
    session_object = build_session(principal, str(request.base_url),
                                   vapid_public_key=services_from(request).vapid.public_key)
    return Response(session_object, headers={"Cache-Control": "no-store"})


@post("/jmap/api", request_max_body_size=LIMITS.max_size_request, status_code=200, exception_handlers=_HANDLERS)
async def api(request: Request[Any, Any, Any]) -> Response[Any]:
    principal = await authenticate(request)
    try:
        body = await request.body()
    except RequestEntityTooLarge:
        raise RequestError("limit", f"The request is larger than {LIMITS.max_size_request} bytes.",
                           limit="maxSizeRequest") from None
    parsed = parse_request(body, request.headers.get("content-type"))
    async with API.slot(principal):
        result = await API.process(services_from(request), principal, parsed, base_url=str(request.base_url))
    return Response(result, headers={"Cache-Control": "no-store"})


@get("/jmap/download/{account_id:str}/{blob_id:str}/{name:str}", exception_handlers=_HANDLERS)
async def download(request: Request[Any, Any, Any], account_id: FromPath[str], blob_id: FromPath[str],
                   name: FromPath[str], accept: FromQuery[str | None] = None) -> Response[bytes]:
    principal = await authenticate(request)
    scope = principal.scope(account_id)
    if scope is None:
        raise NotFoundError("No such blob.")
    blob = await services_from(request).downloads.download(principal.user_id, scope, blob_id)
    wanted = (accept or "").strip().lower()
    stored = blob.content_type.split(";")[0].strip().lower()
    media = wanted if _MEDIA_TYPE.match(wanted) else stored
    # The client names the type (RFC 8620 §6.2); the stored parameters (a charset) only fit the stored type.
    content_type = blob.content_type if media == stored else media
    if not _MEDIA_TYPE.match(media):
        media = content_type = "application/octet-stream"
    # Only images are shown in a browser; anything else downloads, so hostile HTML or SVG never runs here.
    inline = media in _INLINE_TYPES
    disposition = f"{'inline' if inline else 'attachment'}; filename*=UTF-8''{quote(name, safe='')}"
    return Response(blob.data, media_type=content_type,
                    headers=_SAFE_HEADERS | {"Content-Disposition": disposition})


@post("/jmap/upload/{account_id:str}", request_max_body_size=LIMITS.max_size_upload, status_code=201,
      exception_handlers=_HANDLERS)
async def upload(request: Request[Any, Any, Any], account_id: FromPath[str]) -> Response[Any]:
    principal = await authenticate(request)
    scope = principal.scope(account_id)
    if scope is None:
        raise RequestError("about:blank", f"No account {account_id!r} is available to you.", status=404)
    downloads = services_from(request).downloads
    content_type = (request.headers.get("content-type") or "application/octet-stream").split(";")[0].strip().lower()
    if not _MEDIA_TYPE.match(content_type):
        content_type = "application/octet-stream"
    async with downloads.upload_slot(principal.user_id):
        try:
            data = await request.body()
        except RequestEntityTooLarge:
            raise RequestError("limit", f"Uploads are limited to {LIMITS.max_size_upload} bytes.", status=413,
                               limit="maxSizeUpload") from None
        stored = await downloads.upload(principal.user_id, scope, data, content_type)
    return Response({"accountId": account_id, "blobId": f"u-{stored.sha256}", "type": stored.content_type,
                     "size": stored.size}, status_code=201)


@get("/jmap/eventsource", exception_handlers=_HANDLERS)
async def eventsource(request: Request[Any, Any, Any], types: FromQuery[str | None] = None,
                      closeafter: FromQuery[str | None] = None, ping: FromQuery[str | None] = None
                      ) -> ServerSentEvent:
    principal = await authenticate(request)
    services = services_from(request)
    options = StreamOptions.parse(types, closeafter, ping)
    events: AsyncIterator[ServerSentEventMessage] = state_stream(
        services.change_feed, services.changes, principal, options, request.headers.get("last-event-id"),
        lambda: services.app_passwords.still_valid(principal))
    return ServerSentEvent(events, headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


# Full paths on every handler (no Router prefix): the cookie middleware's exclusion is matched against them.
JMAP_ROUTES = [well_known, session, api, download, upload, eventsource, websocket_route(API)]
