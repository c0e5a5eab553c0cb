"""A minimal ASGI toolkit for the fake provider servers: request, response, router.

Hand-written rather than Litestar so that every byte a fake answers with — status, headers, the
provider's error JSON, streamed bodies — is the provider's documented shape and never a framework
default (Litestar answers unknown routes and bad input with its own JSON).

A fake subclasses `AsgiApp`, registers `(method, pattern, handler)` routes (`{name}` captures one
path segment) and overrides `not_found`/`method_not_allowed`/`internal_error` to speak its
provider's error format. Handlers are `async def handler(request) -> Response` and may raise
`HttpError(response)` anywhere to answer early.
"""

from __future__ import annotations

import asyncio
import json
import re
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


@dataclass
class Request:
    """One HTTP request, body already read. Header names are lower case; `params` are path captures."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    scheme: str
    host: str
    receive: Receive
    params: dict[str, str] = field(default_factory=dict)

    @property
    def base_url(self) -> str:
        return f"{self.scheme}://{self.host}"

    def arg(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[0] if values else default

    def args(self, name: str) -> list[str]:
        return list(self.query.get(name, []))

    def header(self, name: str, default: str | None = None) -> str | None:
        return self.headers.get(name.lower(), default)

    def json(self) -> Any:
        """The JSON body; raises `ValueError` for an empty or malformed one."""
        if not self.body:
            raise ValueError("empty body")
        return json.loads(self.body)

    def form(self) -> dict[str, str]:
        """An `application/x-www-form-urlencoded` body, first value per key."""
        parsed = parse_qs(self.body.decode("utf-8", "replace"), keep_blank_values=True)
        return {key: values[0] for key, values in parsed.items()}

    async def wait_disconnect(self, timeout: float | None = None) -> bool:
        """Wait until the client hangs up (True) or `timeout` passes (False)."""
        try:
            while True:
                message = await asyncio.wait_for(self.receive(), timeout)
                if message.get("type") == "http.disconnect":
                    return True
        except TimeoutError:
            return False


@dataclass
class Response:
    """A complete response, or a streamed one when `stream` is set (then `body` is ignored)."""

    status: int = 200
    body: bytes = b""
    headers: list[tuple[str, str]] = field(default_factory=list)
    stream: AsyncIterator[bytes] | None = None

    def with_headers(self, headers: Iterable[tuple[str, str]]) -> Response:
        self.headers.extend(headers)
        return self


def json_response(data: Any, status: int = 200, headers: Iterable[tuple[str, str]] = ()) -> Response:
    body = json.dumps(data, ensure_ascii=False).encode()
    return Response(status, body, [("content-type", "application/json; charset=UTF-8"), *headers])


def empty_response(status: int = 204, headers: Iterable[tuple[str, str]] = ()) -> Response:
    return Response(status, b"", list(headers))


class HttpError(Exception):
    """Raised by a handler (or a helper it calls) to answer with `response` right away."""

    def __init__(self, response: Response) -> None:
        super().__init__(response.status)
        self.response = response


Handler = Callable[[Request], Awaitable[Response]]


@dataclass
class _Route:
    method: str
    regex: re.Pattern[str]
    handler: Handler


class Router:
    """Routes by method and path pattern; `{name}` captures one segment, `{name:path}` the rest."""

    def __init__(self, *, case_insensitive: bool = False) -> None:
        self._routes: list[_Route] = []
        self._flags = re.IGNORECASE if case_insensitive else 0

    def add(self, method: str, pattern: str, handler: Handler) -> None:
        regex = ""
        for part in re.split(r"(\{[a-zA-Z_]+(?::path)?\})", pattern):
            if part.startswith("{") and part.endswith("}"):
                name, _, kind = part[1:-1].partition(":")
                regex += f"(?P<{name}>.+)" if kind == "path" else f"(?P<{name}>[^/]+)"
            else:
                regex += re.escape(part)
        self._routes.append(_Route(method.upper(), re.compile(f"^{regex}$", self._flags), handler))

    def match(self, method: str, path: str) -> tuple[Handler, dict[str, str]] | bool:
        """The handler and captures, or False when nothing matches, True when only the method is wrong."""
        path_matched = False
        for route in self._routes:
            found = route.regex.match(path)
            if found is None:
                continue
            if route.method == method:
                return route.handler, found.groupdict()
            path_matched = True
        return path_matched


class AsgiApp:
    """Base class of the fakes: an ASGI callable that dispatches through `self.router`."""

    def __init__(self, *, case_insensitive_paths: bool = False) -> None:
        self.router = Router(case_insensitive=case_insensitive_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":  # websockets are no part of any provider API we fake
            return
        request = await self._read_request(scope, receive)
        try:
            response = await self.dispatch(request)
        except HttpError as error:
            response = error.response
        except Exception:
            response = self.internal_error(request, traceback.format_exc())
        await self._send(send, response, head_only=request.method == "HEAD")

    async def dispatch(self, request: Request) -> Response:
        matched = self.router.match(request.method, request.path)
        if matched is False:
            return self.not_found(request)
        if matched is True:
            return self.method_not_allowed(request)
        assert not isinstance(matched, bool)
        handler, params = matched
        request.params = params
        return await handler(request)

    def not_found(self, request: Request) -> Response:
        return json_response({"error": f"no route for {request.method} {request.path}"}, 404)

    def method_not_allowed(self, request: Request) -> Response:
        return json_response({"error": f"{request.method} not allowed on {request.path}"}, 405)

    def internal_error(self, request: Request, details: str) -> Response:
        return json_response({"error": "fake server crashed", "traceback": details}, 500)

    @staticmethod
    async def _lifespan(receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    @staticmethod
    async def _read_request(scope: Scope, receive: Receive) -> Request:
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        server = scope.get("server") or ("127.0.0.1", 80)
        host = headers.get("host") or f"{server[0]}:{server[1]}"
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        return Request(
            method=scope["method"].upper(), path=scope["path"], query=query, headers=headers,
            body=b"".join(chunks), scheme=scope.get("scheme", "http"), host=host, receive=receive,
        )

    @staticmethod
    async def _send(send: Send, response: Response, *, head_only: bool) -> None:
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.headers]
        if response.stream is None and response.status not in (204, 304):
            headers.append((b"content-length", str(len(response.body)).encode()))
        await send({"type": "http.response.start", "status": response.status, "headers": headers})
        if response.stream is None or head_only:
            await send({"type": "http.response.body", "body": b"" if head_only else response.body})
            return
        async for chunk in response.stream:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
