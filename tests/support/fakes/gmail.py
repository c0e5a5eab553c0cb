"""A fake Gmail API (v1) and Google OAuth 2 server, stateful and in memory, for tests.

Follows https://developers.google.com/gmail/api/reference/rest and Google's OAuth 2 docs for the
parts plmail uses. Paths are the real ones without the host, so a client only swaps its base URLs:

API (`{base}/gmail/v1/users/{userId}/...`, `userId` = `me` or the mailbox address):
- `GET  profile`                               users.getProfile: emailAddress, messagesTotal (spam and
                                               trash included), threadsTotal, historyId
- `GET  labels`, `GET labels/{id}`             users.labels.list / get (system labels, user labels with
                                               nested `Work/Invoices` names; get adds the counts)
- `POST labels`                                users.labels.create {name, labelListVisibility,
                                               messageListVisibility}; 409 when the name exists
- `GET  messages`                              users.messages.list: q (`in:`, `label:`, `is:`,
                                               `category:`, `-` negation; anything else is a 400 so a
                                               test never trusts a filter the fake ignores), labelIds
                                               (repeated, AND), includeSpamTrash (default false),
                                               maxResults (default 100, capped at 500), pageToken,
                                               resultSizeEstimate; newest first
- `GET  messages/{id}`                         users.messages.get, format=full|metadata|minimal|raw,
                                               metadataHeaders; id, threadId, labelIds, snippet,
                                               historyId, internalDate, sizeEstimate, payload / raw
                                               (base64url)
- `GET  messages/{id}/attachments/{aid}`       users.messages.attachments.get
- `POST messages/batchModify`                  ids (≤ 1000), addLabelIds, removeLabelIds → 204 (unknown
                                               or gone ids are skipped; a bad label is a 400)
- `POST messages/{id}/modify|trash|untrash`    → the message (minimal form); trash adds TRASH and
                                               keeps the other labels, so untrash restores them
- `DELETE messages/{id}`                       permanent delete → 204
- `GET  settings/sendAs`                       users.settings.sendAs.list: the addresses the account may
                                               send as (the mailbox's own, isPrimary and isDefault; aliases
                                               from `add_send_as`, with displayName, replyToAddress, HTML
                                               signature, verificationStatus)
- `GET  drafts`, `GET drafts/{id}`             users.drafts.list (id + message id/threadId) / get (format)
- `POST drafts`, `PUT drafts/{id}`             users.drafts.create / update {message: {raw, threadId}}: the
                                               draft's message gets the DRAFT label; an update replaces the
                                               message (a new message id, the draft id stays); 404 for an
                                               unknown draft
- `DELETE drafts/{id}`                         users.drafts.delete → 204 (the message is deleted)
- `POST messages/send`                         users.messages.send {raw, threadId}: delivers to the To, Cc
                                               and Bcc of the message (`mailbox.deliveries`: what recipients
                                               receive, without the Bcc header) and keeps the sender's copy,
                                               Bcc included, with the SENT label. A From that is no send-as
                                               address is replaced by the primary one, as Gmail does. A
                                               message joins `threadId` only when it answers a message of that
                                               thread (In-Reply-To/References) with the same subject, else it
                                               starts a thread; an unknown threadId is a 404.
- `POST messages`                              users.messages.insert {raw, threadId, labelIds}: the message put in
                                               the mailbox under labelIds (unknown id → 400 "Invalid label"),
                                               sending nothing, like IMAP APPEND
- `GET  history`                               users.history.list: startHistoryId, historyTypes,
                                               labelId, maxResults, pageToken; records with
                                               messages/messagesAdded/messagesDeleted/labelsAdded/
                                               labelsRemoved; 404 when startHistoryId is older than
                                               the retained history
OAuth (Google's hosts, here the same server):
- `GET  /o/oauth2/v2/auth`   consent: redirects to redirect_uri with code+state (or error=access_denied)
- `POST /token`              grant_type=authorization_code (PKCE S256/plain) | refresh_token;
                             400 invalid_grant for revoked/unknown/reused codes and tokens,
                             401 invalid_client
- `POST /revoke`, `GET /oauth2/v3/userinfo`
- `POST users/me/watch` {topicName} → {historyId, expiration} (7 days; 400 for a malformed topic name, 404 for
  an unknown topic, 403 when the topic does not grant Gmail's publisher); `POST users/me/stop` → 204;
  `await fake.notify(email)` publishes {emailAddress, historyId} through `fake.pubsub` (pubsub.py) to the
  topic's push subscription, signed with the key served at `GET /oauth2/v3/certs` (Google's JWKS)

Errors use Google's JSON shape `{"error": {"code", "message", "errors": [{"message", "domain",
"reason"}], "status"}}`: 401 authError (with `WWW-Authenticate`), 403 forbidden (another user's
mailbox), 404 notFound (unknown or listed-then-gone id, expired history), 400 invalidArgument, and
403 insufficientPermissions ("Request had insufficient authentication scopes", `ErrorInfo`
ACCESS_TOKEN_SCOPE_INSUFFICIENT) when the access token's grant lacks every scope Google lists for a
writing method (a token from `oauth.issue(user, scope="https://www.googleapis.com/auth/gmail.readonly")`),
429 rateLimitExceeded (or userRateLimitExceeded) with `Retry-After` and a `google.rpc.ErrorInfo`
detail carrying `quota_limit_value` when the per-user units-per-minute quota is used up. Per-method
costs are Google's published table (`DEFAULT_COSTS`); `quota.set_fetch_units(60)` models the 60 units
plmail measured for format=raw/full.

Seeding and inspection go through `GmailMailbox` (`fake.mailbox`, or `fake.add_mailbox(email)` for
more accounts): `add_message`, `add_chat`, `add_label`, `modify`, `trash`, `untrash`, `delete`,
`mark_gone` (listed but 404 on get), `expire_history`, `history_retention`, `messages`, `labels`,
`history`, `add_send_as`, `drafts`, `deliveries`. Every change writes history like Gmail does.
`fake.calls` records every API request; `fake.fail_next(method, error)` answers the next call of a method
(`users.messages.send`, `users.drafts.create`, ...) with one of Google's documented errors instead;
`fake.before_next(method, action)` awaits `action` before the next call of a method is answered.
"""

from __future__ import annotations

import base64
import hashlib
import html
import itertools
import math
import random
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal
from urllib.parse import urlencode

import httpx

from tests.support.fakes import _mime, _outgoing
from tests.support.fakes._asgi import AsgiApp, HttpError, Request, Response, empty_response, json_response
from tests.support.fakes.clock import Clock, SystemClock
from tests.support.fakes.oauth import OAuthFailure, OAuthState
from tests.support.fakes.pubsub import GMAIL_PUBLISHER, GooglePubSub

SYSTEM_LABELS: tuple[str, ...] = (
    "INBOX", "SENT", "DRAFT", "TRASH", "SPAM", "STARRED", "UNREAD", "IMPORTANT", "CHAT",
    "CATEGORY_PERSONAL", "CATEGORY_SOCIAL", "CATEGORY_PROMOTIONS", "CATEGORY_UPDATES", "CATEGORY_FORUMS",
)
_HIDDEN_SYSTEM = {"CHAT", "TRASH", "SPAM", "IMPORTANT", "CATEGORY_PERSONAL", "CATEGORY_SOCIAL",
                  "CATEGORY_PROMOTIONS", "CATEGORY_UPDATES", "CATEGORY_FORUMS"}
_NOT_USER_SETTABLE = {"DRAFT", "SENT", "CHAT"}

# https://developers.google.com/gmail/api/reference/quota — units per method call
DEFAULT_COSTS: dict[str, int] = {
    "users.getProfile": 1,
    "users.labels.list": 1,
    "users.labels.get": 1,
    "users.labels.create": 5,
    "users.messages.list": 5,
    "users.messages.get": 5,
    "users.messages.attachments.get": 5,
    "users.messages.modify": 5,
    "users.messages.trash": 5,
    "users.messages.untrash": 5,
    "users.messages.delete": 10,
    "users.messages.batchModify": 50,
    "users.history.list": 2,
    "users.messages.send": 100,
    "users.messages.insert": 25,
    "users.drafts.create": 10,
    "users.drafts.update": 15,
    "users.drafts.delete": 10,
    "users.drafts.get": 5,
    "users.drafts.list": 5,
    "users.settings.sendAs.list": 1,
    "users.watch": 100,
    "users.stop": 50,
}

