"""The Gmail REST API (v1) over httpx, for one account at a time, paced by the shared quota.

Every call first takes its units from `GmailQuotaPacer`, then an access token from `OAuthTokens`; a 401 gets
one refresh and one retry. A refusal for quota (429, or 403 with a rate-limit reason) teaches the pacer and
raises `GmailQuotaDeferred`; everything else Gmail refuses is a `GmailApiError` that says whether trying again
can help. Message fetches go five at a time, as one paced request of five messages.
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import httpx

from plmail.domain.account_services import OAuthProvider
from plmail.domain.errors import PlmailError
from plmail.domain.models import Account
from plmail.providers.gmail.pacer import (
    MESSAGES_PER_REQUEST,
    UNITS_BATCH_MODIFY,
    UNITS_DRAFT_CREATE,
    UNITS_DRAFT_DELETE,
    UNITS_DRAFT_LIST,
    UNITS_DRAFT_UPDATE,
    UNITS_HISTORY,
    UNITS_LABEL_CREATE,
    UNITS_LABEL_READ,
    UNITS_LIST,
    UNITS_PER_MESSAGE,
    UNITS_SEND,
    UNITS_SEND_AS_LIST,
    UNITS_SMALL,
    GmailQuotaDeferred,
    GmailQuotaPacer,
)
from plmail.providers.oauth import OAuthTokens
from plmail.providers.oauth_apps import OAuthAppStore
from plmail.tls import verifying_context

log = logging.getLogger(__name__)

UNITS_MESSAGE_DELETE = 10  # Gmail's published cost of users.messages.delete
UNITS_MESSAGE_INSERT = 25  # users.messages.insert
UNITS_WATCH = 100  # users.watch, as Gmail's quota table lists it
UNITS_WATCH_STOP = 50  # users.stop

LIST_PAGE = 500
_RATE_REASONS = {"rateLimitExceeded", "userRateLimitExceeded", "quotaExceeded", "dailyLimitExceeded"}


class GmailApiError(PlmailError):
    def __init__(self, message: str, *, status: int = 0, reason: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason

    @property
    def retryable(self) -> bool:
        return self.status == 0 or self.status >= 500 or self.status == 408


class GmailNotFound(GmailApiError):
    """404: an unknown or deleted message, or (for history) a start id older than Gmail keeps."""


class _RateLimited(Exception):
    """A quota refusal not yet told to the pacer (requests sent together report it once)."""

    def __init__(self, limit_value: int | None, retry_after: float | None) -> None:
        super().__init__("rate limited")
        self.limit_value = limit_value
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class GmailLabelInfo:
    id: str
    name: str
    type: str  # system | user


@dataclass(frozen=True, slots=True)
class ListedPage:
    ids: tuple[str, ...]
    next_token: str | None
    estimate: int


@dataclass(frozen=True, slots=True)
class FetchedGmail:
    id: str
    thread_id: str
    label_ids: tuple[str, ...]
    internal_date: datetime | None
    raw: bytes | None  # None for a label read (format=minimal)


@dataclass(frozen=True, slots=True)
class FetchResult:
    fetched: dict[str, FetchedGmail] = field(default_factory=dict)
    gone: frozenset[str] = frozenset()
    deferred_until: datetime | None = None  # the quota ran out before every id was asked for


@dataclass(frozen=True, slots=True)
class HistoryChanges:
    added: dict[str, tuple[str, ...]]  # id -> labels as the record saw them
    deleted: frozenset[str]
    relabelled: frozenset[str]
    history_id: str | None


@dataclass(frozen=True, slots=True)
class Profile:
    email: str
    messages_total: int
    history_id: str


@dataclass(frozen=True, slots=True)
class GmailMessageRef:
    id: str
    thread_id: str


@dataclass(frozen=True, slots=True)
class GmailDraft:
    id: str  # the draft's own id, which stays while its message is replaced
    message: GmailMessageRef


@dataclass(frozen=True, slots=True)
class GmailSendAs:
    """One of users.settings.sendAs: an address the account may send as."""

    email: str
    display_name: str
    reply_to: str
    signature: str  # HTML
    is_primary: bool
    is_default: bool
    verified: bool  # false while Gmail waits for the owner of the address to confirm it


def _message_ref(data: Any) -> GmailMessageRef:
    if not isinstance(data, dict) or not data.get("id"):
        raise GmailApiError("Gmail answered without the message's id.")
    return GmailMessageRef(str(data["id"]), str(data.get("threadId") or data["id"]))


def _draft(data: Any) -> GmailDraft:
    if not isinstance(data, dict) or not data.get("id"):
        raise GmailApiError("Gmail answered without the draft's id.")
    return GmailDraft(str(data["id"]), _message_ref(data.get("message")))


def _outgoing(raw: bytes, thread_id: str | None) -> dict[str, Any]:
    message: dict[str, Any] = {"raw": base64.urlsafe_b64encode(raw).decode("ascii")}
    if thread_id:
        message["threadId"] = thread_id
    return message


def _error_details(response: httpx.Response) -> tuple[str, str, int | None]:
    """(message, reason, quota_limit_value) from Google's error JSON."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:300] or f"HTTP {response.status_code}", "", None
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return str(error or f"HTTP {response.status_code}"), "", None
    message = str(error.get("message") or f"HTTP {response.status_code}")
    errors = error.get("errors")
    reason = str(errors[0].get("reason") or "") if isinstance(errors, list) and errors and isinstance(
        errors[0], dict) else ""
    limit: int | None = None
    for detail in error.get("details") or []:
        metadata = detail.get("metadata") if isinstance(detail, dict) else None
        if isinstance(metadata, dict) and str(metadata.get("quota_limit_value", "")).isdigit():
            limit = int(metadata["quota_limit_value"])
    return message, reason, limit


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if not value:
        return None
    if value.strip().isdigit():
        return float(value)
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max((moment - datetime.now(UTC)).total_seconds(), 0.0)


