"""Behind a reverse proxy: which client and scheme a request really came with.

`Forwarded` (RFC 7239) and `X-Forwarded-For`, `-Proto`, `-Host` are believed only from a peer listed in
PLMAIL_TRUSTED_PROXIES (nothing by default, loopback included). Anyone can send those headers, and the sign-in
throttle counts by client address: believed from everyone, they would let a guesser pose as a fresh client on
every attempt, or as another user's address. This middleware is the only place that reads them: uvicorn's own
proxy-header handling (which trusts 127.0.0.1 unless told otherwise) is switched off in `plmail serve`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

from plmail.config import Network

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def _address(value: str) -> Address | None:
    candidate = value.strip().strip('"')
    if candidate.startswith("[") and "]" in candidate:  # [v6]:port
        candidate = candidate[1:candidate.index("]")]
    elif candidate.count(":") == 1:  # v4:port
        candidate = candidate.split(":", 1)[0]
    try:
        return ipaddress.ip_address(candidate)
    except ValueError:
        return None


def _header_values(scope: Scope, name: bytes) -> list[str]:
    """Every value of a header, in order: a header sent twice counts as one list (RFC 9110 §5.3)."""
    return [value.decode("latin-1") for key, value in scope.get("headers", []) if key.lower() == name]


def _forwarded_elements(values: list[str]) -> list[dict[str, str]]:
    """RFC 7239 §4: comma-separated elements of semicolon-separated `name=value` pairs (value a token or a
    quoted string); names are case-insensitive."""
    elements: list[dict[str, str]] = []
    for element in _split_outside_quotes(",".join(values), ","):
        pairs: dict[str, str] = {}
        for pair in _split_outside_quotes(element, ";"):
            name, sep, value = pair.partition("=")
            if sep:
                value = value.strip()
                if len(value) >= 2 and value[0] == value[-1] == '"':
                    value = value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
                pairs[name.strip().lower()] = value
        elements.append(pairs)
    return elements


def _split_outside_quotes(text: str, separator: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    quoted = escaped = False
    for char in text:
        if escaped:
            escaped = False
        elif char == "\\" and quoted:
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char == separator and not quoted:
            parts.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    parts.append("".join(current).strip())
    return [part for part in parts if part]


class TrustedProxies:
    """ASGI middleware that rewrites the scope's client, scheme and host from a trusted proxy's headers."""

    def __init__(self, app: ASGIApp, networks: Sequence[Network]) -> None:
        self.app = app
        self.networks = tuple(networks)

    def trusted(self, host: str | Address | None) -> bool:
        address = _address(host) if isinstance(host, str) else host
        return address is not None and any(address in network for network in self.networks)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in (ScopeType.HTTP, ScopeType.WEBSOCKET) and self.networks:
            client = scope.get("client")
            if client and self.trusted(client[0]):
                self._rewrite(scope)
        await self.app(scope, receive, send)

    def _client(self, hops: list[str]) -> str | None:
        """The right-most hop that is not a trusted proxy: everything left of it is what that client claimed (as
        uvicorn's ProxyHeadersMiddleware and Werkzeug's ProxyFix read it). A hop that is no address (`unknown`,
        an obfuscated identifier, garbage) ends the walk there: nothing left of it can be believed, so the last
        trusted hop stands in for the client."""
        client: str | None = None
        for hop in reversed(hops):
            address = _address(hop)
            if address is None:
                break
            client = str(address)
            if not self.trusted(address):
                break
        return client

    def _rewrite(self, scope: Scope) -> None:
        forwarded = _forwarded_elements(_header_values(scope, b"forwarded"))
        x_forwarded_for = [hop.strip() for value in _header_values(scope, b"x-forwarded-for")
                           for hop in value.split(",") if hop.strip()]
        from_forwarded = self._client([element.get("for", "") for element in forwarded]) if forwarded else None
        from_x_forwarded = self._client(x_forwarded_for) if x_forwarded_for else None
        if forwarded and x_forwarded_for and from_forwarded != from_x_forwarded:
            # The proxy writes one of the two and passes the other through as the client sent it; which one is
            # unknowable here, so neither is believed and the proxy itself counts as the client.
            client = None
        else:
            client = from_forwarded or from_x_forwarded
        if client is not None:
            peer = scope.get("client")
            scope["client"] = (client, peer[1] if peer else 0)
        last = forwarded[-1] if forwarded else {}
        proto = (last.get("proto") or (_header_values(scope, b"x-forwarded-proto") or [""])[-1].split(",")[-1])
        proto = proto.strip().lower()
        if proto in ("http", "https"):
            scope["scheme"] = proto if scope["type"] == ScopeType.HTTP else {"http": "ws", "https": "wss"}[proto]
        host = (last.get("host") or (_header_values(scope, b"x-forwarded-host") or [""])[-1].split(",")[-1]).strip()
        if host:
            scope["headers"] = [(k, v) for k, v in scope["headers"] if k.lower() != b"host"] + \
                [(b"host", host.encode("latin-1"))]
