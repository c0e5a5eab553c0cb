"""A small JMAP client over httpx: the session (RFC 8620 §2), method calls (§3), blob download and upload (§6).

The session is looked up where the user pointed (a session URL), or by a domain's `/.well-known/jmap` (§2.2).
Redirects are followed by hand so the credentials reach the host the redirect names (the well-known resource of
a hosted service usually redirects to its API host, and httpx drops Authorization across hosts by design).
"""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

import httpx

from plmail.domain.errors import ValidationError
from plmail.providers.jmap.errors import (
    JmapAuthError,
    JmapBlocked,
    JmapConnectionError,
    JmapError,
    JmapMethodError,
    JmapNotFound,
    NoMailError,
    NotJmapError,
)
from plmail.providers.network import BlockedAddress, Network, is_local_host, public_addresses
from plmail.tls import verifying_context

CORE = "urn:ietf:params:jmap:core"
MAIL = "urn:ietf:params:jmap:mail"
SUBMISSION = "urn:ietf:params:jmap:submission"
_MAX_REDIRECTS = 5

Invocation = tuple[str, dict[str, Any], str]


@dataclass(frozen=True, slots=True)
class JmapCredentials:
    """An app password (HTTP Basic, RFC 7617) or a bearer token (RFC 6750)."""

    username: str
    secret: str
    bearer: bool = False

    def header(self) -> str:
        if self.bearer:
            return f"Bearer {self.secret}"
        pair = f"{self.username}:{self.secret}".encode()
        return "Basic " + base64.b64encode(pair).decode("ascii")


@dataclass(frozen=True, slots=True)
class JmapSession:
    url: str
    api_url: str
    download_url: str
    upload_url: str
    event_source_url: str
    account_id: str  # the primary account for mail
    username: str
    capabilities: frozenset[str]
    account_capabilities: frozenset[str]
    state: str

    @classmethod
    def from_json(cls, url: str, data: Any) -> JmapSession:
        if not isinstance(data, dict) or not isinstance(data.get("capabilities"), dict) or "apiUrl" not in data:
            raise NotJmapError("The server answered, but not with a JMAP session.")
        capabilities = frozenset(data["capabilities"])
        account_id = (data.get("primaryAccounts") or {}).get(MAIL)
        if MAIL not in capabilities or not isinstance(account_id, str):
            raise NoMailError("The JMAP server does not offer mail (urn:ietf:params:jmap:mail).")
        account = (data.get("accounts") or {}).get(account_id) or {}

        def absolute(key: str) -> str:
            return urljoin(url, str(data.get(key) or ""))

        return cls(url=url, api_url=absolute("apiUrl"), download_url=absolute("downloadUrl"),
                   upload_url=absolute("uploadUrl"), event_source_url=absolute("eventSourceUrl"),
                   account_id=account_id, username=str(data.get("username") or ""), capabilities=capabilities,
                   account_capabilities=frozenset(account.get("accountCapabilities") or {}),
                   state=str(data.get("state") or ""))

    def can_send(self) -> bool:
        return SUBMISSION in self.capabilities and SUBMISSION in self.account_capabilities


def session_url(address: str) -> str:
    """Where to ask for the session: the URL as given; a bare server URL, a domain or an email address by its
    domain's `/.well-known/jmap` (RFC 8620 §2.2)."""
    given = address.strip()
    if "://" in given:
        parts = urlsplit(given)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise NotJmapError("Enter the JMAP session URL (https://…) or the account's email address.")
        if parts.path in ("", "/"):
            return f"{parts.scheme}://{parts.netloc}/.well-known/jmap"
        return given
    domain = given.rsplit("@", 1)[-1].strip().lower()
    if not domain or "." not in domain or "/" in domain:
        raise NotJmapError("Enter the JMAP session URL (https://…) or the account's email address.")
    return f"https://{domain}/.well-known/jmap"