# The scopes Google lists for each method (any one of them suffices); methods not listed are not checked.
_FULL = "https://mail.google.com/"
_MODIFY = "https://www.googleapis.com/auth/gmail.modify"
_COMPOSE = "https://www.googleapis.com/auth/gmail.compose"
_READONLY = "https://www.googleapis.com/auth/gmail.readonly"
METHOD_SCOPES: dict[str, frozenset[str]] = {
    "users.messages.send": frozenset({_FULL, _MODIFY, _COMPOSE, "https://www.googleapis.com/auth/gmail.send"}),
    "users.messages.insert": frozenset({_FULL, _MODIFY, "https://www.googleapis.com/auth/gmail.insert"}),
    "users.drafts.create": frozenset({_FULL, _MODIFY, _COMPOSE}),
    "users.drafts.update": frozenset({_FULL, _MODIFY, _COMPOSE}),
    "users.drafts.delete": frozenset({_FULL, _MODIFY, _COMPOSE}),
    "users.drafts.get": frozenset({_FULL, _MODIFY, _COMPOSE, _READONLY}),
    "users.drafts.list": frozenset({_FULL, _MODIFY, _COMPOSE, _READONLY}),
    "users.settings.sendAs.list": frozenset({_FULL, _MODIFY, _READONLY,
                                             "https://www.googleapis.com/auth/gmail.settings.basic"}),
    "users.messages.delete": frozenset({_FULL}),  # deleting for good: gmail.modify may only trash
}
InjectedError = Literal["rateLimitExceeded", "insufficientPermissions", "notFound", "backendError",
                        "invalidArgument"]

HistoryType = Literal["messageAdded", "messageDeleted", "labelAdded", "labelRemoved"]
_HISTORY_TYPES: tuple[str, ...] = ("messageAdded", "messageDeleted", "labelAdded", "labelRemoved")
_CATEGORIES = {"primary": "CATEGORY_PERSONAL", "personal": "CATEGORY_PERSONAL", "social": "CATEGORY_SOCIAL",
               "promotions": "CATEGORY_PROMOTIONS", "updates": "CATEGORY_UPDATES", "forums": "CATEGORY_FORUMS"}
_IN_LABELS = {"inbox": "INBOX", "sent": "SENT", "draft": "DRAFT", "drafts": "DRAFT", "spam": "SPAM",
              "trash": "TRASH", "chats": "CHAT", "chat": "CHAT", "starred": "STARRED", "important": "IMPORTANT"}
_IS_LABELS = {"unread": "UNREAD", "starred": "STARRED", "important": "IMPORTANT", "chat": "CHAT"}


# --- Google's error format ---------------------------------------------------------------------
_STATUS_NAMES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                 409: "ALREADY_EXISTS", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL"}


def google_error(code: int, message: str, reason: str, *, domain: str = "global",
                 details: list[dict[str, Any]] | None = None, headers: Iterable[tuple[str, str]] = (),
                 extra: dict[str, str] | None = None) -> Response:
    """`{"error": {"code", "message", "errors": [...], "status"}}` as Google APIs answer."""
    item: dict[str, str] = {"message": message, "domain": domain, "reason": reason, **(extra or {})}
    body: dict[str, Any] = {"code": code, "message": message, "errors": [item],
                            "status": _STATUS_NAMES.get(code, "UNKNOWN")}
    if details:
        body["details"] = details
    return json_response({"error": body}, code, headers)


def _not_found() -> HttpError:
    return HttpError(google_error(404, "Requested entity was not found.", "notFound"))


def _invalid(message: str) -> HttpError:
    return HttpError(google_error(400, message, "invalidArgument"))


WATCH_DAYS = 7  # "a watch expires after 7 days" (users.watch)


@dataclass
class GmailWatchState:
    topic: str
    expiration_ms: int
    history_id: int


# --- the mailbox model -------------------------------------------------------------------------
@dataclass
class GmailLabel:
    id: str
    name: str
    type: Literal["system", "user"]
    message_list_visibility: str | None = None
    label_list_visibility: str | None = None

    def resource(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "name": self.name}
        if self.message_list_visibility:
            data["messageListVisibility"] = self.message_list_visibility
        if self.label_list_visibility:
            data["labelListVisibility"] = self.label_list_visibility
        data["type"] = self.type
        return data


@dataclass
class GmailMessage:
    id: str
    thread_id: str
    raw: bytes
    label_ids: list[str]
    internal_date: int
    history_id: int
    gone: bool = False
    _parsed: _mime.Parsed | None = field(default=None, repr=False)

    @property
    def parsed(self) -> _mime.Parsed:
        if self._parsed is None:
            self._parsed = _mime.parse(self.raw)
        return self._parsed

    @property
    def size_estimate(self) -> int:
        return len(self.raw)

    @property
    def snippet(self) -> str:
        return html.escape(_mime.preview(self.parsed, 200))

    def header(self, name: str) -> str | None:
        return self.parsed.header(name)

    def ref(self) -> MessageRef:
        return MessageRef(self.id, self.thread_id, tuple(self.label_ids))


@dataclass(frozen=True)
class MessageRef:
    """A message as a history record saw it at the time of the change."""

    id: str
    thread_id: str
    label_ids: tuple[str, ...]

    def resource(self, *, labels: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "threadId": self.thread_id}
        if labels and self.label_ids:
            data["labelIds"] = list(self.label_ids)
        return data


@dataclass
class HistoryRecord:
    id: int
    messages_added: list[MessageRef] = field(default_factory=list)
    messages_deleted: list[MessageRef] = field(default_factory=list)
    labels_added: list[tuple[MessageRef, tuple[str, ...]]] = field(default_factory=list)
    labels_removed: list[tuple[MessageRef, tuple[str, ...]]] = field(default_factory=list)

    def resource(self, types: set[str], label_id: str | None) -> dict[str, Any] | None:
        def keep(ref: MessageRef, changed: tuple[str, ...] = ()) -> bool:
            return label_id is None or label_id in ref.label_ids or label_id in changed

        data: dict[str, Any] = {"id": str(self.id)}
        touched: list[MessageRef] = []
        if "messageAdded" in types:
            added = [r for r in self.messages_added if keep(r)]
            if added:
                data["messagesAdded"] = [{"message": r.resource()} for r in added]
                touched += added
        if "messageDeleted" in types:
            deleted = [r for r in self.messages_deleted if keep(r)]
            if deleted:
                data["messagesDeleted"] = [{"message": r.resource()} for r in deleted]
                touched += deleted
        for kind, key, entries in (("labelAdded", "labelsAdded", self.labels_added),
                                   ("labelRemoved", "labelsRemoved", self.labels_removed)):
            if kind in types:
                kept = [(r, labels) for r, labels in entries if keep(r, labels)]
                if kept:
                    data[key] = [{"message": r.resource(), "labelIds": list(labels)} for r, labels in kept]
                    touched += [r for r, _ in kept]
        if not touched:
            return None
        seen: dict[str, MessageRef] = {}
        for ref in touched:
            seen.setdefault(ref.id, ref)
        data["messages"] = [r.resource(labels=False) for r in seen.values()]
        return data


@dataclass
class GmailSendAs:
    email: str
    display_name: str = ""
    reply_to: str = ""
    signature: str = ""
    is_primary: bool = False
    is_default: bool = False
    verified: bool = True

    def resource(self) -> dict[str, Any]:
        data: dict[str, Any] = {"sendAsEmail": self.email, "displayName": self.display_name,
                                "replyToAddress": self.reply_to, "signature": self.signature,
                                "isPrimary": self.is_primary, "isDefault": self.is_default,
                                "treatAsAlias": not self.is_primary}
        if not self.is_primary:
            data["verificationStatus"] = "accepted" if self.verified else "pending"
        return data


