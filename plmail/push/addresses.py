"""Which push endpoints plmail will POST to: https on the public internet only, never the server's own network.

A push URL is the client's choice, so without this a JMAP client could make the server send requests into the
network it stands in (SSRF). The name is checked when a subscription is made, and every connection is checked
again on the address it actually reaches (a name can resolve differently later: DNS rebinding).
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import socket
from urllib.parse import urlsplit

from plmail.domain.errors import ValidationError

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@functools.cache
def _own_addresses() -> frozenset[Address]:
    """The addresses this machine's own name resolves to: a public one is still the server itself."""
    found: set[Address] = set()
    for name in {socket.gethostname(), socket.getfqdn()}:
        try:
            infos = socket.getaddrinfo(name, None)
        except OSError:
            continue
        for info in infos:
            try:
                found.add(ipaddress.ip_address(str(info[4][0]).split("%")[0]))
            except ValueError:
                continue
    return frozenset(found)


def address_refused(address: Address, *, allow_loopback: bool) -> bool:
    """True for anything but a public unicast address (private, loopback, link-local, shared, reserved,
    multicast, the server's own); loopback only where the test-only setting allows it."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_loopback:
        return not allow_loopback
    if not address.is_global or address.is_multicast:
        return True
    return address in _own_addresses()


def literal_address(host: str) -> Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]").split("%")[0])
    except ValueError:
        return None


async def check_push_url(url: str, *, allow_loopback: bool) -> None:
    """Refuses (ValidationError on `url`) a push endpoint that is not https, or whose host is, or resolves to, an
    address of the server's own network."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise ValidationError("The push URL is not a valid URL.", field="url") from None
    host = parts.hostname or ""
    if parts.username is not None or parts.password is not None or not host:
        raise ValidationError("The push URL must be https://host/path, without credentials.", field="url")
    literal = literal_address(host)
    loopback_test = allow_loopback and ((literal is not None and literal.is_loopback) or host == "localhost")
    if parts.scheme != "https" and not (parts.scheme == "http" and loopback_test):
        raise ValidationError("The push URL must begin with https:// (RFC 8620 §7.2).", field="url")
    if literal is not None:
        addresses = [literal]
    else:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(host, port or 443, type=socket.SOCK_STREAM)
        except OSError:
            raise ValidationError(f"The push service's host {host!r} cannot be found.", field="url") from None
        addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
    if not addresses or any(address_refused(a, allow_loopback=allow_loopback) for a in addresses):
        raise ValidationError("The push URL points into the server's own network; only public push services "
                              "are reached.", field="url")
