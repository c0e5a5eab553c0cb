"""Behind a reverse proxy: which client and scheme a request really came with.

`X-Forwarded-For`, `-Proto` and `-Host` are believed only from the addresses in PLMAIL_TRUSTED_PROXIES. Anyone
can send those headers, and the sign-in throttle counts by client address: believed from everyone, they would
let a guesser pose as a fresh client on every attempt, or as another user's address.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

from plmail.config import Network


def _address(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    candidate = value.strip().strip('"')
    if candidate.startswith("[") and "]" in candidate:  # [v6]:port
        candidate = candidate[1:candidate.index("]")]
    elif candidate.count(":") == 1:  # v4:port
        candidate = candidate.split(":", 1)[0]
    try:
        return ipaddress.ip_address(candidate)
    except ValueError:
        return None


class TrustedProxies:
    """ASGI middleware that rewrites the scope's client, scheme and host from a trusted proxy's headers."""

    def __init__(self, app: ASGIApp, networks: Sequence[Network]) -> None:
        self.app = app
        self.networks = tuple(networks)

    def trusted(self, host: str | None) -> bool:
        address = _address(host) if host else None
        return address is not None and any(address in network for network in self.networks)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in (ScopeType.HTTP, ScopeType.WEBSOCKET) and self.networks:
            client = scope.get("client")
            if client and self.trusted(client[0]):
                self._rewrite(scope)
        await self.app(scope, receive, send)

    def _rewrite(self, scope: Scope) -> None:
        headers = {key.lower(): value for key, value in scope.get("headers", [])}
        forwarded_for = headers.get(b"x-forwarded-for", b"").decode("latin-1")
        if forwarded_for:
            # The rightmost address no trusted proxy added is the client; anything left of it is the client's say.
            hops = [hop.strip() for hop in forwarded_for.split(",") if hop.strip()]
            client: str | None = None
            for hop in reversed(hops):
                address = _address(hop)
                if address is None:
                    break
                client = str(address)
                if not self.trusted(client):
                    break
            if client is not None:
                peer = scope.get("client")
                scope["client"] = (client, peer[1] if peer else 0)
        proto = headers.get(b"x-forwarded-proto", b"").decode("latin-1").split(",")[-1].strip().lower()
        if proto in ("http", "https"):
            scope["scheme"] = proto if scope["type"] == ScopeType.HTTP else {"http": "ws", "https": "wss"}[proto]
        host = headers.get(b"x-forwarded-host", b"").decode("latin-1").split(",")[-1].strip()
        if host:
            scope["headers"] = [(k, v) for k, v in scope["headers"] if k.lower() != b"host"] + \
                [(b"host", host.encode("latin-1"))]