class GmailMailbox:
    """One Gmail account's state. All methods are thread-safe and write history as Gmail does."""

    def __init__(self, email: str, lock: threading.RLock, *, clock: Clock, seed: int = 0) -> None:
        self.email = email
        self.lock = lock
        self.clock = clock
        self.messages: dict[str, GmailMessage] = {}
        self.labels: dict[str, GmailLabel] = {}
        self.history: list[HistoryRecord] = []
        self.history_retention: int | None = None
        """Keep at most this many history records; older start ids then answer 404."""
        self._rng = random.Random(f"{seed}:{email}")
        self.history_id = 100_000 + self._rng.randint(0, 50_000)
        self.history_floor = self.history_id
        """A startHistoryId below this answers 404 (its records are gone)."""
        self._ids = itertools.count(0x18F0_0000_0000_0000 + self._rng.randint(0, 0xFFFF_FFFF) * 0x1000)
        self._user_labels = itertools.count(1)
        self._last_internal_date = 0
        self.send_as: dict[str, GmailSendAs] = {email.lower(): GmailSendAs(email, is_primary=True, is_default=True)}
        self.drafts: dict[str, str] = {}
        """Draft id → the id of the message it holds now."""
        self.deliveries: list[_outgoing.Delivery] = []
        """What messages.send sent out, in order."""
        self._draft_serial = itertools.count(self._rng.randint(10**17, 9 * 10**17))
        for label_id in SYSTEM_LABELS:
            hidden = label_id in _HIDDEN_SYSTEM
            self.labels[label_id] = GmailLabel(label_id, label_id, "system",
                                               "hide" if hidden else None, "labelHide" if hidden else None)

    # --- labels ---
    def add_label(self, name: str, *, label_id: str | None = None) -> GmailLabel:
        """A user label such as `Work/Invoices`; ids look like Gmail's (`Label_1`, ...)."""
        with self.lock:
            for existing in self.labels.values():
                if existing.name.lower() == name.lower():
                    raise ValueError(f"label {name!r} exists")
            label = GmailLabel(label_id or f"Label_{next(self._user_labels)}", name, "user", "show", "labelShow")
            self.labels[label.id] = label
            return label

    def label_id(self, name: str) -> str:
        """The id of a label by id or (case-insensitive) name."""
        with self.lock:
            if name in self.labels:
                return name
            for label in self.labels.values():
                if label.name.lower() == name.lower():
                    return label.id
            raise KeyError(name)

    # --- messages ---
    def add_message(self, raw: bytes, *, label_ids: Sequence[str] = ("INBOX", "UNREAD"),
                    thread_id: str | None = None, internal_date: int | datetime | None = None,
                    message_id: str | None = None) -> GmailMessage:
        """Deliver a message (history: messageAdded). `label_ids` may name labels by id or name;
        `thread_id` defaults to the new message's own id (Gmail starts a thread that way);
        `internal_date` (ms since epoch or datetime) defaults to strictly increasing arrival times."""
        with self.lock:
            labels = self._resolve(label_ids)
            new_id = message_id or f"{next(self._ids):016x}"
            if new_id in self.messages:
                raise ValueError(f"message {new_id} exists")
            if isinstance(internal_date, datetime):
                date_ms = int(internal_date.timestamp() * 1000)
            elif internal_date is None:
                date_ms = max(self._last_internal_date + 1000, int(self.clock() * 1000))
            else:
                date_ms = internal_date
            self._last_internal_date = max(self._last_internal_date, date_ms)
            message = GmailMessage(new_id, thread_id or new_id, raw, labels, date_ms, 0)
            self.messages[new_id] = message
            record = self._record()
            message.history_id = record.id
            record.messages_added.append(message.ref())
            return message

    def add_chat(self, text: str, *, sender: str = "Chat Partner <partner@gmail.com>",
                 thread_id: str | None = None) -> GmailMessage:
        """A Hangouts/Chat message as Gmail lists it: label CHAT, a tiny text/plain body."""
        raw = (f"From: {sender}\r\nTo: {self.email}\r\nSubject: Chat with {sender.split('<')[0].strip()}\r\n"
               f"Content-Type: text/plain; charset=UTF-8\r\n\r\n{text}\r\n").encode()
        return self.add_message(raw, label_ids=("CHAT",), thread_id=thread_id)

    def modify(self, message_ids: str | Iterable[str], *, add: Sequence[str] = (),
               remove: Sequence[str] = ()) -> None:
        """Change labels (history: labelAdded / labelRemoved, only for real changes)."""
        ids = [message_ids] if isinstance(message_ids, str) else list(message_ids)
        with self.lock:
            add_ids, remove_ids = self._resolve(add), self._resolve(remove)
            for message_id in ids:
                message = self.messages[message_id]
                added = [label for label in add_ids if label not in message.label_ids]
                removed = [label for label in remove_ids if label in message.label_ids and label not in added]
                if not added and not removed:
                    continue
                message.label_ids = [label for label in message.label_ids if label not in removed] + added
                record = self._record()
                message.history_id = record.id
                ref = message.ref()
                if added:
                    record.labels_added.append((ref, tuple(added)))
                if removed:
                    record.labels_removed.append((ref, tuple(removed)))

    def trash(self, message_id: str) -> None:
        """messages.trash: adds TRASH (and drops SPAM); other labels stay, so untrash restores them."""
        self.modify(message_id, add=("TRASH",), remove=("SPAM",))

    def untrash(self, message_id: str) -> None:
        self.modify(message_id, remove=("TRASH",))

    def delete(self, message_id: str) -> None:
        """Permanent deletion (history: messageDeleted); a draft's message takes its draft along."""
        with self.lock:
            message = self.messages.pop(message_id)
            record = self._record()
            record.messages_deleted.append(message.ref())
            for draft_id in [d for d, m in self.drafts.items() if m == message_id]:
                del self.drafts[draft_id]

    # --- writing mail ---
    def add_send_as(self, email: str, *, display_name: str = "", reply_to: str = "", signature: str = "",
                    verified: bool = True, default: bool = False) -> GmailSendAs:
        """A "send mail as" address (verified: its owner confirmed it); `default` makes it the default From."""
        with self.lock:
            alias = GmailSendAs(email, display_name, reply_to, signature, verified=verified)
            self.send_as[email.lower()] = alias
            if default:
                self.set_default_send_as(email)
            return alias

    def set_default_send_as(self, email: str) -> None:
        with self.lock:
            for alias in self.send_as.values():
                alias.is_default = alias.email.lower() == email.lower()

    def draft_messages(self) -> dict[str, GmailMessage]:
        """Draft id → its message."""
        with self.lock:
            return {d: self.messages[m] for d, m in self.drafts.items() if m in self.messages}

    def _thread_for(self, raw: bytes, thread_id: str | None) -> str | None:
        """Gmail's threading of a written message: `thread_id` only when the message answers one of that
        thread's messages and keeps its subject (KeyError: no such thread)."""
        if not thread_id:
            return None
        thread = [m for m in self.messages.values() if m.thread_id == thread_id]
        if not thread:
            raise KeyError(thread_id)
        parsed = _mime.parse(raw)
        answered = set(_outgoing.answers(parsed))
        subject = _outgoing.base_subject(parsed.header("Subject"))
        joins = any(m.header("Message-ID") in answered and _outgoing.base_subject(m.header("Subject")) == subject
                    for m in thread)
        return thread_id if joins else None

    def create_draft(self, raw: bytes, thread_id: str | None = None) -> tuple[str, GmailMessage]:
        with self.lock:
            message = self.add_message(raw, label_ids=("DRAFT",), thread_id=self._thread_for(raw, thread_id))
            draft_id = f"r{next(self._draft_serial)}"
            self.drafts[draft_id] = message.id
            return draft_id, message

    def update_draft(self, draft_id: str, raw: bytes, thread_id: str | None = None) -> GmailMessage:
        """The draft gets a new message (a new id); the old one is deleted. KeyError: no such draft."""
        with self.lock:
            old = self.drafts[draft_id]
            thread = self._thread_for(raw, thread_id)
            self.delete(old)
            message = self.add_message(raw, label_ids=("DRAFT",), thread_id=thread)
            self.drafts[draft_id] = message.id
            return message

    def delete_draft(self, draft_id: str) -> None:
        with self.lock:
            self.delete(self.drafts[draft_id])

    def send(self, raw: bytes, thread_id: str | None = None) -> GmailMessage:
        """messages.send: delivered to the header's recipients without Bcc; the copy, Bcc kept, under SENT."""
        with self.lock:
            parsed = _mime.parse(raw)
            if _outgoing.sender(parsed) not in self.send_as or not self.send_as[_outgoing.sender(parsed)].verified:
                primary = next(a for a in self.send_as.values() if a.is_primary)
                raw = _replace_from(raw, primary.email)
                parsed = _mime.parse(raw)
            message = self.add_message(raw, label_ids=("SENT",), thread_id=self._thread_for(raw, thread_id))
            self.deliveries.append(_outgoing.Delivery(message.id, message.thread_id, _outgoing.recipients(parsed),
                                                      _outgoing.without_bcc(raw), _outgoing.sender(parsed)))
            return message

    def insert(self, raw: bytes, label_ids: Sequence[str], thread_id: str | None = None) -> GmailMessage:
        """messages.insert: put in the mailbox under `label_ids`, nothing sent (KeyError: no such thread)."""
        with self.lock:
            return self.add_message(raw, label_ids=tuple(label_ids), thread_id=self._thread_for(raw, thread_id))

    def mark_gone(self, message_id: str) -> None:
        """The listed-then-gone case: the id stays in listings, but get/modify answer 404."""
        with self.lock:
            self.messages[message_id].gone = True

    def thread(self, thread_id: str) -> list[GmailMessage]:
        with self.lock:
            return sorted((m for m in self.messages.values() if m.thread_id == thread_id),
                          key=lambda m: m.internal_date)

    def with_label(self, label: str) -> list[GmailMessage]:
        with self.lock:
            label_id = self.label_id(label)
            return [m for m in self.messages.values() if label_id in m.label_ids]

    # --- history ---
    def expire_history(self, before: int | None = None) -> None:
        """Forget history up to `before` (default: all of it); older startHistoryIds then get 404."""
        with self.lock:
            cutoff = self.history_id if before is None else before
            self.history = [r for r in self.history if r.id > cutoff]
            self.history_floor = max(self.history_floor, cutoff)

    def _record(self) -> HistoryRecord:
        self.history_id += self._rng.randint(1, 4)  # increasing, with gaps, as documented
        record = HistoryRecord(self.history_id)
        self.history.append(record)
        if self.history_retention is not None and len(self.history) > self.history_retention:
            dropped = self.history[: len(self.history) - self.history_retention]
            self.history = self.history[len(dropped):]
            self.history_floor = max(self.history_floor, dropped[-1].id)
        return record

    def _resolve(self, names: Sequence[str]) -> list[str]:
        resolved: list[str] = []
        for name in names:
            try:
                label_id = self.label_id(name)
            except KeyError:
                raise ValueError(f"Invalid label: {name}") from None
            if label_id not in resolved:
                resolved.append(label_id)
        return resolved

    # --- what the API reads ---
    def thread_count(self) -> int:
        return len({m.thread_id for m in self.messages.values()})

    def search(self, terms: list[Callable[[GmailMessage], bool]], label_ids: Sequence[str],
               include_spam_trash: bool) -> list[GmailMessage]:
        found = [m for m in self.messages.values()
                 if all(label in m.label_ids for label in label_ids) and all(term(m) for term in terms)]
        if not include_spam_trash:
            found = [m for m in found if "SPAM" not in m.label_ids and "TRASH" not in m.label_ids]
        found.sort(key=_order_key, reverse=True)
        return found


