"""Serve a fake (any ASGI app) with uvicorn on 127.0.0.1, on a free port, in a background thread.

    with FakeServer(GmailFake()) as gmail:          # sync test or fixture
        httpx.get(f"{gmail.url}/gmail/v1/users/me/profile", headers=gmail.app.auth_headers())

    async with FakeServer(ModelFake()) as model:    # async test or fixture
        ...

The server runs in its own thread with its own event loop, so sync and async tests (and plmail code
under test, whichever loop it runs on) reach it the same way, over real HTTP. The port is taken by
binding port 0 ourselves and handing the socket to uvicorn — no race with other tests. `stop()`
asks the app to release anything it holds open (`shutdown()` if the app has one — the model fake's
hung requests), closes connections and joins the thread; it takes milliseconds, not uvicorn's usual
0.1 s ticks, so every test can have a fresh server.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from types import TracebackType
from typing import Any, Generic, Protocol, Self, TypeVar, runtime_checkable

import uvicorn

ASGIApp = Callable[
    [MutableMapping[str, Any], Callable[[], Awaitable[MutableMapping[str, Any]]],
     Callable[[MutableMapping[str, Any]], Awaitable[None]]],
    Awaitable[None],
]
AppT = TypeVar("AppT", bound=ASGIApp)


@runtime_checkable
class SupportsShutdown(Protocol):
    def shutdown(self) -> None: ...


class _QuickServer(uvicorn.Server):
    """uvicorn's server with an event-driven main loop and a shutdown that polls in milliseconds."""

    def __init__(self, config: uvicorn.Config, ready: threading.Event) -> None:
        super().__init__(config)
        self._ready = ready
        self._exit = asyncio.Event()
        self.loop: asyncio.AbstractEventLoop | None = None

    async def main_loop(self) -> None:
        self.loop = asyncio.get_running_loop()
        await self.on_tick(0)  # sets the default response headers (Date, Server)
        self._ready.set()
        await self._exit.wait()

    def request_exit(self) -> None:
        self.should_exit = True
        if self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._exit.set)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (self.config.timeout_graceful_shutdown or 0)
        while (self.server_state.connections or self.server_state.tasks) and loop.time() < deadline:
            await asyncio.sleep(0.002)
        for task in list(self.server_state.tasks):
            task.cancel()
        for connection in list(self.server_state.connections):
            transport = getattr(connection, "transport", None)
            if transport is not None:
                transport.close()
        await self.lifespan.shutdown()


class FakeServer(Generic[AppT]):
    """One running fake. `app` is the fake itself (seed and inspect it directly), `url` its base URL."""

    def __init__(self, app: AppT, *, graceful_shutdown_seconds: float = 1.0) -> None:
        self.app = app
        self.graceful_shutdown_seconds = graceful_shutdown_seconds
        self.port = 0
        self._server: _QuickServer | None = None
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        if not self.port:
            raise RuntimeError("the fake server is not running")
        return f"http://127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, timeout: float = 10.0) -> Self:
        if self.running:
            raise RuntimeError("already running")
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = int(sock.getsockname()[1])
        config = uvicorn.Config(
            self.app, host="127.0.0.1", port=self.port, lifespan="off", log_level="warning", access_log=False,
            timeout_graceful_shutdown=max(1, round(self.graceful_shutdown_seconds)), ws="none",
        )
        ready = threading.Event()
        self._server = _QuickServer(config, ready)
        self._error = None

        def run() -> None:
            try:
                assert self._server is not None
                self._server.run(sockets=[sock])
            except BaseException as error:  # reported by start()
                self._error = error
            finally:
                sock.close()
                ready.set()

        self._thread = threading.Thread(target=run, name=f"fake-server-{self.port}", daemon=True)
        self._thread.start()
        if not ready.wait(timeout) or self._error is not None or not self.running:
            self.stop()
            raise RuntimeError(f"fake server did not start: {self._error!r}")
        return self

    def stop(self, timeout: float = 10.0) -> None:
        if isinstance(self.app, SupportsShutdown):
            self.app.shutdown()
        if self._server is not None:
            self._server.request_exit()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                raise RuntimeError(f"fake server on port {self.port} did not stop within {timeout}s")
        self._thread = None
        self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        return await asyncio.to_thread(self.start)

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await asyncio.to_thread(self.stop)