def _b64(data: str) -> bytes:
    return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))


def _fetched(data: dict[str, Any]) -> FetchedGmail:
    internal = str(data.get("internalDate") or "")
    return FetchedGmail(
        id=str(data["id"]), thread_id=str(data.get("threadId") or data["id"]),
        label_ids=tuple(str(x) for x in data.get("labelIds") or ()),
        internal_date=datetime.fromtimestamp(int(internal) / 1000, UTC) if internal.isdigit() else None,
        raw=_b64(str(data["raw"])) if data.get("raw") else None,
    )


class GmailApi:
    """Shared by every account: the HTTP client, the pacer, tokens and the app's client id."""

    def __init__(self, api_base: str, tokens: OAuthTokens, apps: OAuthAppStore, pacer: GmailQuotaPacer, *,
                 http: httpx.AsyncClient | None = None) -> None:
        self.api_base = api_base.rstrip("/")
        self.tokens = tokens
        self.apps = apps
        self.pacer = pacer
        self.http = http or httpx.AsyncClient(timeout=httpx.Timeout(60.0, connect=10.0), verify=verifying_context(),
                                              limits=httpx.Limits(max_connections=50))

    async def close(self) -> None:
        await self.http.aclose()

    async def session(self, account: Account) -> GmailSession:
        client = await self.apps.require(OAuthProvider.GOOGLE)
        return GmailSession(self, account, client.client_id)


