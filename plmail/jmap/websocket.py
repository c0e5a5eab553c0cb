"""JMAP over WebSocket (RFC 8887) at the session's `urn:ietf:params:jmap:websocket` URL.

The upgrade is authenticated like the API (an app password as Bearer or Basic; a refusal is the HTTP 401 it
would be on the API, where the server can still answer in HTTP) and must ask for the "jmap" subprotocol.
Over the socket a client sends Request objects (answered by Response or RequestError objects carrying its
id), and WebSocketPushEnable / WebSocketPushDisable for StateChange objects: the same ones EventSource
sends, with a pushState a client may hand back to learn only what moved while it was away. The app password
is checked again for every request, so revoking it ends what the socket can do.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

from litestar import WebSocket, websocket
from litestar.exceptions import WebSocketDisconnect
from litestar.types.asgi_types import WebSocketResponseBodyEvent, WebSocketResponseStartEvent

from plmail.domain.models import Principal
from plmail.jmap.api import ApiProcessor, check_request
from plmail.jmap.auth import authenticate
from plmail.jmap.capabilities import LIMITS
from plmail.jmap.errors import RequestError
from plmail.jmap.push import StateWatch, push_state, pushed_types, state_change
from plmail.jmap.session import WEBSOCKET_PATH
from plmail.mail.change_feed import CLOSED
from plmail.services import services_from

log = logging.getLogger(__name__)

SUBPROTOCOL = "jmap"


async def _refuse(socket: WebSocket[Any, Any, Any], exc: RequestError) -> None:
    """Refuse the upgrade as HTTP (the ASGI denial-response extension); without it, close before accepting."""
    await socket.receive()  # websocket.connect
    if "websocket.http.response" in (socket.scope.get("extensions") or {}):
        body = json.dumps(exc.problem()).encode()
        headers: list[tuple[bytes, bytes]] = [
            (b"content-type", b"application/problem+json"), (b"content-length", str(len(body)).encode()),
            *((k.lower().encode(), v.encode()) for k, v in exc.headers.items())]
        start: WebSocketResponseStartEvent = {"type": "websocket.http.response.start", "status": exc.status,
                                              "headers": headers}
        await socket.send(start)
        ending: WebSocketResponseBodyEvent = {"type": "websocket.http.response.body", "body": body, "more_body": False}
        await socket.send(ending)
        return
    await socket.send({"type": "websocket.close", "code": 1008, "reason": exc.detail[:120]})


class JmapSocket:
    def __init__(self, socket: WebSocket[Any, Any, Any], api: ApiProcessor, principal: Principal) -> None:
        self.socket = socket
        self.api = api
        self.principal = principal
        self.services = services_from(socket)
        self.sending = asyncio.Lock()
        self.push: asyncio.Task[None] | None = None

    async def send(self, message: dict[str, Any]) -> None:
        async with self.sending:
            await self.socket.send_text(json.dumps(message))

    async def run(self) -> None:
        try:
            while True:
                text = await self.socket.receive_text()
                await self.handle(text)
        except WebSocketDisconnect:
            pass
        finally:
            await self.stop_push()

    async def handle(self, text: str) -> None:
        request_id: Any = None
        try:
            if len(text.encode("utf-8")) > LIMITS.max_size_request:
                raise RequestError("limit", f"A request is at most {LIMITS.max_size_request} bytes.",
                                   limit="maxSizeRequest")
            try:
                message = json.loads(text)
            except ValueError:
                raise RequestError("notJSON", "The message is not valid JSON.") from None
            if not isinstance(message, dict):
                raise RequestError("notRequest", "A message is a JSON object with an @type.")
            request_id = message.get("id")
            kind = message.get("@type")
            if kind == "Request":
                await self.request(message, request_id)
            elif kind == "WebSocketPushEnable":
                await self.start_push(message)
            elif kind == "WebSocketPushDisable":
                await self.stop_push()
            else:
                raise RequestError("notRequest", "@type is Request, WebSocketPushEnable or WebSocketPushDisable.")
        except RequestError as exc:
            await self.send({"@type": "RequestError", **({"requestId": request_id} if isinstance(request_id, str)
                                                          else {}), **exc.problem()})

    async def request(self, message: dict[str, Any], request_id: Any) -> None:
        # Each request is authorised again: a revoked app password stops working on an open socket too.
        self.principal = await authenticate(self.socket)
        parsed = check_request(message)
        async with self.api.slot(self.principal):
            base = str(self.socket.base_url)  # ws(s)://host/ → http(s)://host/, for links the server mails out
            result = await self.api.process(self.services, self.principal, parsed,
                                            base_url="http" + base[2:] if base.startswith("ws") else base)
        await self.send({"@type": "Response", **({"requestId": request_id} if isinstance(request_id, str) else {}),
                         **result})

    async def start_push(self, message: dict[str, Any]) -> None:
        types = message.get("dataTypes")
        if types is not None and (not isinstance(types, list) or not all(isinstance(t, str) for t in types)):
            raise RequestError("notRequest", "'dataTypes' is a list of type names or null.")
        last = message.get("pushState")
        await self.stop_push()
        principal, services = self.principal, self.services
        watch = StateWatch(services.change_feed, services.changes, principal, pushed_types(types),
                           lambda: services.app_passwords.still_valid(principal))
        watching: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.push = asyncio.create_task(self.pushing(watch, last if isinstance(last, str) else None, watching),
                                        name="jmap-websocket-push")
        # The next message is read only once the states are taken: a change the client makes after this message
        # (on any connection) is then pushed, never folded into the starting point.
        await asyncio.wait({self.push, watching}, return_when=asyncio.FIRST_COMPLETED)

    async def stop_push(self) -> None:
        if self.push is not None:
            self.push.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.push
            self.push = None

    async def pushing(self, watch: StateWatch, last: str | None, watching: asyncio.Future[None]) -> None:
        """StateChange objects as the states move; first, with a pushState from before, whatever moved since."""
        try:
            async with watch.feed.subscribe(watch.accounts) as queue:
                watch.sent = await watch.snapshot()
                watching.set_result(None)
                if last is not None and last != push_state(watch.sent) and watch.pairs:
                    await self.send({**state_change(watch.sent), "pushState": push_state(watch.sent)})
                while True:
                    items = [await queue.get()]
                    while not queue.empty():
                        items.append(queue.get_nowait())
                    if CLOSED in items:
                        return
                    if await watch.revoked():  # the user was disabled or the app password revoked
                        await self.socket.close(code=1008, reason="The app password no longer opens this account.")
                        return
                    moved = await watch.moved()
                    if moved:
                        await self.send({**state_change(moved), "pushState": push_state(watch.sent)})
        except (WebSocketDisconnect, RuntimeError):
            return


def websocket_route(api: ApiProcessor) -> Any:
    @websocket(WEBSOCKET_PATH)
    async def jmap_websocket(socket: WebSocket[Any, Any, Any]) -> None:
        try:
            principal = await authenticate(socket)
        except RequestError as exc:
            await _refuse(socket, exc)
            return
        offered = [p.strip() for p in (socket.headers.get("sec-websocket-protocol") or "").split(",")]
        if SUBPROTOCOL not in offered:
            await _refuse(socket, RequestError("about:blank", "Ask for the jmap subprotocol (RFC 8887).",
                                               status=400))
            return
        await socket.accept(subprotocols=SUBPROTOCOL)
        await JmapSocket(socket, api, principal).run()

    return jmap_websocket