def _order_key(message: GmailMessage) -> tuple[int, int]:
    return message.internal_date, int(message.id, 16)


def _label_search_name(name: str) -> str:
    return "".join("-" if ch in " /" else ch for ch in name.lower())


def parse_query(q: str, mailbox: GmailMailbox) -> tuple[list[Callable[[GmailMessage], bool]], bool]:
    """The supported subset of Gmail search: predicates, and whether spam/trash was asked for by name."""
    predicates: list[Callable[[GmailMessage], bool]] = []
    wants_spam_trash = False
    for token in q.split():
        negate = token.startswith("-")
        key, sep, value = token.lstrip("-").partition(":")
        value = value.strip('"').lower()
        if not sep:
            raise ValueError(f"free-text search term {token!r}")
        if key == "in" and value == "anywhere":
            wants_spam_trash = True
            continue
        label: str | None
        if key == "in" and value in _IN_LABELS:
            label = _IN_LABELS[value]
        elif key == "is" and value in _IS_LABELS:
            label = _IS_LABELS[value]
        elif key == "is" and value == "read":
            label, negate = "UNREAD", not negate
        elif key == "category" and value in _CATEGORIES:
            label = _CATEGORIES[value]
        elif key == "label":
            label = next((lbl.id for lbl in mailbox.labels.values()
                          if lbl.id.lower() == value or _label_search_name(lbl.name) == _label_search_name(value)),
                         None)
        else:
            raise ValueError(f"search operator {token!r}")
        if label in ("SPAM", "TRASH") and not negate:
            wants_spam_trash = True

        def predicate(m: GmailMessage, label: str | None = label, negate: bool = negate) -> bool:
            return (label is not None and label in m.label_ids) != negate

        predicates.append(predicate)
    return predicates, wants_spam_trash


# --- quota ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class QuotaRejection:
    at: float
    user: str
    method: str
    units: int
    retry_after: float


class GmailQuota:
    """Google's per-user quota: `units_per_minute` per user, fixed (clock-aligned minutes) or sliding
    60-second window. `None` disables it. `costs` is Google's table; `fetch_units` overrides the
    messages.get cost per format (plmail measured 60 for raw and full)."""

    def __init__(self, clock: Clock, units_per_minute: int | None = 15_000, *,
                 window: Literal["fixed", "sliding"] = "fixed", window_seconds: float = 60.0,
                 reason: Literal["rateLimitExceeded", "userRateLimitExceeded"] = "rateLimitExceeded",
                 include_limit_in_error: bool = True) -> None:
        self.clock = clock
        self.units_per_minute = units_per_minute
        self.window = window
        self.window_seconds = window_seconds
        self.reason = reason
        self.include_limit_in_error = include_limit_in_error
        self.costs: dict[str, int] = dict(DEFAULT_COSTS)
        self.fetch_units: dict[str, int] = {}
        self.rejections: list[QuotaRejection] = []
        self.accepted_units: dict[str, int] = {}
        self._lock = threading.Lock()
        self._fixed: dict[str, tuple[float, int]] = {}
        self._sliding: dict[str, deque[tuple[float, int]]] = {}

    def set_fetch_units(self, units: int, formats: Iterable[str] = ("raw", "full")) -> None:
        for fmt in formats:
            self.fetch_units[fmt] = units

    def cost(self, method: str, fmt: str | None = None) -> int:
        if method == "users.messages.get" and fmt in self.fetch_units:
            return self.fetch_units[fmt]
        return self.costs.get(method, 1)

    def used(self, user: str) -> int:
        """Units spent by `user` in the current window."""
        with self._lock:
            now = self.clock()
            if self.window == "fixed":
                start, used = self._fixed.get(user, (0.0, 0))
                return used if now < start + self.window_seconds else 0
            events = self._sliding.get(user, deque())
            return sum(units for at, units in events if at > now - self.window_seconds)

    def charge(self, user: str, method: str, units: int) -> float | None:
        """Spend `units`; None when accepted, else seconds until the request could succeed."""
        limit = self.units_per_minute
        with self._lock:
            now = self.clock()
            retry: float | None = None
            if limit is None:
                pass
            elif self.window == "fixed":
                start, used = self._fixed.get(user, (0.0, 0))
                if now >= start + self.window_seconds:
                    start, used = math.floor(now / self.window_seconds) * self.window_seconds, 0
                if used + units > limit:
                    retry = start + self.window_seconds - now
                else:
                    self._fixed[user] = (start, used + units)
            else:
                events = self._sliding.setdefault(user, deque())
                while events and events[0][0] <= now - self.window_seconds:
                    events.popleft()
                used = sum(u for _, u in events)
                if used + units > limit:
                    retry = self.window_seconds
                    freed = 0
                    for at, spent in events:
                        freed += spent
                        if used - freed + units <= limit:
                            retry = at + self.window_seconds - now
                            break
                else:
                    events.append((now, units))
            if retry is not None:
                self.rejections.append(QuotaRejection(now, user, method, units, retry))
                return max(retry, 0.001)
            self.accepted_units[user] = self.accepted_units.get(user, 0) + units
            return None

    def error(self, retry_after: float) -> Response:
        limit = self.units_per_minute or 0
        retry_at = datetime.fromtimestamp(self.clock() + retry_after, UTC)
        if self.reason == "userRateLimitExceeded":
            message = f"User-rate limit exceeded.  Retry after {retry_at.isoformat(timespec='milliseconds')[:-6]}Z"
        else:
            message = ("Quota exceeded for quota metric 'Queries' and limit 'Queries per minute per user' of "
                       "service 'gmail.googleapis.com' for consumer 'project_number:100000000001'.")
        details: list[dict[str, Any]] = []
        if self.include_limit_in_error:
            details = [
                {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "RATE_LIMIT_EXCEEDED",
                 "domain": "googleapis.com",
                 "metadata": {"quota_metric": "gmail.googleapis.com/quota_units",
                              "quota_limit": "QuotaUnitsPerMinutePerUser", "quota_limit_value": str(limit),
                              "quota_location": "global", "service": "gmail.googleapis.com",
                              "consumer": "projects/100000000001"}},
                {"@type": "type.googleapis.com/google.rpc.Help",
                 "links": [{"description": "Request a higher quota limit.",
                            "url": "https://cloud.google.com/docs/quotas/help/request_increase"}]},
            ]
        return google_error(429, message, self.reason, domain="usageLimits", details=details,
                            headers=[("retry-after", str(max(1, math.ceil(retry_after))))])