class GmailSession:
    """API calls for one account (`users/me`)."""

    def __init__(self, api: GmailApi, account: Account, client_id: str) -> None:
        self.api = api
        self.account = account
        self.client_id = client_id
        self._base = f"{api.api_base}/users/me"

    async def _call(self, method: str, path: str, *, units: int, params: Any = None,
                    body: dict[str, Any] | None = None) -> httpx.Response:
        await self.api.pacer.spend(self.account.id, self.client_id, units)
        try:
            return await self._unpaced(method, path, params=params, body=body)
        except _RateLimited as limited:
            raise GmailQuotaDeferred(await self._refused([limited])) from None

    async def _refused(self, refusals: Sequence[_RateLimited]) -> datetime:
        limits = [r.limit_value for r in refusals if r.limit_value is not None]
        waits = [r.retry_after for r in refusals if r.retry_after is not None]
        return await self.api.pacer.rejected(self.account.id, self.client_id,
                                             limit_value=max(limits) if limits else None,
                                             retry_after=max(waits) if waits else None)

    async def _unpaced(self, method: str, path: str, *, params: Any = None,
                       body: dict[str, Any] | None = None) -> httpx.Response:
        token = await self.api.tokens.access_token(self.account)
        response = await self._send(method, path, token, params, body)
        if response.status_code == 401:
            token = await self.api.tokens.refresh(self.account, rejected=token)
            response = await self._send(method, path, token, params, body)
        if response.status_code < 400:
            return response
        message, reason, limit = _error_details(response)
        if response.status_code == 429 or (response.status_code == 403 and reason in _RATE_REASONS):
            raise _RateLimited(limit, _retry_after(response))
        if response.status_code == 404:
            raise GmailNotFound(message, status=404, reason=reason)
        if response.status_code == 401:
            raise GmailApiError(f"Gmail refused the account's sign-in: {message}", status=401, reason=reason)
        raise GmailApiError(f"Gmail answered {response.status_code}: {message}", status=response.status_code,
                            reason=reason)

    async def _send(self, method: str, path: str, token: str, params: Any,
                    body: dict[str, Any] | None) -> httpx.Response:
        try:
            return await self.api.http.request(method, f"{self._base}{path}", params=params, json=body,
                                               headers={"Authorization": f"Bearer {token}"})
        except httpx.HTTPError as exc:
            raise GmailApiError(f"Gmail could not be reached: {exc}") from exc

    # -- reads ---------------------------------------------------------------------------------------------
    async def profile(self) -> Profile:
        data = (await self._call("GET", "/profile", units=UNITS_SMALL)).json()
        return Profile(str(data.get("emailAddress") or ""), int(data.get("messagesTotal") or 0),
                       str(data["historyId"]))

    async def labels(self) -> list[GmailLabelInfo]:
        data = (await self._call("GET", "/labels", units=UNITS_SMALL)).json()
        return [GmailLabelInfo(str(x["id"]), str(x.get("name") or x["id"]), str(x.get("type") or "user"))
                for x in data.get("labels") or []]

    async def list_page(self, *, label_ids: Sequence[str] = (), include_spam_trash: bool = False,
                        page_token: str | None = None, max_results: int = LIST_PAGE) -> ListedPage:
        params: list[tuple[str, str]] = [("maxResults", str(max_results))]
        params += [("labelIds", label) for label in label_ids]
        if include_spam_trash:
            params.append(("includeSpamTrash", "true"))
        if page_token:
            params.append(("pageToken", page_token))
        data = (await self._call("GET", "/messages", units=UNITS_LIST, params=params)).json()
        return ListedPage(tuple(str(m["id"]) for m in data.get("messages") or ()),
                          str(data["nextPageToken"]) if data.get("nextPageToken") else None,
                          int(data.get("resultSizeEstimate") or 0))

    async def history(self, start_history_id: str) -> HistoryChanges:
        """Every change since `start_history_id`, all pages; GmailNotFound when that start is too old."""
        added: dict[str, tuple[str, ...]] = {}
        deleted: set[str] = set()
        relabelled: set[str] = set()
        token: str | None = None
        latest: str | None = None
        while True:
            params: list[tuple[str, str]] = [("startHistoryId", start_history_id), ("maxResults", str(LIST_PAGE))]
            params += [("historyTypes", t) for t in ("messageAdded", "messageDeleted", "labelAdded", "labelRemoved")]
            if token:
                params.append(("pageToken", token))
            data = (await self._call("GET", "/history", units=UNITS_HISTORY, params=params)).json()
            for record in data.get("history") or ():
                for item in record.get("messagesAdded") or ():
                    message = item.get("message") or {}
                    added[str(message["id"])] = tuple(str(x) for x in message.get("labelIds") or ())
                    deleted.discard(str(message["id"]))
                for item in record.get("messagesDeleted") or ():
                    message_id = str((item.get("message") or {})["id"])
                    deleted.add(message_id)
                    added.pop(message_id, None)
                    relabelled.discard(message_id)
                for key in ("labelsAdded", "labelsRemoved"):
                    for item in record.get(key) or ():
                        message_id = str((item.get("message") or {})["id"])
                        if message_id not in deleted:
                            relabelled.add(message_id)
            latest = str(data["historyId"]) if data.get("historyId") else latest
            token = str(data["nextPageToken"]) if data.get("nextPageToken") else None
            if token is None:
                break
        return HistoryChanges(added, frozenset(deleted), frozenset(relabelled - set(added)), latest)

    async def fetch(self, ids: Sequence[str], *, labels_only: bool = False) -> FetchResult:
        """The messages (format=raw, or format=minimal for `labels_only`), five per paced request. Ids Gmail
        answers with 404 are `gone`; when the quota runs out, what was fetched so far comes back with
        `deferred_until`."""
        fetched: dict[str, FetchedGmail] = {}
        gone: set[str] = set()
        deferred_until: datetime | None = None
        async for part in self.fetch_by_request(ids, labels_only=labels_only):
            fetched.update(part.fetched)
            gone |= part.gone
            deferred_until = part.deferred_until
        return FetchResult(fetched, frozenset(gone), deferred_until)

    async def fetch_by_request(self, ids: Sequence[str], *, labels_only: bool = False
                               ) -> AsyncIterator[FetchResult]:
        """As `fetch`, one paced request's result at a time, so a caller can let go of what it has stored
        before the next arrives; a result with `deferred_until` is the last."""
        per_message = UNITS_LABEL_READ if labels_only else UNITS_PER_MESSAGE
        params = {"format": "minimal" if labels_only else "raw"}
        for start in range(0, len(ids), MESSAGES_PER_REQUEST):
            group = ids[start:start + MESSAGES_PER_REQUEST]
            try:
                await self.api.pacer.spend(self.account.id, self.client_id, per_message * len(group))
            except GmailQuotaDeferred as deferred:
                yield FetchResult(deferred_until=deferred.until)
                return
            results = await asyncio.gather(
                *(self._unpaced("GET", f"/messages/{quote(i, safe='')}", params=params) for i in group),
                return_exceptions=True,
            )
            fetched: dict[str, FetchedGmail] = {}
            gone: set[str] = set()
            refusals: list[_RateLimited] = []
            for message_id, result in zip(group, results, strict=True):
                if isinstance(result, GmailNotFound):
                    gone.add(message_id)
                elif isinstance(result, _RateLimited):
                    refusals.append(result)
                elif isinstance(result, BaseException):
                    raise result
                else:
                    fetched[message_id] = _fetched(result.json())
            if refusals:  # the five were one request as far as the quota goes: one refusal
                yield FetchResult(fetched, frozenset(gone), await self._refused(refusals))
                return
            yield FetchResult(fetched, frozenset(gone))

    # -- writes --------------------------------------------------------------------------------------------
    async def batch_modify(self, ids: Sequence[str], *, add: Sequence[str] = (), remove: Sequence[str] = ()) -> None:
        for start in range(0, len(ids), 1000):
            await self._call("POST", "/messages/batchModify", units=UNITS_BATCH_MODIFY,
                             body={"ids": list(ids[start:start + 1000]), "addLabelIds": list(add),
                                   "removeLabelIds": list(remove)})

    # -- writing mail ----------------------------------------------------------------------------------------
    async def send_as(self) -> list[GmailSendAs]:
        data = (await self._call("GET", "/settings/sendAs", units=UNITS_SEND_AS_LIST)).json()
        return [GmailSendAs(email=str(x["sendAsEmail"]), display_name=str(x.get("displayName") or ""),
                            reply_to=str(x.get("replyToAddress") or ""), signature=str(x.get("signature") or ""),
                            is_primary=bool(x.get("isPrimary")), is_default=bool(x.get("isDefault")),
                            verified=x.get("verificationStatus") in (None, "accepted"))
                for x in data.get("sendAs") or [] if isinstance(x, dict) and x.get("sendAsEmail")]

    async def send(self, raw: bytes, *, thread_id: str | None) -> GmailMessageRef:
        """users.messages.send: Gmail delivers to the header's recipients (Bcc included, and removed from what
        they receive) and files the message under SENT."""
        response = await self._call("POST", "/messages/send", units=UNITS_SEND, body=_outgoing(raw, thread_id))
        return _message_ref(response.json())

    async def insert(self, raw: bytes, *, label_ids: Sequence[str], thread_id: str | None) -> GmailMessageRef:
        """users.messages.insert: the message put in the mailbox like IMAP APPEND, under `label_ids`, sending
        nothing; dated by its Date header."""
        body = {**_outgoing(raw, thread_id), "labelIds": list(label_ids)}
        response = await self._call("POST", "/messages", units=UNITS_MESSAGE_INSERT,
                                    params={"internalDateSource": "dateHeader"}, body=body)
        return _message_ref(response.json())

    async def create_draft(self, raw: bytes, *, thread_id: str | None) -> GmailDraft:
        response = await self._call("POST", "/drafts", units=UNITS_DRAFT_CREATE,
                                    body={"message": _outgoing(raw, thread_id)})
        return _draft(response.json())

    async def update_draft(self, draft_id: str, raw: bytes, *, thread_id: str | None) -> GmailDraft:
        """drafts.update: the draft keeps its id, its message is a new one (GmailNotFound: it is gone)."""
        response = await self._call("PUT", f"/drafts/{quote(draft_id, safe='')}", units=UNITS_DRAFT_UPDATE,
                                    body={"id": draft_id, "message": _outgoing(raw, thread_id)})
        return _draft(response.json())

    async def delete_draft(self, draft_id: str) -> None:
        await self._call("DELETE", f"/drafts/{quote(draft_id, safe='')}", units=UNITS_DRAFT_DELETE)

    async def drafts_page(self, page_token: str | None = None) -> tuple[list[GmailDraft], str | None]:
        params: list[tuple[str, str]] = [("maxResults", str(LIST_PAGE))]
        if page_token:
            params.append(("pageToken", page_token))
        data = (await self._call("GET", "/drafts", units=UNITS_DRAFT_LIST, params=params)).json()
        drafts = [_draft(x) for x in data.get("drafts") or []]
        return drafts, str(data["nextPageToken"]) if data.get("nextPageToken") else None

    async def create_label(self, name: str) -> GmailLabelInfo:
        data = (await self._call("POST", "/labels", units=UNITS_LABEL_CREATE,
                                 body={"name": name, "labelListVisibility": "labelShow",
                                       "messageListVisibility": "show"})).json()
        return GmailLabelInfo(str(data["id"]), str(data.get("name") or name), "user")

    async def delete_message(self, gmail_id: str) -> None:
        """users.messages.delete: gone for good, not in Trash (needs the https://mail.google.com/ scope)."""
        await self._call("DELETE", f"/messages/{gmail_id}", units=UNITS_MESSAGE_DELETE)

    # -- push (users.watch / users.stop) -----------------------------------------------------------------------
    async def watch(self, topic: str) -> GmailWatch:
        """users.watch: Gmail publishes every change of the mailbox to `topic` until the returned expiration."""
        data = (await self._call("POST", "/watch", units=UNITS_WATCH, body={"topicName": topic})).json()
        expiration = datetime.fromtimestamp(int(data["expiration"]) / 1000, UTC)
        return GmailWatch(str(data["historyId"]), expiration)

    async def stop_watch(self) -> None:
        """users.stop: no more notifications for this mailbox."""
        await self._call("POST", "/stop", units=UNITS_WATCH_STOP)


@dataclass(frozen=True, slots=True)
class GmailWatch:
    history_id: str
    expiration: datetime
