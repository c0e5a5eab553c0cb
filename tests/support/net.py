from __future__ import annotations

import asyncio
import socket


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Listener:
    """A TCP listener in the test's event loop that counts the connections it accepts and greets each with
    `banner` (something that is not a mail server)."""

    def __init__(self, host: str, port: int, banner: bytes = b"") -> None:
        self.host = host
        self.port = port
        self.banner = banner
        self.accepted = 0
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> Listener:
        self._server = await asyncio.start_server(self._accept, self.host, self.port)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        if self.banner:
            writer.write(self.banner)
            await writer.drain()
        await asyncio.sleep(0.2)
        writer.close()