# --- the server --------------------------------------------------------------------------------
@dataclass(frozen=True)
class GmailCall:
    """One API request as the fake saw it (after authentication)."""

    method: str
    user: str
    path: str
    query: dict[str, list[str]]
    status: int
    units: int
    at: float


ApiHandler = Callable[[Request, GmailMailbox], Awaitable[Response]]


class GmailFake(AsgiApp):
    """The Gmail API + Google OAuth as one ASGI app. `fake.access_token` is valid for `fake.mailbox`."""

    def __init__(self, email: str = "alice@gmail.com", *, clock: Clock | None = None,
                 units_per_minute: int | None = 15_000, quota_window: Literal["fixed", "sliding"] = "fixed",
                 client_id: str = "test-google-client.apps.googleusercontent.com",
                 client_secret: str = "test-google-secret", seed: int = 0) -> None:
        super().__init__()
        self.clock: Clock = clock or SystemClock()
        self.lock = threading.RLock()
        self.seed = seed
        self.oauth = OAuthState(self.clock, token_prefix="ya29.fake-",
                                default_scope="https://www.googleapis.com/auth/gmail.modify")
        self.oauth.register_client(client_id, client_secret)
        self.client_id, self.client_secret = client_id, client_secret
        self.quota = GmailQuota(self.clock, units_per_minute, window=quota_window)
        self.calls: list[GmailCall] = []
        self.mailboxes: dict[str, GmailMailbox] = {}
        self.injected: dict[str, list[tuple[InjectedError, float]]] = {}
        self.before: dict[str, list[Callable[[], Awaitable[None]]]] = {}
        self.pubsub = GooglePubSub()
        self.watches: dict[str, GmailWatchState] = {}  # mailbox (lower-case) -> its users.watch
        self.mailbox = self.add_mailbox(email)
        self.oauth.consenting_user = email
        tokens = self.oauth.issue(email)
        self.access_token, self.refresh_token = tokens.access_token, tokens.refresh_token
        self._routes()

    def add_mailbox(self, email: str) -> GmailMailbox:
        with self.lock:
            mailbox = GmailMailbox(email, self.lock, clock=self.clock, seed=self.seed)
            self.mailboxes[email.lower()] = mailbox
            return mailbox

    def auth_headers(self, email: str | None = None) -> dict[str, str]:
        """`Authorization` for `email`'s mailbox (a fresh token for a mailbox other than the first)."""
        token = self.access_token if email is None else self.oauth.issue(email).access_token
        return {"Authorization": f"Bearer {token}"}

    # conveniences on the first mailbox
    @property
    def messages(self) -> dict[str, GmailMessage]:
        return self.mailbox.messages

    def add_message(self, raw: bytes, **kwargs: Any) -> GmailMessage:
        return self.mailbox.add_message(raw, **kwargs)

    def add_label(self, name: str) -> GmailLabel:
        return self.mailbox.add_label(name)

    def fail_next(self, method: str, error: InjectedError, *, count: int = 1, retry_after: float = 1.0) -> None:
        """Answer the next `count` calls of `method` (e.g. "users.messages.send") with Google's error: 429
        rateLimitExceeded (with Retry-After), 403 insufficientPermissions, 404 notFound, 500 backendError or
        400 invalidArgument."""
        with self.lock:
            self.injected.setdefault(method, []).extend([(error, retry_after)] * count)

    def before_next(self, method: str, action: Callable[[], Awaitable[None]]) -> None:
        """Run `action` (on the server's loop) before the next call of `method` is answered: what another
        client does while this request is under way."""
        with self.lock:
            self.before.setdefault(method, []).append(action)

    def _injected(self, method: str) -> Response | None:
        with self.lock:
            waiting = self.injected.get(method)
            if not waiting:
                return None
            error, retry_after = waiting.pop(0)
        if error == "rateLimitExceeded":
            return self.quota.error(retry_after)
        if error == "insufficientPermissions":
            return _insufficient_scope(method)
        if error == "notFound":
            return google_error(404, "Requested entity was not found.", "notFound")
        if error == "backendError":
            return google_error(500, "Backend Error", "backendError")
        return google_error(400, "Invalid To header", "invalidArgument")

    # --- routing ---
    def _routes(self) -> None:
        base = "/gmail/v1/users/{userId}"
        api: list[tuple[str, str, str, ApiHandler]] = [
            ("GET", "/profile", "users.getProfile", self._profile),
            ("GET", "/labels", "users.labels.list", self._labels_list),
            ("GET", "/labels/{id}", "users.labels.get", self._labels_get),
            ("POST", "/labels", "users.labels.create", self._labels_create),
            ("GET", "/messages", "users.messages.list", self._messages_list),
            ("POST", "/messages/batchModify", "users.messages.batchModify", self._batch_modify),
            ("GET", "/messages/{id}", "users.messages.get", self._messages_get),
            ("DELETE", "/messages/{id}", "users.messages.delete", self._messages_delete),
            ("GET", "/messages/{messageId}/attachments/{id}", "users.messages.attachments.get", self._attachment),
            ("POST", "/messages/{id}/modify", "users.messages.modify", self._modify),
            ("POST", "/messages/{id}/trash", "users.messages.trash", self._trash),
            ("POST", "/messages/{id}/untrash", "users.messages.untrash", self._untrash),
            ("GET", "/history", "users.history.list", self._history),
            ("GET", "/settings/sendAs", "users.settings.sendAs.list", self._send_as_list),
            ("GET", "/drafts", "users.drafts.list", self._drafts_list),
            ("POST", "/drafts", "users.drafts.create", self._drafts_create),
            ("GET", "/drafts/{id}", "users.drafts.get", self._drafts_get),
            ("PUT", "/drafts/{id}", "users.drafts.update", self._drafts_update),
            ("DELETE", "/drafts/{id}", "users.drafts.delete", self._drafts_delete),
            ("POST", "/messages/send", "users.messages.send", self._messages_send),
            ("POST", "/messages", "users.messages.insert", self._messages_insert),
            ("POST", "/watch", "users.watch", self._watch),
            ("POST", "/stop", "users.stop", self._stop),
        ]
        for verb, path, name, handler in api:
            self.router.add(verb, base + path, self._api(name, handler))
        self.router.add("POST", "/token", self._token)
        self.router.add("GET", "/o/oauth2/v2/auth", self._authorize)
        self.router.add("POST", "/revoke", self._revoke)
        self.router.add("GET", "/oauth2/v3/userinfo", self._userinfo)
        self.router.add("GET", "/oauth2/v3/certs", self._certs)

    def not_found(self, request: Request) -> Response:
        return google_error(404, "Requested entity was not found.", "notFound")

    def method_not_allowed(self, request: Request) -> Response:
        return google_error(405, f"Method {request.method} not allowed.", "httpMethodNotAllowed")

    def _authenticate(self, request: Request) -> str:
        header = request.header("authorization") or ""
        token = header[7:].strip() if header.lower().startswith("bearer ") else ""
        user, _why = self.oauth.check_access_token(token)
        if user is None:
            raise HttpError(google_error(
                401, "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or "
                     "other valid authentication credential. See "
                     "https://developers.google.com/identity/sign-in/web/devconsole-project.",
                "authError", extra={"location": "Authorization", "locationType": "header"},
                headers=[("www-authenticate", 'Bearer realm="https://accounts.google.com/", error="invalid_token"')],
            ))
        return user

    def _scope_allows(self, request: Request, method: str) -> bool:
        wanted = METHOD_SCOPES.get(method)
        if wanted is None:
            return True
        token = (request.header("authorization") or "")[7:].strip()
        grant = self.oauth.access_tokens.get(token)
        return grant is not None and bool(wanted & set(grant.scope.split()))

    def _api(self, name: str, handler: ApiHandler) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            user = self._authenticate(request)
            wanted = request.params["userId"]
            if wanted != "me" and wanted.lower() != user.lower():
                raise HttpError(google_error(403, f"Delegation denied for {user}", "forbidden"))
            mailbox = self.mailboxes[user.lower()]
            with self.lock:
                waiting = self.before.get(name)
                action = waiting.pop(0) if waiting else None
            if action is not None:
                await action()
            units = self.quota.cost(name, request.arg("format", "full") if name == "users.messages.get" else None)
            injected = self._injected(name)
            retry_after = self.quota.charge(user, name, units) if injected is None else None
            if injected is not None:
                response, units = injected, 0
            elif retry_after is not None:
                response = self.quota.error(retry_after)
            elif not self._scope_allows(request, name):
                response = _insufficient_scope(name)
            else:
                try:
                    with self.lock:
                        response = await handler(request, mailbox)
                except HttpError as error:
                    response = error.response
            with self.lock:
                self.calls.append(GmailCall(name, user, request.path, request.query, response.status,
                                            units if retry_after is None else 0, self.clock()))
            return response

        return endpoint

    # --- push: users.watch / users.stop, delivered through Pub/Sub ---
    async def _certs(self, request: Request) -> Response:
        return json_response(self.pubsub.jwks(), headers=[("cache-control", "public, max-age=20000")])

    async def _watch(self, request: Request, mailbox: GmailMailbox) -> Response:
        body = request.json() or {}
        name = str(body.get("topicName") or "")
        parts = name.split("/")
        if len(parts) != 4 or parts[0] != "projects" or parts[2] != "topics":
            raise _invalid("Invalid topicName does not match projects/SOME_PROJECT/topics/*")
        topic = self.pubsub.topics.get(name)
        if topic is None:
            raise HttpError(google_error(404, f"Resource not found (resource={parts[3]}).", "notFound"))
        if GMAIL_PUBLISHER not in topic.publishers:
            raise HttpError(google_error(
                403, f"Error sending test message to Cloud PubSub {name} : User not authorized to perform this "
                     f"action.", "forbidden"))
        expiration = int((self.clock() + WATCH_DAYS * 86400) * 1000)
        self.watches[mailbox.email.lower()] = GmailWatchState(name, expiration, mailbox.history_id)
        return json_response({"historyId": str(mailbox.history_id), "expiration": str(expiration)})

    async def _stop(self, request: Request, mailbox: GmailMailbox) -> Response:
        self.watches.pop(mailbox.email.lower(), None)
        return empty_response(204)

    async def notify(self, email: str | None = None, *, token: str | None = None) -> httpx.Response | None:
        """What Gmail does after a change to a watched mailbox: publish {emailAddress, historyId} to the watch's
        topic, which pushes it to its subscription's endpoint. None when the mailbox has no live watch."""
        mailbox = self.mailboxes[(email or self.mailbox.email).lower()]
        with self.lock:
            watch = self.watches.get(mailbox.email.lower())
            if watch is None or watch.expiration_ms <= self.clock() * 1000:
                return None
            data = {"emailAddress": mailbox.email, "historyId": mailbox.history_id}
        return await self.pubsub.publish(watch.topic, data, token=token)

    # --- users ---
    async def _profile(self, request: Request, mailbox: GmailMailbox) -> Response:
        return json_response({"emailAddress": mailbox.email, "messagesTotal": len(mailbox.messages),
                              "threadsTotal": mailbox.thread_count(), "historyId": str(mailbox.history_id)})

    # --- labels ---
    async def _labels_list(self, request: Request, mailbox: GmailMailbox) -> Response:
        return json_response({"labels": [label.resource() for label in mailbox.labels.values()]})

    async def _labels_get(self, request: Request, mailbox: GmailMailbox) -> Response:
        label = mailbox.labels.get(request.params["id"])
        if label is None:
            raise _not_found()
        with_label = [m for m in mailbox.messages.values() if label.id in m.label_ids]
        unread = [m for m in with_label if "UNREAD" in m.label_ids]
        return json_response({**label.resource(), "messagesTotal": len(with_label), "messagesUnread": len(unread),
                              "threadsTotal": len({m.thread_id for m in with_label}),
                              "threadsUnread": len({m.thread_id for m in unread})})

    async def _labels_create(self, request: Request, mailbox: GmailMailbox) -> Response:
        try:
            body = request.json()
        except ValueError:
            raise _invalid("Invalid JSON payload received.") from None
        name = str(body.get("name") or "").strip() if isinstance(body, dict) else ""
        if not name:
            raise _invalid("Invalid label name")
        try:
            label = mailbox.add_label(name)
        except ValueError:
            raise HttpError(google_error(409, "Label name exists or conflicts", "duplicate")) from None
        return json_response(label.resource())

    # --- messages ---
    async def _messages_list(self, request: Request, mailbox: GmailMailbox) -> Response:
        max_results = min(_int_arg(request, "maxResults", 100, minimum=1), 500)
        include_spam_trash = _bool_arg(request, "includeSpamTrash", default=False)
        label_ids = request.args("labelIds")
        for label_id in label_ids:
            if label_id not in mailbox.labels:
                raise _invalid(f"Invalid label: {label_id}")
        try:
            terms, wants_spam_trash = parse_query(request.arg("q", "") or "", mailbox)
        except ValueError as error:
            raise _invalid(f"Invalid query: the fake Gmail does not support the {error}") from None
        wants_spam_trash = wants_spam_trash or any(label in ("SPAM", "TRASH") for label in label_ids)
        found = mailbox.search(terms, label_ids, include_spam_trash or wants_spam_trash)
        token = request.arg("pageToken")
        if token:
            cursor = _decode_page_token(token)
            found_page = [m for m in found if _order_key(m) < cursor]
        else:
            found_page = found
        page, rest = found_page[:max_results], found_page[max_results:]
        data: dict[str, Any] = {}
        if page:
            data["messages"] = [{"id": m.id, "threadId": m.thread_id} for m in page]
        if rest:
            data["nextPageToken"] = _encode_page_token(page[-1])
        data["resultSizeEstimate"] = len(found)
        return json_response(data)

    def _message(self, mailbox: GmailMailbox, message_id: str) -> GmailMessage:
        if not _valid_id(message_id):
            raise _invalid("Invalid id value")
        message = mailbox.messages.get(message_id)
        if message is None or message.gone:
            raise _not_found()
        return message

    async def _messages_get(self, request: Request, mailbox: GmailMailbox) -> Response:
        message = self._message(mailbox, request.params["id"])
        fmt = (request.arg("format") or "full").lower()
        if fmt not in ("full", "metadata", "minimal", "raw"):
            raise _invalid(f"Invalid value at 'format' ({fmt})")
        data: dict[str, Any] = {"id": message.id, "threadId": message.thread_id}
        if message.label_ids:
            data["labelIds"] = list(message.label_ids)
        data["snippet"] = message.snippet
        if fmt in ("full", "metadata"):
            wanted = {h.lower() for h in request.args("metadataHeaders")} if fmt == "metadata" else None
            data["payload"] = _payload(message.parsed.message, "", message.id, wanted or None, fmt == "full")
        data["sizeEstimate"] = message.size_estimate
        if fmt == "raw":
            data["raw"] = base64.urlsafe_b64encode(message.raw).decode("ascii")
        data["historyId"] = str(message.history_id)
        data["internalDate"] = str(message.internal_date)
        return json_response(data)

    async def _attachment(self, request: Request, mailbox: GmailMailbox) -> Response:
        message = self._message(mailbox, request.params["messageId"])
        try:
            owner, part_id = base64.urlsafe_b64decode(request.params["id"].encode() + b"==").decode().split(":", 1)
        except (ValueError, UnicodeDecodeError):
            raise _invalid("Invalid attachment id") from None
        part = _find_part(message.parsed.message, part_id) if owner == message.id else None
        if part is None:
            raise _not_found()
        data = part.get_payload(decode=True)
        content = data if isinstance(data, bytes) else b""
        return json_response({"attachmentId": request.params["id"], "size": len(content),
                              "data": base64.urlsafe_b64encode(content).decode("ascii")})

    async def _messages_delete(self, request: Request, mailbox: GmailMailbox) -> Response:
        self._message(mailbox, request.params["id"])
        mailbox.delete(request.params["id"])
        return empty_response(204)

    def _label_changes(self, request: Request, mailbox: GmailMailbox) -> tuple[list[str], list[str], dict[str, Any]]:
        try:
            body = request.json()
        except ValueError:
            raise _invalid("Invalid JSON payload received.") from None
        if not isinstance(body, dict):
            raise _invalid("Invalid JSON payload received.")
        add, remove = list(body.get("addLabelIds") or []), list(body.get("removeLabelIds") or [])
        for label_id in add + remove:
            if label_id not in mailbox.labels or label_id in _NOT_USER_SETTABLE:
                raise _invalid(f"Invalid label: {label_id}")
        return add, remove, body

    async def _batch_modify(self, request: Request, mailbox: GmailMailbox) -> Response:
        add, remove, body = self._label_changes(request, mailbox)
        ids = body.get("ids") or []
        if not isinstance(ids, list) or not ids:
            raise _invalid("No message ids specified.")
        if len(ids) > 1000:
            raise _invalid("Too many ids specified. The maximum is 1000.")
        if not all(isinstance(i, str) and _valid_id(i) for i in ids):
            raise _invalid("Invalid id value")
        # Unknown or gone ids are skipped: the request as a whole still succeeds.
        mailbox.modify([i for i in ids if i in mailbox.messages and not mailbox.messages[i].gone],
                       add=add, remove=remove)
        return empty_response(204)

    def _minimal(self, message: GmailMessage) -> Response:
        data: dict[str, Any] = {"id": message.id, "threadId": message.thread_id}
        if message.label_ids:
            data["labelIds"] = list(message.label_ids)
        return json_response(data)

    async def _modify(self, request: Request, mailbox: GmailMailbox) -> Response:
        message = self._message(mailbox, request.params["id"])
        add, remove, _ = self._label_changes(request, mailbox)
        mailbox.modify(message.id, add=add, remove=remove)
        return self._minimal(message)

    async def _trash(self, request: Request, mailbox: GmailMailbox) -> Response:
        message = self._message(mailbox, request.params["id"])
        mailbox.trash(message.id)
        return self._minimal(message)

    async def _untrash(self, request: Request, mailbox: GmailMailbox) -> Response:
        message = self._message(mailbox, request.params["id"])
        mailbox.untrash(message.id)
        return self._minimal(message)

    # --- history ---
    async def _history(self, request: Request, mailbox: GmailMailbox) -> Response:
        raw_start = request.arg("startHistoryId")
        if not raw_start or not raw_start.isdigit():
            raise _invalid("Invalid startHistoryId" if raw_start else "Missing required parameter: startHistoryId")
        start = int(raw_start)
        if start < mailbox.history_floor:
            raise _not_found()
        types = set(request.args("historyTypes")) or set(_HISTORY_TYPES)
        unknown = types - set(_HISTORY_TYPES)
        if unknown:
            raise _invalid(f"Invalid value at 'history_types' ({sorted(unknown)[0]})")
        label_id = request.arg("labelId")
        max_results = min(_int_arg(request, "maxResults", 100, minimum=1), 500)
        token = request.arg("pageToken")
        after = start
        if token:
            if not token.isdigit():
                raise _invalid("Invalid pageToken")
            after = max(start, int(token))
        records: list[dict[str, Any]] = []
        next_token: str | None = None
        for record in mailbox.history:
            if record.id <= after:
                continue
            resource = record.resource(types, label_id)
            if resource is None:
                continue
            if len(records) == max_results:
                next_token = records[-1]["id"]
                break
            records.append(resource)
        data: dict[str, Any] = {}
        if records:
            data["history"] = records
        if next_token:
            data["nextPageToken"] = next_token
        data["historyId"] = str(mailbox.history_id)
        return json_response(data)

    # --- writing mail ---
    async def _send_as_list(self, request: Request, mailbox: GmailMailbox) -> Response:
        return json_response({"sendAs": [alias.resource() for alias in mailbox.send_as.values()]})

    def _written(self, request: Request, *, nested: bool) -> tuple[bytes, str | None]:
        """(raw, threadId) of a Message in the body (nested: a Draft's `message`)."""
        try:
            body = request.json()
        except ValueError:
            raise _invalid("Invalid JSON payload received.") from None
        message = body.get("message") if nested and isinstance(body, dict) else body
        if not isinstance(message, dict) or not message.get("raw"):
            raise _invalid("'raw' RFC822 payload message string or uploading message via /upload/* URL required")
        try:
            raw = base64.urlsafe_b64decode(str(message["raw"]) + "=" * (-len(str(message["raw"])) % 4))
        except ValueError:
            raise _invalid("Invalid value for ByteString") from None
        thread_id = message.get("threadId")
        if thread_id is not None and (not isinstance(thread_id, str) or not _valid_id(thread_id)):
            raise _invalid("Invalid thread_id value")
        return raw, thread_id

    def _draft(self, draft_id: str, message: GmailMessage, *, full: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {"id": message.id, "threadId": message.thread_id, "labelIds": list(message.label_ids)}
        if full:
            data["raw"] = base64.urlsafe_b64encode(message.raw).decode("ascii")
        return {"id": draft_id, "message": data}

    async def _drafts_list(self, request: Request, mailbox: GmailMailbox) -> Response:
        max_results = min(_int_arg(request, "maxResults", 100, minimum=1), 500)
        drafts = sorted(mailbox.draft_messages().items(), key=lambda d: _order_key(d[1]), reverse=True)
        start = _int_arg(request, "pageToken", 0, minimum=0)
        page = drafts[start:start + max_results]
        data: dict[str, Any] = {"resultSizeEstimate": len(drafts)}
        if page:
            data["drafts"] = [{"id": d, "message": {"id": m.id, "threadId": m.thread_id}} for d, m in page]
        if start + max_results < len(drafts):
            data["nextPageToken"] = str(start + max_results)
        return json_response(data)

    def _existing_draft(self, mailbox: GmailMailbox, draft_id: str) -> GmailMessage:
        message = mailbox.draft_messages().get(draft_id)
        if message is None:
            raise _not_found()
        return message

    async def _drafts_get(self, request: Request, mailbox: GmailMailbox) -> Response:
        draft_id = request.params["id"]
        message = self._existing_draft(mailbox, draft_id)
        return json_response(self._draft(draft_id, message, full=(request.arg("format") or "full") == "raw"))

    async def _drafts_create(self, request: Request, mailbox: GmailMailbox) -> Response:
        raw, thread_id = self._written(request, nested=True)
        try:
            draft_id, message = mailbox.create_draft(raw, thread_id)
        except KeyError:
            raise _not_found() from None
        return json_response(self._draft(draft_id, message))

    async def _drafts_update(self, request: Request, mailbox: GmailMailbox) -> Response:
        draft_id = request.params["id"]
        self._existing_draft(mailbox, draft_id)
        raw, thread_id = self._written(request, nested=True)
        try:
            message = mailbox.update_draft(draft_id, raw, thread_id)
        except KeyError:
            raise _not_found() from None
        return json_response(self._draft(draft_id, message))

    async def _drafts_delete(self, request: Request, mailbox: GmailMailbox) -> Response:
        draft_id = request.params["id"]
        self._existing_draft(mailbox, draft_id)
        mailbox.delete_draft(draft_id)
        return empty_response(204)

    async def _messages_send(self, request: Request, mailbox: GmailMailbox) -> Response:
        raw, thread_id = self._written(request, nested=False)
        if not _outgoing.recipients(_mime.parse(raw)):
            raise _invalid("Recipient address required")
        try:
            message = mailbox.send(raw, thread_id)
        except KeyError:
            raise _not_found() from None
        return json_response({"id": message.id, "threadId": message.thread_id, "labelIds": list(message.label_ids)})

    async def _messages_insert(self, request: Request, mailbox: GmailMailbox) -> Response:
        raw, thread_id = self._written(request, nested=False)
        body = request.json()
        labels = body.get("labelIds") or []
        if not isinstance(labels, list) or any(not isinstance(x, str) or x not in mailbox.labels for x in labels):
            raise _invalid(f"Invalid label: {labels}")
        try:
            message = mailbox.insert(raw, labels, thread_id)
        except KeyError:
            raise _not_found() from None
        return json_response({"id": message.id, "threadId": message.thread_id, "labelIds": list(message.label_ids)})

    # --- OAuth ---
    async def _token(self, request: Request) -> Response:
        form = request.form()
        result = self.oauth.token_request(form, request.header("authorization"))
        if isinstance(result, OAuthFailure):
            return json_response({"error": result.error, "error_description": result.description}, result.status)
        data: dict[str, Any] = {"access_token": result.access_token, "expires_in": result.expires_in,
                                "scope": result.scope, "token_type": "Bearer"}
        if form.get("grant_type") == "authorization_code":
            data["refresh_token"] = result.refresh_token
        return json_response(data, headers=[("cache-control", "no-cache, no-store, max-age=0, must-revalidate")])

    async def _authorize(self, request: Request) -> Response:
        client = self.oauth.clients.get(request.arg("client_id") or "")
        redirect_uri = request.arg("redirect_uri") or ""
        if client is None:
            return Response(401, b"Error 401: invalid_client", [("content-type", "text/plain")])
        if not redirect_uri or (client.redirect_uris and redirect_uri not in client.redirect_uris):
            return Response(400, b"Error 400: redirect_uri_mismatch", [("content-type", "text/plain")])
        state = request.arg("state")
        params: dict[str, str] = {}
        if state is not None:
            params["state"] = state
        if self.oauth.deny_consent:
            params["error"] = "access_denied"
        else:
            hint = (request.arg("login_hint") or "").lower()
            user = self.mailboxes[hint].email if hint in self.mailboxes else self.oauth.consenting_user
            scope = request.arg("scope") or ""
            params["code"] = self.oauth.authorize(
                client.client_id, redirect_uri, user, scope,
                code_challenge=request.arg("code_challenge"),
                code_challenge_method=request.arg("code_challenge_method") or "plain",
            )
            params["scope"] = scope
        separator = "&" if "?" in redirect_uri else "?"
        return Response(302, b"", [("location", f"{redirect_uri}{separator}{urlencode(params)}")])

    async def _revoke(self, request: Request) -> Response:
        token = request.arg("token") or request.form().get("token", "")
        with self.lock:
            if token in self.oauth.refresh_tokens and not self.oauth.refresh_tokens[token].revoked:
                self.oauth.revoke(token)
                return json_response({})
            access = self.oauth.access_tokens.get(token)
            if access is not None and not access.revoked:
                access.revoked = True
                return json_response({})
        return json_response({"error": "invalid_token", "error_description": "Token expired or revoked"}, 400)

    async def _userinfo(self, request: Request) -> Response:
        user = self._authenticate(request)
        subject = str(int(hashlib.sha256(user.encode()).hexdigest()[:15], 16))
        return json_response({"sub": subject, "email": user, "email_verified": True})


# --- helpers -------------------------------------------------------------------------------------
def _insufficient_scope(method: str) -> Response:
    """Google's answer to a token whose grant lacks the method's scopes."""
    details = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "ACCESS_TOKEN_SCOPE_INSUFFICIENT",
                "domain": "googleapis.com", "metadata": {"service": "gmail.googleapis.com", "method": method}}]
    return google_error(403, "Request had insufficient authentication scopes.", "insufficientPermissions",
                        details=details, headers=[("www-authenticate", 'Bearer realm="https://accounts.google.com/", '
                                                   'error="insufficient_scope"')])


