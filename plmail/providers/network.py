"""What plmail's outbound connections share: when a mail connection may go unencrypted (`is_local_host`), and the
guard for HTTP requests to addresses taken from mail or typed by a user (autoconfig, RFC 8058 one-click
unsubscribe), which must never reach this machine or the local network (server-side request forgery)."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Sequence
from urllib.parse import urlsplit

import httpx

from plmail.domain.errors import ValidationError

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
FETCH_TIMEOUT = 5.0
MAX_FETCH_BYTES = 256 * 1024  # an autoconfig file is a few KB; a one-click answer is read only to be dropped


def is_local_host(host: str) -> bool:
    """Whether a connection to `host` stays on this machine, decided from the name alone (before any lookup),
    so that a password never leaves the host in clear text."""
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):  # RFC 6761: always loopback
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class BlockedAddress(ValidationError):
    """The URL's host is, or resolves to, an address that is not on the public internet."""


async def public_addresses(host: str, port: int, *, allow: Sequence[Network] = ()) -> list[str]:
    """Every address `host` resolves to, refusing the lot when any of them is not globally routable (loopback,
    private, link-local, …) unless it lies in `allow` (a test's loopback server, never set in production)."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise ValidationError(f"{host} could not be found.") from exc
    addresses = sorted({str(info[4][0]) for info in infos})
    for raw in addresses:
        address = ipaddress.ip_address(raw.split("%", 1)[0])
        if not address.is_global and not any(address in network for network in allow):
            raise BlockedAddress(f"{host} is not a public internet address.")
    return addresses


async def guarded_request(client: httpx.AsyncClient, method: str, url: str, *, allow: Sequence[Network] = (),
                          content: bytes | None = None, headers: dict[str, str] | None = None,
                          max_redirects: int = 3) -> httpx.Response:
    """One HTTP(S) request to a URL from outside, its host checked before each hop; redirects are followed by hand
    (each target checked again) and only for GET. The body is read up to MAX_FETCH_BYTES."""
    for _hop in range(max_redirects + 1):
        parts = urlsplit(url)
        if parts.scheme not in ("https", "http") or not parts.hostname:
            raise ValidationError("Only http and https addresses can be fetched.")
        await public_addresses(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80), allow=allow)
        request = client.build_request(method, url, content=content, headers=headers)
        response = await client.send(request, stream=True, follow_redirects=False)
        try:
            body = b""
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_FETCH_BYTES:
                    break
        finally:
            await response.aclose()
        if response.is_redirect and method == "GET" and "location" in response.headers:
            url = str(response.url.join(response.headers["location"]))
            continue
        return httpx.Response(response.status_code, headers=response.headers, content=body[:MAX_FETCH_BYTES],
                              request=request)
    raise ValidationError("Too many redirects.")


class GuardedOneClick:
    """RFC 8058 §3.1: a POST to the list's https URI whose body is `List-Unsubscribe=One-Click`, with no cookies
    and no redirect followed (§3.2); the host must be on the public internet (`allow`: tests' loopback only)."""

    def __init__(self, *, allow: Sequence[Network] = (), timeout: float = FETCH_TIMEOUT) -> None:
        self.allow = tuple(allow)
        self.timeout = timeout

    async def post_one_click(self, url: str) -> int:
        if urlsplit(url).scheme != "https" and not self.allow:  # RFC 8058 §3.1 (tests' servers speak http)
            raise ValidationError("One-click unsubscribe needs an https address.")
        async with httpx.AsyncClient(timeout=self.timeout) as client:
            try:
                response = await guarded_request(
                    client, "POST", url, allow=self.allow, content=b"List-Unsubscribe=One-Click",
                    headers={"Content-Type": "application/x-www-form-urlencoded"}, max_redirects=0)
            except httpx.HTTPError as exc:
                raise ValidationError("The sender's unsubscribe server could not be reached.") from exc
        return response.status_code