class JmapClient:
    """`allow`: networks besides the public internet the client may reach (a test's loopback server; never set in
    production). A URL typed by a user must not make the server reach this machine or its local network, and a
    secret goes over plain http only to this machine."""

    def __init__(self, *, timeout: float = 60.0, http: httpx.AsyncClient | None = None,
                 allow: Sequence[Network] = ()) -> None:
        self.http = http or httpx.AsyncClient(timeout=timeout, follow_redirects=False, verify=verifying_context())
        self.allow = tuple(allow)

    async def check(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise NotJmapError("The JMAP server gave an address that is not http(s).")
        if parts.scheme == "http" and not is_local_host(parts.hostname):
            raise NotJmapError("The JMAP server must be reached over https.")
        try:
            await public_addresses(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80),
                                   allow=self.allow)
        except BlockedAddress:
            raise JmapBlocked("The JMAP server's address is not on the public internet.") from None
        except ValidationError:
            raise JmapConnectionError("The JMAP server's name could not be found.") from None

    async def close(self) -> None:
        await self.http.aclose()

    async def _send(self, method: str, url: str, credentials: JmapCredentials, **kwargs: Any) -> httpx.Response:
        for _ in range(_MAX_REDIRECTS + 1):
            await self.check(url)  # every hop: a redirect must not lead inside either
            headers = {"Authorization": credentials.header(), **kwargs.pop("headers", {})}
            try:
                response = await self.http.request(method, url, headers=headers, **kwargs)
            except httpx.HTTPError as exc:
                raise JmapConnectionError(f"The JMAP server could not be reached ({type(exc).__name__}).") from exc
            if response.is_redirect and "location" in response.headers:
                url = urljoin(url, response.headers["location"])
                continue
            self._check(response)
            return response
        raise JmapError("The JMAP server redirected too often.")

    @staticmethod
    def _check(response: httpx.Response) -> None:
        status = response.status_code
        if status in (401, 403):
            raise JmapAuthError("The JMAP server refused the app password or token.", status=status)
        if status == 404:
            raise JmapNotFound("There is no JMAP session at this address.", status=status)
        if status == 429 or status >= 500:
            raise JmapConnectionError(f"The JMAP server is unavailable (HTTP {status}).", status=status)
        if status >= 400:
            kind = None
            with contextlib.suppress(ValueError):
                kind = response.json().get("type")
            raise JmapError(f"The JMAP server refused the request (HTTP {status}).", status=status, kind=kind)

    async def session(self, url: str, credentials: JmapCredentials) -> JmapSession:
        response = await self._send("GET", url, credentials)
        try:
            data = response.json()
        except ValueError:
            raise NotJmapError("The server answered, but not with a JMAP session.") from None
        return JmapSession.from_json(str(response.url), data)

    async def call(self, session: JmapSession, credentials: JmapCredentials, calls: Sequence[Invocation],
                   *, using: Sequence[str] = (CORE, MAIL)) -> list[Invocation]:
        """Method calls in one request; an error response to any of them is raised (RFC 8620 §3.6.2)."""
        body = {"using": list(using), "methodCalls": [list(c) for c in calls]}
        response = await self._send("POST", session.api_url, credentials, json=body)
        try:
            answers = response.json()["methodResponses"]
        except (ValueError, KeyError, TypeError):
            raise JmapError("The JMAP server's answer could not be read.") from None
        found: list[Invocation] = []
        for name, arguments, call_id in answers:
            if name == "error":
                kind = str(arguments.get("type", "serverFail"))
                raise JmapMethodError(f"The JMAP server answered {kind}: {arguments.get('description', '')}",
                                      kind=kind)
            found.append((name, arguments, call_id))
        return found

    async def one(self, session: JmapSession, credentials: JmapCredentials, name: str, arguments: dict[str, Any],
                  *, using: Sequence[str] = (CORE, MAIL)) -> dict[str, Any]:
        [answer, *_] = await self.call(session, credentials, [(name, arguments, "0")], using=using)
        return answer[1]

    async def download(self, session: JmapSession, credentials: JmapCredentials, blob_id: str) -> bytes:
        url = (session.download_url.replace("{accountId}", quote(session.account_id, safe=""))
               .replace("{blobId}", quote(blob_id, safe="")).replace("{type}", quote("message/rfc822", safe=""))
               .replace("{name}", "message.eml"))
        return (await self._send("GET", url, credentials)).content

    async def upload(self, session: JmapSession, credentials: JmapCredentials, data: bytes,
                     content_type: str = "message/rfc822") -> str:
        url = session.upload_url.replace("{accountId}", quote(session.account_id, safe=""))
        response = await self._send("POST", url, credentials, content=data, headers={"Content-Type": content_type})
        blob = response.json().get("blobId")
        if not isinstance(blob, str):
            raise JmapError("The JMAP server did not say where it stored the upload.")
        return blob