def _replace_from(raw: bytes, address: str) -> bytes:
    head, separator, body = raw.partition(b"\r\n\r\n")
    kept = [line for line in head.split(b"\r\n") if not line.lower().startswith(b"from:")]
    return b"\r\n".join([f"From: {address}".encode(), *kept]) + separator + body


def _valid_id(value: str) -> bool:
    return 0 < len(value) <= 32 and all(ch in "0123456789abcdef" for ch in value)


def _int_arg(request: Request, name: str, default: int, *, minimum: int) -> int:
    raw = request.arg(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise _invalid(f"Invalid value at '{name}' ({raw})") from None
    if value < minimum:
        raise _invalid(f"Invalid value at '{name}' ({raw})")
    return value


def _bool_arg(request: Request, name: str, *, default: bool) -> bool:
    raw = request.arg(name)
    if raw is None:
        return default
    if raw.lower() in ("true", "1"):
        return True
    if raw.lower() in ("false", "0"):
        return False
    raise _invalid(f"Invalid value at '{name}' ({raw})")


def _encode_page_token(last: GmailMessage) -> str:
    date_ms, number = _order_key(last)
    return f"{date_ms:013d}{number:020d}"


def _decode_page_token(token: str) -> tuple[int, int]:
    if len(token) != 33 or not token.isdigit():
        raise _invalid("Invalid pageToken")
    return int(token[:13]), int(token[13:])


def _payload(part: Any, part_id: str, message_id: str, wanted: set[str] | None, bodies: bool) -> dict[str, Any]:
    headers = [{"name": k, "value": _mime.decode(v)} for k, v in part.items()
               if wanted is None or k.lower() in wanted]
    filename = part.get_filename()
    data: dict[str, Any] = {"partId": part_id, "mimeType": part.get_content_type(),
                            "filename": _mime.decode(filename) if filename else "", "headers": headers}
    if not bodies:
        data["body"] = {"size": 0}
        return data
    if part.is_multipart():
        data["body"] = {"size": 0}
        data["parts"] = [
            _payload(sub, f"{part_id}.{i}" if part_id else str(i), message_id, None, True)
            for i, sub in enumerate(part.get_payload())
        ]
        return data
    content = part.get_payload(decode=True)
    content = content if isinstance(content, bytes) else b""
    if filename:
        attachment_id = base64.urlsafe_b64encode(f"{message_id}:{part_id}".encode()).decode().rstrip("=")
        data["body"] = {"attachmentId": attachment_id, "size": len(content)}
    elif content:
        data["body"] = {"size": len(content), "data": base64.urlsafe_b64encode(content).decode("ascii")}
    else:
        data["body"] = {"size": 0}
    return data


def _find_part(message: Any, part_id: str) -> Any:
    part = message
    for index in part_id.split(".") if part_id else []:
        if not part.is_multipart():
            return None
        children = part.get_payload()
        if not index.isdigit() or int(index) >= len(children):
            return None
        part = children[int(index)]
    return part


__all__ = [
    "DEFAULT_COSTS", "SYSTEM_LABELS", "GmailCall", "GmailFake", "GmailLabel", "GmailMailbox", "GmailMessage",
    "GmailQuota", "GmailSendAs", "HistoryRecord", "HistoryType", "MessageRef", "QuotaRejection", "google_error",
    "parse_query",
]
