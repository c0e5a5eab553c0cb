"""The resolver of the aiohttp session pushes go out on: only public addresses (loopback too where the settings
allow it, for tests). Apart from `sender`, so aiohttp is imported with the first push, not at every start."""

from __future__ import annotations

import socket

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from plmail.push.addresses import address_refused, literal_address


class PublicOnlyResolver(AbstractResolver):
    """Resolves as usual and drops every address plmail must not reach; none left is a failed connection."""

    def __init__(self, *, allow_loopback: bool) -> None:
        self.inner = aiohttp.ThreadedResolver()
        self.allow_loopback = allow_loopback

    async def resolve(self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
                      ) -> list[ResolveResult]:
        found = await self.inner.resolve(host, port, family)
        allowed = [r for r in found if not _refused(r["host"], self.allow_loopback)]
        if not allowed:
            raise OSError(f"{host} resolves only to addresses of the server's own network")
        return allowed

    async def close(self) -> None:
        await self.inner.close()


def _refused(host: str, allow_loopback: bool) -> bool:
    address = literal_address(host)
    return address is None or address_refused(address, allow_loopback=allow_loopback)
