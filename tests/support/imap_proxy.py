"""A TCP proxy in the test's event loop, between plmail's client and Dovecot: it records what the client
sent, and can cut the connection after so many bytes from the server or stop passing them on (a server
that went silent)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class ImapProxy:
    def __init__(self, upstream_host: str, upstream_port: int, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.host = host
        self.port = port
        self.accepted = 0  # connections clients opened
        self.client_bytes = bytearray()  # everything any client sent, in order
        self.server_bytes = 0  # bytes passed from the server to clients since the last cut_after()
        self._cut_at: int | None = None
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> ImapProxy:
        self._server = await asyncio.start_server(self._accept, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        self.cut()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def cut_after(self, server_bytes: int) -> None:
        """Drop every connection once `server_bytes` more bytes have gone from the server to the client."""
        self.server_bytes = 0
        self._cut_at = server_bytes

    def cut(self) -> None:
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    def freeze(self) -> None:
        """Keep the connection open but pass nothing more from the server: it looks silent."""
        self._flowing.clear()

    def thaw(self) -> None:
        self._flowing.set()

    def commands(self) -> list[str]:
        """The client's command lines (literal payloads included, as lines), for counting FETCHes and IDLEs."""
        return self.client_bytes.decode("utf-8", "replace").split("\r\n")

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.transport.abort()
            return
        self._writers.update((writer, up_writer))
        up = asyncio.ensure_future(self._pump(reader, up_writer, from_client=True))
        down = asyncio.ensure_future(self._pump(up_reader, writer, from_client=False))
        for task in (up, down):
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, from_client: bool) -> None:
        try:
            while data := await reader.read(65536):
                if from_client:
                    self.client_bytes += data
                else:
                    await self._flowing.wait()
                    if self._cut_at is not None and self.server_bytes + len(data) >= self._cut_at:
                        keep = self._cut_at - self.server_bytes
                        writer.write(data[:keep])
                        await writer.drain()
                        self._cut_at = None
                        self.cut()
                        return
                    self.server_bytes += len(data)
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.transport.abort()


@asynccontextmanager
async def imap_proxy(upstream_host: str, upstream_port: int, *, host: str = "127.0.0.1", port: int = 0
                     ) -> AsyncIterator[ImapProxy]:
    """Listening on `host`:`port` (default: a free port on 127.0.0.1)."""
    proxy = await ImapProxy(upstream_host, upstream_port, host=host, port=port).start()
    try:
        yield proxy
    finally:
        await proxy.stop()
