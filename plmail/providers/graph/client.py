"""A small Microsoft Graph (v1.0 mail) client over httpx, signed in with the account's OAuth token.

One request path for everything: the token comes from a `TokenSource` (the account's sealed OAuth
tokens, renewed before they expire); a 401 renews the token once and repeats the request; Graph's
errors become the exception tree in `errors.py`, with 429/503 and their Retry-After turned into
`GraphThrottled` so callers reschedule instead of failing.

Ids are requested as immutable ids (`Prefer: IdType="ImmutableId"`), which Exchange Online honours and a
private outlook.com mailbox does not reliably: nothing here depends on an id surviving a move.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Protocol
from urllib.parse import quote

import httpx

from plmail.domain.models import Account
from plmail.providers.graph.errors import (
    GraphAuthError,
    GraphConnectionError,
    GraphError,
    GraphNotFound,
    GraphRequestError,
    GraphSyncStateGone,
    GraphThrottled,
)
from plmail.providers.graph.models import DeltaPage, RemoteFolder, RemoteMessage, remote_folder, remote_message
from plmail.tls import verifying_context

log = logging.getLogger(__name__)

PAGE_SIZE = 50
FOLDER_PAGE = 100
MAX_RETRY_AFTER = 3600.0
DEFAULT_RETRY_AFTER = 30.0
UPLOAD_RANGE = 3 * 1024 * 1024  # an upload session's PUT: "keep each byte range less than 4 MB"
_TIMEOUT = httpx.Timeout(60.0, connect=10.0)
_ID_PREFERENCE = 'IdType="ImmutableId"'
# What plmail reads of a message; the body is HTML unless the sender wrote plain text.
MESSAGE_FIELDS = ",".join((
    "id", "parentFolderId", "conversationId", "internetMessageId", "subject", "from", "sender", "toRecipients",
    "ccRecipients", "bccRecipients", "replyTo", "receivedDateTime", "sentDateTime", "isRead", "isDraft", "flag",
    "categories", "body", "bodyPreview", "hasAttachments", "microsoft.graph.eventMessage/meetingMessageType",
    # only on $select: the receiving server's Authentication-Results, for the sender verdict (mail/sender_auth.py)
    "internetMessageHeaders",
))


class TokenSource(Protocol):
    """Access tokens for an account: `access_token` renews one about to expire; `refresh` renews after the API
    refused `rejected` (a 401)."""

    async def access_token(self, account: Account) -> str: ...

    async def refresh(self, account: Account, *, rejected: str | None = None) -> str: ...


def _retry_after(response: httpx.Response) -> float:
    raw = (response.headers.get("retry-after") or "").strip()
    if not raw:
        return DEFAULT_RETRY_AFTER
    try:
        seconds = float(raw)
    except ValueError:
        try:
            seconds = (parsedate_to_datetime(raw) - datetime.now(UTC)).total_seconds()
        except (TypeError, ValueError):
            return DEFAULT_RETRY_AFTER
    return min(max(seconds, 1.0), MAX_RETRY_AFTER)


def _error_of(response: httpx.Response) -> tuple[str, str]:
    """(code, message) from Graph's `{"error": {"code", "message"}}`."""
    try:
        data = response.json()
    except ValueError:
        return "", response.text[:200]
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        return str(error.get("code") or ""), str(error.get("message") or "")
    return "", str(data)[:200]


