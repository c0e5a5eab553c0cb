"""One DAV request as plain ASGI: its path (as the client sent it: a mount rewrites `scope["path"]`), headers, a
body read once and bounded before it is read (413), and the answer with the DAV header every response carries;
DavError is an answer given early."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from litestar import Request
from litestar.types import HTTPResponseBodyEvent, HTTPResponseStartEvent, Receive, Scope, Send

from plmail.dav.xml import error_body

MAX_BODY = 2 * 1024 * 1024  # a PUT's object (1 MB at most) or a multiget naming thousands of hrefs


class DavError(Exception):
    def __init__(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None,
                 content_type: str = "text/plain; charset=utf-8") -> None:
        super().__init__(status)
        self.status = status
        self.body = body
        self.headers = headers or {}
        self.content_type = content_type


def precondition(status: int, condition: str, namespace: str, message: str) -> DavError:
    return DavError(status, error_body(condition, namespace, message), content_type="application/xml; charset=utf-8")


class Exchange:
    """One request: who asked, for what path, with what body, and how to answer."""

    def __init__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.scope = scope
        self.receive = receive
        self.send = send
        self.request: Request[Any, Any, Any] = Request(scope, receive)
        self.method = str(scope.get("method", "GET")).upper()
        raw = scope.get("raw_path") or scope["path"].encode()
        self.path = unquote(raw.decode("latin-1").split("?", 1)[0])
        self.base_url = str(self.request.base_url)
        self._body: bytes | None = None

    def header(self, key: str) -> str | None:
        value = self.request.headers.get(key)
        return value if value is None else str(value)

    async def body(self) -> bytes:
        """The whole body, read once, never more than MAX_BODY of it."""
        if self._body is None:
            self._body = await self._read()
        return self._body

    async def _read(self) -> bytes:
        declared = self.header("content-length")
        if declared is not None and declared.isdigit() and int(declared) > MAX_BODY:
            raise DavError(413, b"The request body is larger than 2 MB.")
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await self.receive()
            if message["type"] != "http.request":
                raise DavError(400, b"The client went away.")
            chunk = message["body"]
            size += len(chunk)
            if size > MAX_BODY:
                raise DavError(413, b"The request body is larger than 2 MB.")
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def answer(self, status: int, body: bytes = b"", *, content_type: str | None = None,
                     headers: dict[str, str] | None = None) -> None:
        head: list[tuple[bytes, bytes]] = [(b"content-length", str(len(body)).encode())]
        if content_type is not None:
            head.append((b"content-type", content_type.encode()))
        for key, value in (headers or {}).items():
            head.append((key.lower().encode(), value.encode()))
        head.append((b"dav", b"1, 3, calendar-access, addressbook"))
        start: HTTPResponseStartEvent = {"type": "http.response.start", "status": status, "headers": head}
        end: HTTPResponseBodyEvent = {"type": "http.response.body", "body": b"" if self.method == "HEAD" else body,
                                      "more_body": False}
        await self.send(start)
        await self.send(end)


def depth(exchange: Exchange, default: str) -> int:
    """0 or 1; infinity is served as 1, the deepest any collection here goes below itself."""
    value = (exchange.header("depth") or default).strip().lower()
    return 0 if value == "0" else 1
