"""Headers on every response, and the Origin check behind the CSRF token.

- A Content-Security-Policy: scripts only from our own files (no inline script, no eval: htmx runs with
  `allowEval` off), nothing framed from elsewhere, and nobody may frame us (`frame-ancestors 'none'`). A page may
  send its own policy (the conversation page loosens styles and, when asked, images, for the mail bodies it
  frames); every other response gets the strict one.
- Referrer-Policy, X-Content-Type-Options, Permissions-Policy, X-Frame-Options for browsers that predate CSP.
- Over HTTPS (directly, or as a trusted proxy says): HSTS, and every cookie marked `Secure`.
- A state-changing request must come from our own pages: Sec-Fetch-Site, else Origin, else Referer must name our
  origin. A request that names none of them (a script, curl) still needs the CSRF token.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from typing import Final
from urllib.parse import urlsplit

from litestar.enums import ScopeType
from litestar.types import ASGIApp, HTTPResponseBodyEvent, HTTPResponseStartEvent, Message, Receive, Scope, Send

STATE_CHANGING: Final = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# What authenticates without the browser's cookies (JMAP's app passwords, the metrics token), or needs no check.
ORIGIN_EXEMPT: Final = ("/jmap", "/.well-known/", "/healthz", "/metrics", "/provider-push/")
HSTS: Final = "max-age=31536000"
PERMISSIONS: Final = "camera=(), microphone=(), geolocation=(), payment=(), usb=()"


def content_security_policy(*, inline_styles: bool = False, remote_images: bool = False) -> str:
    """The policy of a page. `inline_styles` and `remote_images` are for the conversation page only: a framed mail
    body (srcdoc) lives under the page's policy, mail is styled inline, and remote images load when the reader
    asked for them. `blob:` is the composer's pasted image, shown before its upload is done; only a script of the
    page's own can make such a URL."""
    styles = "'self' 'unsafe-inline'" if inline_styles else "'self'"
    images = "'self' data: blob: https: http:" if remote_images else "'self' data: blob:"
    return (
        "default-src 'self'; script-src 'self'; "
        f"style-src {styles}; img-src {images}; font-src 'self'; connect-src 'self'; frame-src 'self'; "
        "object-src 'none'; base-uri 'self'; frame-ancestors 'none'"
    )


STRICT_POLICY: Final = content_security_policy()


def _header(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> str | None:
    for key, value in headers:
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def _origin_of(url: str) -> str | None:
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return None
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


def same_origin(scope: Scope) -> bool:
    """Whether a state-changing request came from one of our pages, as far as the browser tells."""
    headers = scope.get("headers", [])
    fetch_site = _header(headers, b"sec-fetch-site")
    if fetch_site is not None:
        return fetch_site.strip().lower() in ("same-origin", "none")
    host = (_header(headers, b"host") or "").strip().lower()
    ours = f"{scope.get('scheme', 'http')}://{host}"
    origin = _header(headers, b"origin")
    # Under Referrer-Policy: no-referrer a browser sends "Origin: null" even for our own forms (Fetch, "serializing
    # a request origin"); only Sec-Fetch-Site (HTTPS and localhost) can vouch for those, and the token still must.
    if origin is not None and origin.strip().lower() != "null":
        return _origin_of(origin.strip()) == ours
    referer = _header(headers, b"referer")
    if referer is not None:
        return _origin_of(referer.strip()) == ours
    return True


class OriginCheck:
    """ASGI middleware: refuses a state-changing request that a browser says came from another site."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == ScopeType.HTTP and scope.get("method", "GET") in STATE_CHANGING \
                and not scope.get("path", "").startswith(ORIGIN_EXEMPT) and not same_origin(scope):
            body = (b"This request came from another site and was refused.\n"
                    b"Diese Anfrage kam von einer anderen Website und wurde abgelehnt.\n")
            start: HTTPResponseStartEvent = {"type": "http.response.start", "status": 403, "headers": [
                (b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]}
            end: HTTPResponseBodyEvent = {"type": "http.response.body", "body": body, "more_body": False}
            await send(start)
            await send(end)
            return
        await self.app(scope, receive, send)


STYLE_NONCE: Final = "style_nonce"


class StyleNonce:
    """ASGI middleware: a fresh nonce per request for the one inline style our own pages need, the default styles
    the Trix editor inserts as <style> elements (it reads the nonce from <meta name="trix-csp-nonce">)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == ScopeType.HTTP:
            scope.setdefault("state", {})[STYLE_NONCE] = secrets.token_urlsafe(16)
        await self.app(scope, receive, send)


def with_style_nonce(policy: str, nonce: str | None) -> str:
    """The policy allowing `<style nonce=…>`. Not where inline styles are allowed already: beside a nonce a browser
    ignores 'unsafe-inline', and the conversation page's framed mail needs it."""
    if not nonce or "style-src " not in policy or "'unsafe-inline'" in policy:
        return policy
    return policy.replace("style-src ", f"style-src 'nonce-{nonce}' ", 1)


class SecurityHeaders:
    """A `before_send` hook: it sees every response the app sends, error pages and unknown paths included."""

    def __init__(self, *, always_secure: bool = False) -> None:
        self.always_secure = always_secure

    async def __call__(self, message: Message, scope: Scope) -> None:
        if message["type"] != "http.response.start":
            return
        secure = self.always_secure or scope.get("scheme") == "https"
        headers = self.headers(list(message.get("headers", [])), secure)
        nonce = (scope.get("state") or {}).get(STYLE_NONCE)
        message["headers"] = [
            (key, with_style_nonce(value.decode("latin-1"), nonce).encode("latin-1"))
            if key.lower() == b"content-security-policy" else (key, value)
            for key, value in headers
        ]

    @staticmethod
    def headers(headers: list[tuple[bytes, bytes]], secure: bool) -> list[tuple[bytes, bytes]]:
        present = {key.lower() for key, _ in headers}
        defaults = [
            (b"content-security-policy", STRICT_POLICY),
            (b"referrer-policy", "no-referrer"),
            (b"x-content-type-options", "nosniff"),
            (b"permissions-policy", PERMISSIONS),
            (b"x-frame-options", "DENY"),
        ]
        if secure:
            defaults.append((b"strict-transport-security", HSTS))
            headers = [(key, _secure_cookie(value)) if key.lower() == b"set-cookie" else (key, value)
                       for key, value in headers]
        return headers + [(name, value.encode("latin-1")) for name, value in defaults if name not in present]


def _secure_cookie(value: bytes) -> bytes:
    attributes = [part.strip().lower() for part in value.split(b";")[1:]]
    return value if b"secure" in attributes else value + b"; Secure"