class GraphClient:
    def __init__(self, tokens: TokenSource, api_base: str, *, http: httpx.AsyncClient | None = None) -> None:
        self.tokens = tokens
        self.api_base = api_base.rstrip("/")
        self._http = http
        self._own_http = http is None

    @property
    def http(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=_TIMEOUT, verify=verifying_context())
        return self._http

    async def close(self) -> None:
        if self._http is not None and self._own_http:
            await self._http.aclose()
            self._http = None

    def url(self, path: str) -> str:
        return path if path.startswith(("http://", "https://")) else f"{self.api_base}/{path.lstrip('/')}"

    # -- the one request path ----------------------------------------------------------------------------

    async def request(self, account: Account, method: str, path: str, *, params: Mapping[str, str] | None = None,
                      json: Any = None, prefer: tuple[str, ...] = (), content: bytes | None = None,
                      content_type: str | None = None) -> httpx.Response:
        headers = {"Accept": "application/json", "Prefer": ", ".join((_ID_PREFERENCE, *prefer))}
        if content_type is not None:
            headers["Content-Type"] = content_type
        token = await self.tokens.access_token(account)
        response = await self._send(method, path, params, json, headers, token, content)
        if response.status_code == 401:
            token = await self.tokens.refresh(account, rejected=token)
            response = await self._send(method, path, params, json, headers, token, content)
            if response.status_code == 401:
                code, message = _error_of(response)
                raise GraphAuthError(f"Microsoft refused plmail's access to this mailbox ({code}: {message}). "
                                     f"Connect the account again.", status=401, code=code)
        if response.status_code >= 400:
            raise self._error(response)
        return response

    async def _send(self, method: str, path: str, params: Mapping[str, str] | None, json: Any,
                    headers: dict[str, str], token: str, content: bytes | None = None) -> httpx.Response:
        try:
            return await self.http.request(method, self.url(path), params=params, json=json, content=content,
                                           headers={**headers, "Authorization": f"Bearer {token}"})
        except httpx.HTTPError as exc:
            raise GraphConnectionError(f"Microsoft Graph could not be reached: {type(exc).__name__}: {exc}") from exc

    def _error(self, response: httpx.Response) -> GraphError:
        status = response.status_code
        code, message = _error_of(response)
        text = f"Microsoft Graph answered {status}" + (f" ({code}: {message})" if code or message else "")
        if status == 429 or (status == 503 and "retry-after" in response.headers):
            return GraphThrottled(text, retry_after=_retry_after(response), status=status, code=code)
        if status == 410 or code in ("syncStateNotFound", "SyncStateNotFound", "resyncRequired"):
            return GraphSyncStateGone(text, status=status, code=code)
        if status == 404:
            return GraphNotFound(text, status=status, code=code)
        if status >= 500:
            return GraphConnectionError(text, status=status, code=code)
        return GraphRequestError(text, status=status, code=code)

    async def get_json(self, account: Account, path: str, *, params: Mapping[str, str] | None = None,
                       prefer: tuple[str, ...] = ()) -> dict[str, Any]:
        response = await self.request(account, "GET", path, params=params, prefer=prefer)
        data = response.json()
        if not isinstance(data, dict):
            raise GraphRequestError("Microsoft Graph sent something that is not a JSON object.",
                                    status=response.status_code)
        return data

    # -- folders -----------------------------------------------------------------------------------------

    async def folders(self, account: Account) -> list[RemoteFolder]:
        """Every visible mail folder, parents before children."""
        found: list[RemoteFolder] = []
        queue: list[str] = ["me/mailFolders"]
        while queue:
            path: str | None = queue.pop(0)
            params: dict[str, str] | None = {"$top": str(FOLDER_PAGE)}
            while path is not None:
                data = await self.get_json(account, path, params=params)
                for item in data.get("value") or []:
                    if isinstance(item, dict) and item.get("id"):
                        folder = remote_folder(item)
                        found.append(folder)
                        if folder.child_count:
                            queue.append(f"me/mailFolders/{quote(folder.id, safe='')}/childFolders")
                next_link = data.get("@odata.nextLink")
                path, params = (str(next_link), None) if next_link else (None, None)
        return found

    async def well_known(self, account: Account, name: str) -> RemoteFolder | None:
        """A folder by its well-known name (inbox, sentitems, drafts, deleteditems, junkemail, archive, ...)."""
        try:
            return remote_folder(await self.get_json(account, f"me/mailFolders/{name}"))
        except GraphNotFound:
            return None

    # -- messages ----------------------------------------------------------------------------------------

    async def delta(self, account: Account, folder_id: str, *, link: str | None = None,
                    since: datetime | None = None, newest_first: bool = False, page_size: int = PAGE_SIZE
                    ) -> DeltaPage:
        """One page of a folder's delta round: a fresh round (optionally only mail received since `since`, or
        newest first), or the next page of one (`link` = a next link), or what changed (`link` = a delta link)."""
        params: dict[str, str] | None = None
        path = link
        if path is None:
            path = f"me/mailFolders/{quote(folder_id, safe='')}/messages/delta"
            params = {"$select": MESSAGE_FIELDS}
            if since is not None:
                params["$filter"] = f"receivedDateTime ge {since.astimezone(UTC).strftime('%Y-%m-%dT%H:%M:%SZ')}"
            if newest_first:
                params["$orderby"] = "receivedDateTime desc"
        data = await self.get_json(account, path, params=params, prefer=(f"odata.maxpagesize={page_size}",))
        messages: list[RemoteMessage] = []
        removed: list[str] = []
        for item in data.get("value") or []:
            if not isinstance(item, dict) or not item.get("id"):
                continue
            if "@removed" in item:
                removed.append(str(item["id"]))
            else:
                messages.append(remote_message(item))
        next_link = data.get("@odata.nextLink")
        delta_link = data.get("@odata.deltaLink")
        return DeltaPage(tuple(messages), tuple(removed), str(next_link) if next_link else None,
                         str(delta_link) if delta_link else None)

    async def message(self, account: Account, message_id: str) -> RemoteMessage:
        return remote_message(await self.get_json(account, f"me/messages/{quote(message_id, safe='')}",
                                                  params={"$select": MESSAGE_FIELDS}))

    async def mime(self, account: Account, message_id: str) -> bytes:
        """The message's original MIME bytes (a second call per message, so only where they are needed)."""
        response = await self.request(account, "GET", f"me/messages/{quote(message_id, safe='')}/$value")
        return response.content

    async def update(self, account: Account, message_id: str, fields: dict[str, Any]) -> None:
        await self.request(account, "PATCH", f"me/messages/{quote(message_id, safe='')}", json=fields)

    async def move(self, account: Account, message_id: str, destination_id: str) -> RemoteMessage:
        """Move to another folder; returns the message as it is now, whose id may be new."""
        response = await self.request(account, "POST", f"me/messages/{quote(message_id, safe='')}/move",
                                      json={"destinationId": destination_id})
        data = response.json()
        if not isinstance(data, dict) or not data.get("id"):
            raise GraphRequestError("Microsoft Graph did not return the moved message.", status=response.status_code)
        return remote_message(data)

    # -- writing mail ------------------------------------------------------------------------------------

    async def me(self, account: Account) -> tuple[str, str, tuple[str, ...]]:
        """(the mailbox's address, the user's display name, its further addresses). The further addresses are the
        user's `proxyAddresses` other than the primary ("smtp:" in lower case; "SMTP:" marks the primary)."""
        data = await self.get_json(account, "me",
                                   params={"$select": "mail,userPrincipalName,displayName,proxyAddresses"})
        address = str(data.get("mail") or data.get("userPrincipalName") or "")
        listed = data.get("proxyAddresses")
        proxies: list[Any] = listed if isinstance(listed, list) else []
        aliases = tuple(dict.fromkeys(
            str(p)[5:] for p in proxies
            if isinstance(p, str) and p.startswith("smtp:") and "@" in p and str(p)[5:].lower() != address.lower()))
        return address, str(data.get("displayName") or ""), aliases

    async def create_mime_draft(self, account: Account, raw: bytes) -> str:
        """A draft in Drafts from MIME (the body is the message in base64, sent as text/plain); returns its id."""
        response = await self.request(account, "POST", "me/messages", content=base64.b64encode(raw),
                                      content_type="text/plain")
        data = response.json()
        if not isinstance(data, dict) or not data.get("id"):
            raise GraphRequestError("Microsoft Graph did not return the new draft.", status=response.status_code)
        return str(data["id"])

    async def create_in_folder(self, account: Account, folder: str, message: dict[str, Any]) -> str:
        """A message created as JSON in `folder` (an id or a well-known name such as `sentitems`); returns its id."""
        response = await self.request(account, "POST", f"me/mailFolders/{quote(folder, safe='')}/messages",
                                      json=message)
        data = response.json()
        if not isinstance(data, dict) or not data.get("id"):
            raise GraphRequestError("Microsoft Graph did not return the new message.", status=response.status_code)
        return str(data["id"])

    async def sent_items_with(self, account: Account, internet_message_id: str) -> list[RemoteMessage]:
        """The messages of Sent Items that carry this Message-ID (an OData string: a quote in it doubled)."""
        literal = internet_message_id.replace("'", "''")
        data = await self.get_json(account, "me/mailFolders/sentitems/messages", params={
            "$filter": f"internetMessageId eq '{literal}'", "$select": "id,isDraft,internetMessageId"})
        return [remote_message(item) for item in data.get("value") or [] if isinstance(item, dict) and item.get("id")]

    async def add_attachment(self, account: Account, message_id: str, attachment: dict[str, Any]) -> None:
        """One attachment (a fileAttachment under 3 MB) added to a message."""
        await self.request(account, "POST", f"me/messages/{quote(message_id, safe='')}/attachments", json=attachment)

    async def upload_attachment(self, account: Account, message_id: str, item: dict[str, Any],
                                content: bytes) -> None:
        """A file of 3 to 150 MB attached through an upload session: its bytes PUT in order, in ranges under 4 MB,
        to the session's pre-authenticated URL ("Do not specify an Authorization request header")."""
        response = await self.request(account, "POST",
                                      f"me/messages/{quote(message_id, safe='')}/attachments/createUploadSession",
                                      json={"AttachmentItem": item})
        data = response.json()
        url = data.get("uploadUrl") if isinstance(data, dict) else None
        if not isinstance(url, str) or not url:
            raise GraphRequestError("Microsoft Graph did not return an upload URL.", status=response.status_code)
        start = 0
        while start < len(content):
            chunk = content[start:start + UPLOAD_RANGE]
            end = start + len(chunk) - 1
            try:
                answered = await self.http.put(url, content=chunk, headers={
                    "Content-Type": "application/octet-stream", "Content-Range": f"bytes {start}-{end}/{len(content)}"})
            except httpx.HTTPError as exc:
                raise GraphConnectionError(f"Microsoft could not be reached: {type(exc).__name__}: {exc}") from exc
            if answered.status_code >= 400:
                raise self._error(answered)
            start = end + 1

    async def delete_message(self, account: Account, message_id: str) -> None:
        await self.request(account, "DELETE", f"me/messages/{quote(message_id, safe='')}")

    async def send_draft(self, account: Account, message_id: str) -> None:
        """Send a draft as Graph holds it; Graph files it in Sent Items (with an immutable id, under the same id)."""
        await self.request(account, "POST", f"me/messages/{quote(message_id, safe='')}/send")

    async def send_mime(self, account: Account, raw: bytes) -> None:
        """sendMail with the message as MIME (base64, text/plain); Graph files a copy in Sent Items."""
        await self.request(account, "POST", "me/sendMail", content=base64.b64encode(raw), content_type="text/plain")
