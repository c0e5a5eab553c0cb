"""A fake Microsoft Graph (v1.0 mail) and Microsoft identity platform, stateful and in memory.

Follows https://learn.microsoft.com/graph/api/resources/message, .../resources/mailfolder,
.../api/message-delta, /graph/delta-query-messages and /graph/delta-query-overview for what plmail
uses. Paths are the real ones without the host (`/v1.0/me/...` or `/v1.0/users/{id|upn}/...`);
`mailFolders('{id}')` and `messages('{id}')` forms are accepted too, path words are case-insensitive.

- `GET /me`                                           the signed-in user
- `GET|POST /me/mailFolders`                          top-level folders ($top default 10, $skip,
                                                      includeHiddenFolders) / create
- `GET /me/mailFolders/{id|wellKnownName}`            inbox, drafts, sentitems, deleteditems,
                                                      junkemail, archive, outbox, msgfolderroot
- `GET|POST /me/mailFolders/{id}/childFolders`
- `GET /me/mailFolders/{id}/messages`, `GET /me/messages`   $top, $skip, $select, $orderby,
      $filter=internetMessageId eq '{id}'
- `GET /me/mailFolders/{id}/messages/delta`           $select, $top / `Prefer: odata.maxpagesize`,
      $filter=receivedDateTime ge|gt {iso}, $orderby=receivedDateTime desc (otherwise oldest first:
      the order is "not guaranteed"), changeType=created|updated|deleted. The first round
      enumerates the folder in pages (`@odata.nextLink` with `$skiptoken`) and ends with
      `@odata.deltaLink` (`$deltatoken`); following that link returns only what changed since:
      new/changed messages in full, moved-out or deleted ones as `{"id", "@removed": {"reason"}}`.
      An expired link answers 410 `syncStateNotFound` (`mailbox.expire_delta_links()`,
      `mailbox.delta_link_ttl`).
- `GET|PATCH|DELETE /me/messages/{id}`                fields incl. conversationId, parentFolderId,
      isRead, flag.flagStatus, categories, receivedDateTime, internetMessageId, from/toRecipients/
      ccRecipients; `#microsoft.graph.eventMessage` with meetingMessageType; PATCH isRead, flag,
      categories, importance, inferenceClassification
- `GET /me/messages/{id}/$value`                      the MIME bytes
- `POST /me/messages/{id}/move` {destinationId}      201 + the moved message — with a NEW id when
      the mailbox has `immutable_ids=False` (private outlook.com behaviour); the old id then 404s
- `POST /me/messages/{id}/permanentDelete`            204
- `POST /me/messages` (Content-Type: text/plain)      a draft in Drafts from base64 MIME → 201 + the message;
      400 ErrorMimeContentInvalidBase64String for a body that is not base64
- `POST /me/messages` or `/me/mailFolders/{id}/messages` (application/json)   a message created from Graph's message
      JSON (subject, body, from, toRecipients, ccRecipients, bccRecipients, replyTo, internetMessageId, isRead,
      internetMessageHeaders, singleValueExtendedProperties) in Drafts or the folder → 201 + the message; the
      fake writes its MIME. As Exchange does: PR_MESSAGE_FLAGS (`Integer 0x0E07`) decides isRead (mfRead 0x1)
      and isDraft (mfUnsent 0x8); without it the item is a draft. PR_CLIENT_SUBMIT_TIME (`SystemTime 0x0039`)
      is its Date and sentDateTime, PR_MESSAGE_DELIVERY_TIME (`SystemTime 0x0E06`) its receivedDateTime,
      PR_IN_REPLY_TO_ID (`String 0x1042`) and PR_INTERNET_REFERENCES (`String 0x1039`) its In-Reply-To and
      References. 400 RequestBodyRead for a body that is no JSON object or names a property not writable on
      create; 400 InvalidInternetMessageHeader for a custom header not named x-..., 400
      InvalidInternetMessageHeaderCollection for more than five; 400 ErrorInvalidProperty for an extended property
      id in none of Graph's formats, 400 ErrorInvalidExtendedPropertyValue for a value its type cannot hold.
      A MIME body (text/plain, base64) to a folder creates a draft there, whatever it says.
- `POST /me/messages/{id}/attachments`                a fileAttachment {name, contentType, contentBytes,
      isInline, contentId} added to the message's MIME → 201 + the attachment; 400 for another @odata.type, a
      missing name or contentBytes that are not base64; an attachment of 3 MB or more is refused with 413
      (Graph documents "under 3 MB" for this POST and an upload session for larger files, which the fake
      does not offer; the error code is the fake's own)
- `POST /me/messages/{id}/attachments/createUploadSession` {AttachmentItem: {attachmentType "file", name, size,
      contentType, isInline, contentId}} for a file of 3 MB up to 150 MB (smaller: 400
      ErrorAttachmentSizeShouldNotBeLessThanMinimumSize) → 201 {uploadUrl, expirationDateTime,
      nextExpectedRanges ["0-"]}; `PUT {uploadUrl}` (pre-authenticated: an Authorization header is refused, 401)
      with `Content-Range: bytes {start}-{end}/{total}` in order → 200 {nextExpectedRanges ["{next}"]}, the last
      one 201 with a Location header, and the file is attached; a range out of order is 400
- `POST /me/messages/{id}/send`                       sends a draft (202): delivered to its To, Cc and Bcc
      (`mailbox.deliveries`: what recipients receive, without the Bcc header), then moved to Sent Items —
      under the same id when ids are immutable; 400 for a message that is not a draft
- `POST /me/sendMail` (Content-Type: text/plain)      sends base64 MIME (202) and files a copy in Sent Items
      Both sends need the Mail.Send permission in the token's grant: without it 403 ErrorAccessDenied.
- `POST /subscriptions` {changeType, notificationUrl, resource, expirationDateTime, clientState}
      change notifications on `me/messages` (or a folder's): first the validation handshake (POST
      notificationUrl?validationToken=..., which must answer 200 text/plain with the token within 10 s, else
      400 ValidationError), https only (http on loopback for the tests), at most 10,080 minutes ahead → 201;
      `PATCH|GET|DELETE /subscriptions/{id}` (404 ResourceNotFound once gone: `forget_subscriptions()`);
      `await fake.notify("created", message)` posts `{"value": [...]}` with subscriptionId and clientState
- `GET /{tenant}/oauth2/v2.0/authorize`, `POST /{tenant}/oauth2/v2.0/token` (authorization_code
      with PKCE, refresh_token with rotation; AADSTS-style `invalid_grant` for revoked grants)

Errors are Graph's `{"error": {"code", "message", "innerError": {"date", "request-id",
"client-request-id"}}}`: 401 InvalidAuthenticationToken, 404 ErrorItemNotFound, 400
ErrorInvalidRequest / RequestBodyRead, 410 syncStateNotFound, 429 TooManyRequests with
`Retry-After` (a per-mailbox request budget per window, `throttle.requests_per_window`, and
`throttle.throttle_next(n, retry_after)`), 429 ApplicationThrottled "Application is over its MailboxConcurrency
limit." with `Retry-After` for a fifth request in flight at once (`throttle.max_concurrent`; `fake.latency` makes
requests take time, so that they can overlap), 403 ErrorAccessDenied. `fake.fail_next(operation, error)` answers
the next `createMessage`, `addAttachment`, `deleteMessage`, `send` or `sendMail` with `throttled` (429 + Retry-After),
`accessDenied`, `notFound` or `serverError` instead. A refresh that asks for a scope the grant does not hold
is refused with AADSTS65001 (invalid_grant, suberror consent_required), as Microsoft documents.

Seeding and inspection: `fake.mailbox` (`GraphMailbox`): `folder()`, `add_folder()`,
`add_message()`, `move()`, `update()`, `delete()`, `in_folder()`, `messages`, `folders`, `deliveries`,
`expire_delta_links()`; `fake.calls` records every API request.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import itertools
import re
import threading
import uuid
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from email import policy as email_policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import format_datetime, formataddr, make_msgid
from typing import Any, Literal
from urllib.parse import quote, urlencode, urlsplit

import httpx

from tests.support.fakes import _mime, _outgoing
from tests.support.fakes._asgi import AsgiApp, HttpError, Request, Response, empty_response, json_response
from tests.support.fakes.clock import Clock, SystemClock
from tests.support.fakes.oauth import FailureKind, OAuthFailure, OAuthState

WELL_KNOWN_FOLDERS: tuple[tuple[str, str], ...] = (
    ("inbox", "Inbox"), ("drafts", "Drafts"), ("sentitems", "Sent Items"), ("deleteditems", "Deleted Items"),
    ("junkemail", "Junk Email"), ("archive", "Archive"), ("outbox", "Outbox"),
)
ROOT = "msgfolderroot"
FlagStatus = Literal["notFlagged", "flagged", "complete"]
MeetingMessageType = Literal["none", "meetingRequest", "meetingCancelled", "meetingAccepted",
                             "meetingTenativelyAccepted", "meetingDeclined"]
RemovedReason = Literal["deleted", "changed"]
InjectedError = Literal["throttled", "accessDenied", "notFound", "serverError"]
MAIL_SEND = "https://graph.microsoft.com/Mail.Send"
# What a mailbox connected today holds: plmail's scopes (tests for an older grant issue tokens with less).
GRANTED_SCOPE = ("openid profile email offline_access https://graph.microsoft.com/User.Read "
                 "https://graph.microsoft.com/Mail.ReadWrite https://graph.microsoft.com/Mail.Send")
ChangeType = Literal["created", "updated", "deleted"]
CONCURRENCY_RETRY_AFTER = 1  # seconds, on a refusal for concurrency

_MESSAGE_PROPERTIES = (
    "id", "createdDateTime", "lastModifiedDateTime", "changeKey", "categories", "receivedDateTime",
    "sentDateTime", "hasAttachments", "internetMessageId", "subject", "bodyPreview", "importance",
    "parentFolderId", "conversationId", "conversationIndex", "isDeliveryReceiptRequested",
    "isReadReceiptRequested", "isRead", "isDraft", "webLink", "inferenceClassification", "body", "sender",
    "from", "toRecipients", "ccRecipients", "bccRecipients", "replyTo", "flag", "uniqueBody",
    "meetingMessageType", "internetMessageHeaders",
)
_PROPERTY_NAMES = {name.lower(): name for name in _MESSAGE_PROPERTIES}
_PATCHABLE = {"isread", "flag", "categories", "importance", "inferenceclassification"}
# What a JSON create may set (lower case); read-only ones (sentDateTime, isDraft, ...) are refused as Graph does.
_CREATABLE = {"subject", "body", "from", "sender", "torecipients", "ccrecipients", "bccrecipients", "replyto",
              "internetmessageid", "internetmessageheaders", "isread", "importance", "categories", "flag",
              "singlevalueextendedproperties", "isdeliveryreceiptrequested", "isreadreceiptrequested"}
PR_MESSAGE_FLAGS = "integer 0x0e07"
MSGFLAG_READ, MSGFLAG_UNSENT = 0x1, 0x8
PR_CLIENT_SUBMIT_TIME = "systemtime 0x0039"
PR_MESSAGE_DELIVERY_TIME = "systemtime 0x0e06"
PR_IN_REPLY_TO_ID = "string 0x1042"
PR_INTERNET_REFERENCES = "string 0x1039"
_PROPERTY_TYPES = "Binary|Boolean|Currency|CLSID|Double|Float|Integer|Long|Short|SystemTime|String"
# Graph's three id formats: "{type} {proptag}", "{type} {guid} Name {name}", "{type} {guid} Id {id}"
_EXTENDED_ID = re.compile(
    rf"(?i)^({_PROPERTY_TYPES}) (0x[0-9a-f]{{4}}|\{{?[0-9a-f-]{{36}}\}}? (Name \S.*|Id 0x[0-9a-f]+))$")
MAX_ATTACHMENT_POST = 3 * 1024 * 1024  # "If the file size is under 3 MB, do a single POST on the attachments"
MAX_ATTACHMENT_UPLOAD = 150 * 1024 * 1024  # "If the file size is between 3 MB and 150 MB, create an upload session"


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _encode_id(prefix: str, text: str) -> str:
    return prefix + base64.urlsafe_b64encode(text.encode()).decode()


# --- the mailbox model -------------------------------------------------------------------------
@dataclass
class GraphFolder:
    id: str
    display_name: str
    parent_id: str | None
    well_known: str | None = None
    is_hidden: bool = False


@dataclass
class GraphMessage:
    id: str
    folder_id: str
    raw: bytes
    conversation_id: str
    internet_message_id: str
    subject: str
    received: datetime
    sent: datetime | None
    created: datetime
    last_modified: datetime
    serial: int
    is_read: bool = False
    is_draft: bool = False
    flag_status: FlagStatus = "notFlagged"
    categories: list[str] = field(default_factory=list)
    importance: str = "normal"
    inference_classification: str = "focused"
    meeting_message_type: MeetingMessageType | None = None
    version: int = 1
    _parsed: _mime.Parsed | None = field(default=None, repr=False)

    @property
    def parsed(self) -> _mime.Parsed:
        if self._parsed is None:
            self._parsed = _mime.parse(self.raw)
        return self._parsed

    @property
    def change_key(self) -> str:
        return "CQAAABYAAA" + base64.b64encode(f"{self.serial}:{self.version}".encode()).decode()

    def resource(self, select: set[str] | None = None, *, odata_type: bool = False) -> dict[str, Any]:
        def recipients(header: str) -> list[dict[str, Any]]:
            return [{"emailAddress": {"name": name or address, "address": address}}
                    for name, address in self.parsed.addresses(header)]

        senders = recipients("From")
        plain, rich = _mime.bodies(self.parsed)
        full: dict[str, Any] = {
            "id": self.id,
            "createdDateTime": _iso(self.created),
            "lastModifiedDateTime": _iso(self.last_modified),
            "changeKey": self.change_key,
            "categories": list(self.categories),
            "receivedDateTime": _iso(self.received),
            "sentDateTime": _iso(self.sent) if self.sent else None,
            "hasAttachments": _mime.has_attachments(self.parsed),
            "internetMessageId": self.internet_message_id,
            "subject": self.subject,
            "bodyPreview": _mime.preview(self.parsed, 255),
            "importance": self.importance,
            "parentFolderId": self.folder_id,
            "conversationId": self.conversation_id,
            "conversationIndex": base64.b64encode(self.conversation_id.encode()[:22]).decode(),
            "isDeliveryReceiptRequested": False,
            "isReadReceiptRequested": False,
            "isRead": self.is_read,
            "isDraft": self.is_draft,
            "webLink": f"https://outlook.live.com/owa/?ItemID={quote(self.id, safe='')}&viewmodel=ReadMessageItem",
            "inferenceClassification": self.inference_classification,
            "body": {"contentType": "html" if rich is not None else "text",
                     "content": rich if rich is not None else (plain or "")},
            "sender": senders[0] if senders else None,
            "from": senders[0] if senders else None,
            "toRecipients": recipients("To"),
            "ccRecipients": recipients("Cc"),
            "bccRecipients": recipients("Bcc"),
            "replyTo": recipients("Reply-To"),
            "flag": {"flagStatus": self.flag_status},
        }
        if self.meeting_message_type is not None:
            full["meetingMessageType"] = self.meeting_message_type
        if select is not None and "internetMessageHeaders" in select:  # Graph sends them only when asked
            full["internetMessageHeaders"] = [{"name": k, "value": v} for k, v in self.parsed.headers]
        head: dict[str, Any] = {}
        if odata_type or self.meeting_message_type is not None:
            head["@odata.type"] = ("#microsoft.graph.eventMessage" if self.meeting_message_type is not None
                                   else "#microsoft.graph.message")
        head["@odata.etag"] = f'W/"{self.change_key}"'
        if select is None:
            return {**head, **full}
        return {**head, **{k: v for k, v in full.items() if k == "id" or k in select}}


@dataclass(frozen=True)
class FolderEvent:
    seq: int
    folder_id: str
    message_id: str
    kind: Literal["added", "updated", "removed"]
    reason: RemovedReason = "deleted"


@dataclass(frozen=True)
class DeltaOptions:
    select: frozenset[str] | None = None
    received_op: Literal["ge", "gt"] | None = None
    received_at: datetime | None = None
    newest_first: bool = False
    change_type: ChangeType | None = None
    top: int | None = None


@dataclass(frozen=True)
class DeltaEntry:
    message_id: str
    removed: bool = False
    reason: RemovedReason = "deleted"


@dataclass
class DeltaRound:
    """One round of delta pages: frozen entries, served by `$skiptoken`s that name an offset."""

    key: str
    folder_id: str
    start_seq: int
    options: DeltaOptions
    entries: list[DeltaEntry]
    issued_at: float
    expired: bool = False


@dataclass
class DeltaLinkState:
    token: str
    folder_id: str
    seq: int
    options: DeltaOptions
    issued_at: float
    expired: bool = False
    used: int = 0


class GraphMailbox:
    """One Microsoft 365 / outlook.com mailbox. Thread-safe; every change is logged per folder."""

    def __init__(self, user_principal_name: str, display_name: str, lock: threading.RLock, *, clock: Clock,
                 immutable_ids: bool = True, move_removed_reason: RemovedReason = "deleted") -> None:
        self.user_principal_name = user_principal_name
        self.display_name = display_name
        self.user_id = str(uuid.uuid5(uuid.NAMESPACE_DNS, user_principal_name))
        self.lock = lock
        self.clock = clock
        self.immutable_ids = immutable_ids
        """False: a move gives the message a new id (private outlook.com mailboxes do this)."""
        self.move_removed_reason: RemovedReason = move_removed_reason
        self.delta_link_ttl: float | None = None
        """Seconds after which a delta/skip token answers 410; None = only `expire_delta_links()`."""
        self.folders: dict[str, GraphFolder] = {}
        self.messages: dict[str, GraphMessage] = {}
        self.events: list[FolderEvent] = []
        self.renamed: dict[str, str] = {}
        """Old id → new id for every id change by a move (immutable_ids=False)."""
        self.rounds: dict[str, DeltaRound] = {}
        self.deliveries: list[_outgoing.Delivery] = []
        """What the mailbox sent out, in order."""
        self.aliases: list[str] = []
        """The mailbox's further addresses (Exchange proxy addresses, `smtp:` beside the primary `SMTP:`)."""
        self.delta_links: dict[str, DeltaLinkState] = {}
        self._seq = 0
        self._serial = itertools.count(1)
        root = self._new_folder("Top of Information Store", None, ROOT)
        for name, display in WELL_KNOWN_FOLDERS:
            self._new_folder(display, root.id, name)

    # --- folders ---
    def _new_folder(self, display_name: str, parent_id: str | None, well_known: str | None = None) -> GraphFolder:
        folder = GraphFolder(_encode_id("AQMkAD", f"{self.user_principal_name}/folder/{next(self._serial)}"),
                             display_name, parent_id, well_known)
        self.folders[folder.id] = folder
        return folder

    def folder(self, ref: str) -> GraphFolder:
        """A folder by id, well-known name (`inbox`, `sentitems`, ...) or display name / path `A/B`."""
        with self.lock:
            if ref in self.folders:
                return self.folders[ref]
            lowered = ref.lower()
            for folder in self.folders.values():
                if folder.well_known == lowered:
                    return folder
            parent: GraphFolder | None = self.folder(ROOT)
            found: GraphFolder | None = None
            for part in ref.split("/"):
                found = next((f for f in self.folders.values()
                              if parent is not None and f.parent_id == parent.id
                              and f.display_name.lower() == part.lower()), None)
                parent = found
            if found is None:
                raise KeyError(ref)
            return found

    def add_folder(self, display_name: str, parent: str = ROOT, *, hidden: bool = False) -> GraphFolder:
        with self.lock:
            parent_folder = self.folder(parent)
            if any(f.parent_id == parent_folder.id and f.display_name.lower() == display_name.lower()
                   for f in self.folders.values()):
                raise ValueError(f"folder {display_name!r} exists")
            folder = self._new_folder(display_name, parent_folder.id)
            folder.is_hidden = hidden
            return folder

    def children(self, folder_id: str, *, hidden: bool = False) -> list[GraphFolder]:
        return [f for f in self.folders.values() if f.parent_id == folder_id and (hidden or not f.is_hidden)]

    def in_folder(self, folder: str) -> list[GraphMessage]:
        with self.lock:
            folder_id = self.folder(folder).id
            return sorted((m for m in self.messages.values() if m.folder_id == folder_id), key=lambda m: m.serial)

    # --- messages ---
    def add_message(self, raw: bytes, folder: str = "inbox", *, is_read: bool = False,
                    flag_status: FlagStatus = "notFlagged", categories: Sequence[str] = (),
                    received: datetime | None = None, conversation_id: str | None = None,
                    meeting_message_type: MeetingMessageType | None = None, is_draft: bool | None = None,
                    importance: str = "normal", inference_classification: str = "focused") -> GraphMessage:
        """Deliver `raw` into `folder`. conversationId defaults to the conversation of the message
        named in In-Reply-To/References, else a new one; receivedDateTime to strictly increasing times."""
        with self.lock:
            target = self.folder(folder)
            parsed = _mime.parse(raw)
            serial = next(self._serial)
            now = datetime.fromtimestamp(self.clock(), UTC)
            if received is None:
                latest = max((m.received for m in self.messages.values()), default=None)
                received = now if latest is None or latest < now else datetime.fromtimestamp(
                    latest.timestamp() + 1, UTC)
            internet_id = parsed.header("Message-ID") or f"<fake-{serial}@graph.example>"
            message = GraphMessage(
                id=_encode_id("AAMkAD", f"{self.user_principal_name}/message/{serial}"),
                folder_id=target.id, raw=raw,
                conversation_id=conversation_id or self._conversation_for(parsed, serial),
                internet_message_id=internet_id, subject=parsed.header("Subject") or "",
                received=received, sent=parsed.date(), created=received, last_modified=received, serial=serial,
                is_read=is_read, is_draft=target.well_known == "drafts" if is_draft is None else is_draft,
                flag_status=flag_status, categories=list(categories), importance=importance,
                inference_classification=inference_classification, meeting_message_type=meeting_message_type,
                _parsed=parsed,
            )
            self.messages[message.id] = message
            self._event(target.id, message.id, "added")
            return message

    def _conversation_for(self, parsed: _mime.Parsed, serial: int) -> str:
        referenced = " ".join(filter(None, [parsed.header("In-Reply-To"), parsed.header("References")]))
        for ref in re.findall(r"<[^>]+>", referenced):
            for message in self.messages.values():
                if message.internet_message_id == ref:
                    return message.conversation_id
        return _encode_id("AAQkAD", f"{self.user_principal_name}/conversation/{serial}")

    def message(self, message_id: str) -> GraphMessage:
        with self.lock:
            return self.messages[message_id]

    def move(self, message_id: str, destination: str) -> GraphMessage:
        """Move to `destination` (id or well-known name): `@removed` in the source's delta, an add in the
        target's; with `immutable_ids=False` the message gets a new id."""
        with self.lock:
            message = self.messages[message_id]
            target = self.folder(destination)
            if target.id == message.folder_id:
                return message
            self._event(message.folder_id, message.id, "removed", self.move_removed_reason)
            if not self.immutable_ids:
                del self.messages[message.id]
                new_id = _encode_id("AAMkAD", f"{self.user_principal_name}/message/{next(self._serial)}")
                self.renamed[message.id] = new_id
                message.id = new_id
                self.messages[new_id] = message
            message.folder_id = target.id
            self._touch(message)
            self._event(target.id, message.id, "added")
            return message

    def update(self, message_id: str, *, is_read: bool | None = None, flag_status: FlagStatus | None = None,
               categories: Sequence[str] | None = None, importance: str | None = None,
               inference_classification: str | None = None) -> GraphMessage:
        """Change properties (an "updated" change in the message's folder)."""
        with self.lock:
            message = self.messages[message_id]
            if is_read is not None:
                message.is_read = is_read
            if flag_status is not None:
                message.flag_status = flag_status
            if categories is not None:
                message.categories = list(categories)
            if importance is not None:
                message.importance = importance
            if inference_classification is not None:
                message.inference_classification = inference_classification
            self._touch(message)
            self._event(message.folder_id, message.id, "updated")
            return message

    def delete(self, message_id: str) -> None:
        """DELETE /messages/{id}: gone from every folder (`@removed` reason "deleted")."""
        with self.lock:
            message = self.messages.pop(message_id)
            self._event(message.folder_id, message.id, "removed", "deleted")

    # --- writing mail ---
    def _deliver(self, message: GraphMessage) -> None:
        self.deliveries.append(_outgoing.Delivery(
            message.id, message.conversation_id, _outgoing.recipients(message.parsed),
            _outgoing.without_bcc(message.raw), _outgoing.sender(message.parsed)))

    def send_draft(self, message_id: str) -> GraphMessage:
        """Send a draft as it is held and move it to Sent Items (ValueError: not a draft)."""
        with self.lock:
            message = self.messages[message_id]
            if not message.is_draft:
                raise ValueError("not a draft")
            self._deliver(message)
            message.is_draft = False
            message.is_read = True
            return self.move(message.id, "sentitems")

    def send_mime(self, raw: bytes) -> GraphMessage:
        """sendMail: delivered, and a copy (Bcc kept) filed in Sent Items under a new id."""
        with self.lock:
            message = self.add_message(raw, "sentitems", is_read=True, is_draft=False)
            self._deliver(message)
            return message

    def add_attachment(self, message_id: str, name: str, content_type: str, content: bytes, *, inline: bool,
                       content_id: str | None) -> GraphMessage:
        """A file attached to the message: its MIME gains the part (an "updated" change in its folder)."""
        with self.lock:
            message = self.messages[message_id]
            mime = BytesParser(policy=email_policy.default).parsebytes(message.raw)
            assert isinstance(mime, EmailMessage)
            maintype, _, subtype = content_type.partition("/")
            mime.add_attachment(content, maintype=maintype or "application", subtype=subtype or "octet-stream",
                                filename=name, disposition="inline" if inline else "attachment",
                                cid=f"<{content_id}>" if content_id else None)
            message.raw = mime.as_bytes(policy=email_policy.SMTP)
            message._parsed = None
            self._touch(message)
            self._event(message.folder_id, message.id, "updated")
            return message

    def expire_delta_links(self, folder: str | None = None) -> None:
        """Every delta link and skip token issued so far (for `folder`, or all) answers 410 from now on."""
        with self.lock:
            folder_id = self.folder(folder).id if folder is not None else None
            for state in self.delta_links.values():
                if folder_id is None or state.folder_id == folder_id:
                    state.expired = True
            for round_ in self.rounds.values():
                if folder_id is None or round_.folder_id == folder_id:
                    round_.expired = True

    def _touch(self, message: GraphMessage) -> None:
        message.version += 1
        message.last_modified = datetime.fromtimestamp(self.clock(), UTC)

    def _event(self, folder_id: str, message_id: str, kind: Literal["added", "updated", "removed"],
               reason: RemovedReason = "deleted") -> None:
        self._seq += 1
        self.events.append(FolderEvent(self._seq, folder_id, message_id, kind, reason))

    # --- delta ---
    def _matches(self, message: GraphMessage, options: DeltaOptions) -> bool:
        if options.received_at is None:
            return True
        if options.received_op == "gt":
            return message.received > options.received_at
        return message.received >= options.received_at

    def start_round(self, folder_id: str, options: DeltaOptions, since: DeltaLinkState | None) -> DeltaRound:
        entries: list[DeltaEntry] = []
        if since is None:
            members = [m for m in self.messages.values() if m.folder_id == folder_id and self._matches(m, options)]
            members.sort(key=(lambda m: (m.received, m.serial)) if options.newest_first else (lambda m: m.serial),
                         reverse=options.newest_first)
            entries = [DeltaEntry(m.id) for m in members]
        else:
            by_id: dict[str, list[FolderEvent]] = {}
            for event in self.events:
                if event.seq > since.seq and event.folder_id == folder_id:
                    by_id.setdefault(event.message_id, []).append(event)
            for message_id, events in by_id.items():
                message = self.messages.get(message_id)
                present = message is not None and message.folder_id == folder_id
                created = events[0].kind == "added"
                if present:
                    assert message is not None
                    change: ChangeType = "created" if created else "updated"
                    if (options.change_type in (None, change)) and self._matches(message, options):
                        entries.append(DeltaEntry(message_id))
                elif not created and options.change_type in (None, "deleted"):
                    removal = next(e for e in reversed(events) if e.kind == "removed")
                    entries.append(DeltaEntry(message_id, removed=True, reason=removal.reason))
        round_ = DeltaRound(uuid.uuid4().hex, folder_id, self._seq, options, entries, self.clock())
        self.rounds[round_.key] = round_
        return round_

    def issue_delta_link(self, round_: DeltaRound) -> DeltaLinkState:
        state = DeltaLinkState(base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("="),
                               round_.folder_id, round_.start_seq, round_.options, self.clock())
        self.delta_links[state.token] = state
        return state

    def is_expired(self, issued_at: float, expired: bool) -> bool:
        return expired or (self.delta_link_ttl is not None and self.clock() - issued_at >= self.delta_link_ttl)


# --- throttling ----------------------------------------------------------------------------------
class GraphThrottle:
    """Outlook's published limits (learn.microsoft.com/graph/throttling-limits, "Outlook service limits"): per app
    and mailbox 10,000 API requests in a 10 minute period (a fixed window here), and per app 4 concurrent requests
    ("regardless of whether the requests all access the same mailbox"; the fake serves one app); plus forced
    throttling of the next N requests. Every refusal is a 429 with Retry-After."""

    def __init__(self, clock: Clock, requests_per_window: int | None = 10_000, window_seconds: float = 600.0,
                 max_concurrent: int | None = 4) -> None:
        self.clock = clock
        self.requests_per_window = requests_per_window
        self.window_seconds = window_seconds
        self.max_concurrent = max_concurrent
        self.throttled = 0
        self.concurrency_refused = 0
        self.in_flight = 0
        self.peak_in_flight = 0
        self._lock = threading.Lock()
        self._windows: dict[str, tuple[float, int]] = {}
        self._forced: list[float] = []

    def enter(self) -> bool:
        """A request starts; False (and nothing started) when the app already has `max_concurrent` in flight."""
        with self._lock:
            if self.max_concurrent is not None and self.in_flight >= self.max_concurrent:
                self.throttled += 1
                self.concurrency_refused += 1
                return False
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            return True

    def leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def throttle_next(self, count: int = 1, retry_after: float = 1.0) -> None:
        with self._lock:
            self._forced.extend([retry_after] * count)

    def check(self, mailbox: str) -> float | None:
        with self._lock:
            if self._forced:
                self.throttled += 1
                return self._forced.pop(0)
            limit = self.requests_per_window
            if limit is None:
                return None
            now = self.clock()
            start, used = self._windows.get(mailbox, (now, 0))
            if now >= start + self.window_seconds:
                start, used = now, 0
            if used >= limit:
                self.throttled += 1
                return start + self.window_seconds - now
            self._windows[mailbox] = (start, used + 1)
            return None


# --- the server --------------------------------------------------------------------------------
@dataclass(frozen=True)
class GraphCall:
    method: str
    path: str
    query: dict[str, list[str]]
    user: str
    status: int
    at: float


_AADSTS: dict[FailureKind, tuple[int, str]] = {
    "invalid_request": (900144, "The request body must contain the following parameter."),
    "invalid_client": (7000215, "Invalid client secret provided. Ensure the secret being sent in the request is "
                                "the client secret value, not the client secret ID."),
    "unsupported_grant_type": (70003, "The app requested an unsupported grant type."),
    "invalid_grant": (70000, "The provided value for the 'code' parameter is not valid."),
    "redirect_uri_mismatch": (50011, "The redirect URI specified in the request does not match the redirect URIs "
                                     "configured for the application."),
    "code_reused": (54005, "OAuth2 Authorization code was already redeemed, please retry with a new valid code "
                           "or use an existing refresh token."),
    "code_expired": (70008, "The provided authorization code or refresh token has expired due to inactivity."),
    "pkce_mismatch": (501481, "The Code_Verifier does not match the code_challenge supplied in the "
                              "authorization request."),
    "pkce_missing": (9002325, "Proof Key for Code Exchange is required for cross-origin authorization code "
                              "redemption."),
    "consent_required": (65001, "The user or administrator has not consented to use the application with ID "
                                "'00000000-0000-0000-0000-00000000f4ce'. Send an interactive authorization "
                                "request for this user and resource."),
    "revoked": (50173, "The provided grant has expired due to it being revoked, a fresh auth token is needed. "
                       "The user might have changed or reset their password."),
    "unknown_refresh_token": (9002313, "Invalid request. Request is malformed or invalid."),
}

GraphHandler = Callable[[Request, GraphMailbox], Awaitable[Response]]


SUBSCRIPTION_MAX_MINUTES = 10_080  # Outlook messages: "10,080 minutes (under 7 days)"
VALIDATION_SECONDS = 10.0
TENANT_ID = "84bd8158-6d4d-4958-8b9f-9d6445542f95"


@dataclass
class GraphSubscription:
    id: str
    mailbox: str
    resource: str
    change_type: str
    notification_url: str
    client_state: str | None
    expiration: datetime
    renewals: int = 0

    def as_json(self) -> dict[str, Any]:
        return {"@odata.context": "https://graph.microsoft.com/v1.0/$metadata#subscriptions/$entity",
                "id": self.id, "resource": self.resource, "changeType": self.change_type,
                "notificationUrl": self.notification_url, "clientState": self.client_state,
                "expirationDateTime": _iso(self.expiration), "applicationId": "00000000-0000-0000-0000-00000000f4ce",
                "creatorId": self.mailbox, "latestSupportedTlsVersion": "v1_2"}


@dataclass
class UploadSession:
    """An attachment upload session: the bytes received so far, in order."""

    id: str
    mailbox: GraphMailbox
    message_id: str
    name: str
    content_type: str
    size: int
    inline: bool
    content_id: str | None
    token: str = field(default_factory=lambda: uuid.uuid4().hex)
    received: bytearray = field(default_factory=bytearray)


class GraphFake(AsgiApp):
    """Microsoft Graph mail + identity platform as one ASGI app. `fake.access_token` opens `fake.mailbox`."""

    def __init__(self, user_principal_name: str = "alex@outlook.com", *, display_name: str = "Alex Wilber",
                 clock: Clock | None = None, immutable_ids: bool = True,
                 move_removed_reason: RemovedReason = "deleted", requests_per_window: int | None = 10_000,
                 client_id: str = "00000000-0000-0000-0000-00000000f4ce", client_secret: str | None = "test-ms-secret",
                 expired_delta_status: int = 410, expired_delta_code: str = "syncStateNotFound") -> None:
        super().__init__(case_insensitive_paths=True)
        self.clock: Clock = clock or SystemClock()
        self.lock = threading.RLock()
        self.oauth = OAuthState(self.clock, token_prefix="EwB-fake-", rotate_refresh_tokens=True,
                                default_scope=GRANTED_SCOPE, refresh_within_grant=True)
        self.oauth.register_client(client_id, client_secret)
        self.client_id, self.client_secret = client_id, client_secret
        self.throttle = GraphThrottle(self.clock, requests_per_window)
        self.latency = 0.0  # seconds each API request takes; > 0 lets requests overlap (the concurrency limit)
        self.expired_delta_status = expired_delta_status
        self.expired_delta_code = expired_delta_code
        self.default_page_size = 10
        self.calls: list[GraphCall] = []
        self.injected: dict[str, list[tuple[InjectedError, float]]] = {}
        self.mailboxes: dict[str, GraphMailbox] = {}
        self.subscriptions: dict[str, GraphSubscription] = {}
        self.notifications: list[tuple[str, int]] = []  # (notificationUrl, status) of every delivery
        self.upload_sessions: dict[str, UploadSession] = {}
        self.mailbox = self.add_mailbox(user_principal_name, display_name, immutable_ids=immutable_ids,
                                        move_removed_reason=move_removed_reason)
        self.oauth.consenting_user = user_principal_name
        tokens = self.oauth.issue(user_principal_name)
        self.access_token, self.refresh_token = tokens.access_token, tokens.refresh_token
        self._routes()

    def add_mailbox(self, user_principal_name: str, display_name: str = "", *, immutable_ids: bool = True,
                    move_removed_reason: RemovedReason = "deleted") -> GraphMailbox:
        with self.lock:
            mailbox = GraphMailbox(user_principal_name, display_name or user_principal_name, self.lock,
                                   clock=self.clock, immutable_ids=immutable_ids,
                                   move_removed_reason=move_removed_reason)
            self.mailboxes[user_principal_name.lower()] = mailbox
            return mailbox

    def auth_headers(self, user_principal_name: str | None = None) -> dict[str, str]:
        token = self.access_token if user_principal_name is None else self.oauth.issue(user_principal_name).access_token
        return {"Authorization": f"Bearer {token}"}

    @property
    def messages(self) -> dict[str, GraphMessage]:
        return self.mailbox.messages

    def add_message(self, raw: bytes, folder: str = "inbox", **kwargs: Any) -> GraphMessage:
        return self.mailbox.add_message(raw, folder, **kwargs)

    def move(self, message_id: str, destination: str) -> GraphMessage:
        return self.mailbox.move(message_id, destination)

    def fail_next(self, operation: str, error: InjectedError, *, count: int = 1, retry_after: float = 1.0) -> None:
        """Answer the next `count` calls of `operation` (createMessage, deleteMessage, send, sendMail) with
        Graph's error instead."""
        with self.lock:
            self.injected.setdefault(operation, []).extend([(error, retry_after)] * count)

    def _inject(self, operation: str, request: Request) -> None:
        with self.lock:
            waiting = self.injected.get(operation)
            if not waiting:
                return
            error, retry_after = waiting.pop(0)
        if error == "throttled":
            seconds = max(1, round(retry_after))
            raise HttpError(self.error(429, "TooManyRequests", f"Please retry after {seconds} seconds.",
                                       [("retry-after", str(seconds))], request=request))
        if error == "accessDenied":
            raise HttpError(self._access_denied(request))
        if error == "notFound":
            raise self._not_found()
        raise HttpError(self.error(500, "ErrorInternalServerError", "An internal server error occurred.",
                                   request=request))

    def _access_denied(self, request: Request) -> Response:
        return self.error(403, "ErrorAccessDenied", "Access is denied. Check credentials and try again.",
                          request=request)

    def _may_send(self, request: Request) -> None:
        token = (request.header("authorization") or "")[7:].strip()
        grant = self.oauth.access_tokens.get(token)
        granted = {name.rsplit("/", 1)[-1].lower() for name in (grant.scope.split() if grant else [])}
        if "mail.send" not in granted:
            raise HttpError(self._access_denied(request))

    def _mime_body(self, request: Request) -> bytes:
        if not (request.header("content-type") or "").lower().startswith("text/plain"):
            raise self._bad_request("The fake creates and sends messages from MIME only (Content-Type: text/plain).")
        try:
            raw = base64.b64decode(request.body, validate=True)
        except ValueError:
            raw = b""
        if not raw:
            raise self._bad_request("Invalid base64 string for MIME content.", "ErrorMimeContentInvalidBase64String")
        return raw

    # --- errors ---
    def error(self, status: int, code: str, message: str, headers: Iterable[tuple[str, str]] = (),
              request: Request | None = None) -> Response:
        request_id = str(uuid.uuid4())
        client_request_id = (request.header("client-request-id") if request else None) or request_id
        inner = {"date": datetime.fromtimestamp(self.clock(), UTC).strftime("%Y-%m-%dT%H:%M:%S"),
                 "request-id": request_id, "client-request-id": client_request_id}
        return json_response({"error": {"code": code, "message": message, "innerError": inner}}, status,
                             [("request-id", request_id), ("client-request-id", client_request_id), *headers])

    def _not_found(self) -> HttpError:
        return HttpError(self.error(404, "ErrorItemNotFound", "The specified object was not found in the store."))

    def _bad_request(self, message: str, code: str = "ErrorInvalidRequest") -> HttpError:
        return HttpError(self.error(400, code, message))

    def not_found(self, request: Request) -> Response:
        return self.error(400, "BadRequest", f"Resource not found for the segment '{request.path.rsplit('/', 1)[-1]}'.",
                          request=request)

    def method_not_allowed(self, request: Request) -> Response:
        return self.error(405, "Request_BadRequest", f"The HTTP method '{request.method}' is not supported here.",
                          request=request)

    # --- routing ---
    async def dispatch(self, request: Request) -> Response:
        request.path = re.sub(r"/(mailFolders|messages|childFolders|users|AttachmentSessions)\('([^']*)'\)", r"/\1/\2",
                              request.path, flags=re.IGNORECASE)
        return await super().dispatch(request)

    def _routes(self) -> None:
        api: list[tuple[str, str, GraphHandler]] = [
            ("GET", "", self._me),
            ("GET", "/mailFolders", self._folders_list),
            ("POST", "/mailFolders", self._folders_create),
            ("GET", "/mailFolders/{folderId}", self._folder_get),
            ("GET", "/mailFolders/{folderId}/childFolders", self._folders_list),
            ("POST", "/mailFolders/{folderId}/childFolders", self._folders_create),
            ("GET", "/mailFolders/{folderId}/messages/delta", self._delta),
            ("GET", "/mailFolders/{folderId}/messages", self._messages_list),
            ("GET", "/messages", self._messages_list),
            ("POST", "/messages", self._message_create),
            ("POST", "/mailFolders/{folderId}/messages", self._message_create),
            ("POST", "/messages/{id}/attachments", self._attachment_add),
            ("POST", "/messages/{id}/attachments/createUploadSession", self._upload_session),
            ("POST", "/messages/{id}/send", self._message_send),
            ("POST", "/sendMail", self._send_mail),
            ("GET", "/messages/{id}", self._message_get),
            ("PATCH", "/messages/{id}", self._message_patch),
            ("DELETE", "/messages/{id}", self._message_delete),
            ("GET", "/messages/{id}/$value", self._message_value),
            ("POST", "/messages/{id}/move", self._message_move),
            ("POST", "/messages/{id}/permanentDelete", self._message_delete),
        ]
        for prefix in ("/v1.0/me", "/v1.0/users/{userId}"):
            for verb, path, handler in api:
                self.router.add(verb, prefix + path, self._api(handler))
        self.router.add("PUT", "/api/v2.0/AttachmentSessions/{id}", self._upload_put)
        self.router.add("POST", "/v1.0/subscriptions", self._subscription_create)
        self.router.add("GET", "/v1.0/subscriptions/{id}", self._subscription_get)
        self.router.add("PATCH", "/v1.0/subscriptions/{id}", self._subscription_patch)
        self.router.add("DELETE", "/v1.0/subscriptions/{id}", self._subscription_delete)
        self.router.add("POST", "/{tenant}/oauth2/v2.0/token", self._token)
        self.router.add("GET", "/{tenant}/oauth2/v2.0/authorize", self._authorize)

    # --- change notifications: /subscriptions ---
    def _subscriber(self, request: Request) -> GraphMailbox | Response:
        header = request.header("authorization") or ""
        token = header[7:].strip() if header.lower().startswith("bearer ") else ""
        user, _why = self.oauth.check_access_token(token)
        if user is None:
            return self.error(401, "InvalidAuthenticationToken", "Access token validation failure.", request=request)
        return self.mailboxes[user.lower()]

    def _subscription_expiry(self, raw: Any) -> datetime | Response:
        try:
            moment = datetime.fromisoformat(str(raw).replace("Z", "+00:00"))
        except ValueError:
            return self.error(400, "InvalidRequest", "expirationDateTime is not a valid date.")
        now = self.clock()
        if moment.timestamp() <= now:
            return self.error(400, "InvalidRequest", "Subscription expiration can only be in the future.")
        if moment.timestamp() > now + SUBSCRIPTION_MAX_MINUTES * 60:
            return self.error(400, "InvalidRequest",
                              f"Subscription expiration can only be {SUBSCRIPTION_MAX_MINUTES} minutes in the future.")
        return moment

    async def _subscription_create(self, request: Request) -> Response:
        mailbox = self._subscriber(request)
        if isinstance(mailbox, Response):
            return mailbox
        body = request.json() or {}
        url = str(body.get("notificationUrl") or "")
        parts = urlsplit(url)
        # Graph wants https; the fake also takes http on loopback, where the tests' plmail listens.
        if parts.scheme != "https" and not (parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost")):
            return self.error(400, "InvalidRequest", "The Notification Url must be https.")
        changes = str(body.get("changeType") or "").split(",")
        if not changes or not set(changes) <= {"created", "updated", "deleted"}:
            return self.error(400, "InvalidRequest", "The changeType is not valid for this resource.")
        resource = str(body.get("resource") or "")
        if not re.fullmatch(r"(me|users/[^/]+)(/mailFolders\('[^']+'\))?/messages", resource, re.IGNORECASE):
            return self.error(400, "ExtensionError", f"Operation: Create; Exception: [Resource '{resource}' is not "
                                                     f"supported for subscriptions.]")
        client_state = body.get("clientState")
        if client_state is not None and len(str(client_state)) > 128:
            return self.error(400, "InvalidRequest", "clientState must be at most 128 characters.")
        expiry = self._subscription_expiry(body.get("expirationDateTime"))
        if isinstance(expiry, Response):
            return expiry
        # The validation handshake: POST ?validationToken=... must answer 200, text/plain, the token, in 10 s.
        token = f"Validation: Testing client application reachability for subscription Request-Id: {uuid.uuid4()}"
        try:
            async with httpx.AsyncClient(timeout=VALIDATION_SECONDS) as http:
                answer = await http.post(url, params={"validationToken": token},
                                         headers={"Content-Type": "text/plain; charset=utf-8"})
            valid = (answer.status_code == 200 and answer.text == token
                     and answer.headers.get("content-type", "").startswith("text/plain"))
        except httpx.HTTPError:
            valid = False
        if not valid:
            return self.error(400, "ValidationError", "Subscription validation request failed. Notification "
                                                      "endpoint must respond with 200 OK to validation request.")
        subscription = GraphSubscription(str(uuid.uuid4()), mailbox.user_principal_name.lower(), resource,
                                         ",".join(changes), url, None if client_state is None else str(client_state),
                                         expiry)
        with self.lock:
            self.subscriptions[subscription.id] = subscription
        return json_response(subscription.as_json(), 201)

    def _owned_subscription(self, request: Request) -> GraphSubscription | Response:
        mailbox = self._subscriber(request)
        if isinstance(mailbox, Response):
            return mailbox
        with self.lock:
            found = self.subscriptions.get(request.params["id"])
        if found is None or found.mailbox != mailbox.user_principal_name.lower():
            return self.error(404, "ResourceNotFound", "The object was not found.", request=request)
        return found

    async def _subscription_get(self, request: Request) -> Response:
        found = self._owned_subscription(request)
        return found if isinstance(found, Response) else json_response(found.as_json())

    async def _subscription_patch(self, request: Request) -> Response:
        found = self._owned_subscription(request)
        if isinstance(found, Response):
            return found
        expiry = self._subscription_expiry((request.json() or {}).get("expirationDateTime"))
        if isinstance(expiry, Response):
            return expiry
        with self.lock:
            found.expiration = expiry
            found.renewals += 1
        return json_response(found.as_json())

    async def _subscription_delete(self, request: Request) -> Response:
        found = self._owned_subscription(request)
        if isinstance(found, Response):
            return found
        with self.lock:
            self.subscriptions.pop(found.id, None)
        return empty_response(204)

    def forget_subscriptions(self) -> None:
        """What Graph does to a subscription that lapsed or that it dropped: it is gone (PATCH answers 404)."""
        with self.lock:
            self.subscriptions.clear()

    async def notify(self, change_type: Literal["created", "updated", "deleted"], message: GraphMessage, *,
                     mailbox: GraphMailbox | None = None, client_state: str | None = None) -> list[httpx.Response]:
        """Post the change notification Graph sends each live subscription of the mailbox for this message;
        `client_state` replaces the subscription's own (a forged notification)."""
        owner = mailbox or self.mailbox
        now = self.clock()
        with self.lock:
            targets = [s for s in self.subscriptions.values() if s.mailbox == owner.user_principal_name.lower()
                       and s.expiration.timestamp() > now and change_type in s.change_type.split(",")]
        responses: list[httpx.Response] = []
        async with httpx.AsyncClient(timeout=VALIDATION_SECONDS) as http:
            for subscription in targets:
                resource = f"Users/{owner.user_id}/Messages/{message.id}"
                item: dict[str, Any] = {
                    "subscriptionId": subscription.id,
                    "subscriptionExpirationDateTime": _iso(subscription.expiration),
                    "changeType": change_type, "resource": resource, "tenantId": TENANT_ID,
                    "resourceData": {"@odata.type": "#Microsoft.Graph.Message", "@odata.id": resource,
                                     "@odata.etag": f'W/"{message.change_key}"', "id": message.id},
                }
                state = client_state if client_state is not None else subscription.client_state
                if state is not None:
                    item["clientState"] = state
                response = await http.post(subscription.notification_url, json={"value": [item]})
                with self.lock:
                    self.notifications.append((subscription.notification_url, response.status_code))
                responses.append(response)
        return responses

    def _api(self, handler: GraphHandler) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            header = request.header("authorization") or ""
            token = header[7:].strip() if header.lower().startswith("bearer ") else ""
            user, why = self.oauth.check_access_token(token)
            if user is None:
                message = {"missing": "Access token is empty.",
                           "expired": "Lifetime validation failed, the token is expired."}.get(
                    why, "IDX14100: JWT is not well formed, there are no dots (.).")
                return self.error(401, "InvalidAuthenticationToken", message, request=request, headers=[(
                    "www-authenticate", 'Bearer realm="", authorization_uri="https://login.microsoftonline.com/'
                                        'common/oauth2/authorize", client_id="00000003-0000-0000-c000-000000000000"')])
            mailbox = self.mailboxes[user.lower()]
            wanted = request.params.get("userId")
            if wanted is not None and wanted.lower() not in (user.lower(), mailbox.user_id):
                response = self.error(403, "ErrorAccessDenied", "Access is denied. Check credentials and try again.",
                                      request=request)
            elif not self.throttle.enter():
                response = self.error(429, "ApplicationThrottled", "Application is over its MailboxConcurrency limit.",
                                      [("retry-after", str(CONCURRENCY_RETRY_AFTER))], request=request)
            else:
                try:
                    if (retry_after := self.throttle.check(user.lower())) is not None:
                        seconds = max(1, round(retry_after))
                        response = self.error(429, "TooManyRequests", f"Please retry after {seconds} seconds.",
                                              [("retry-after", str(seconds))], request=request)
                    else:
                        if self.latency > 0:  # the time Exchange takes: the request stays in flight meanwhile
                            await asyncio.sleep(self.latency)
                        with self.lock:
                            response = await handler(request, mailbox)
                except HttpError as error:
                    response = error.response
                finally:
                    self.throttle.leave()
            with self.lock:
                self.calls.append(GraphCall(request.method, request.path, request.query, user, response.status,
                                            self.clock()))
            return response

        return endpoint

    def _context(self, request: Request, mailbox: GraphMailbox, what: str) -> str:
        return f"{request.base_url}/v1.0/$metadata#users('{quote(mailbox.user_principal_name)}')/{what}"

    def _folder(self, mailbox: GraphMailbox, ref: str) -> GraphFolder:
        """A folder as the API names it: by id or well-known name (never by display name)."""
        folder = mailbox.folders.get(ref) or next(
            (f for f in mailbox.folders.values() if f.well_known == ref.lower()), None)
        if folder is None:
            raise self._not_found()
        return folder

    def _int(self, raw: str | None, default: int) -> int:
        if raw is None or raw == "":
            return default
        if not raw.isdigit():
            raise self._bad_request(f"Invalid integer value '{raw}'.", "BadRequest")
        return int(raw)

    def _select(self, request: Request, raw: str | None = None) -> frozenset[str] | None:
        value = raw if raw is not None else request.arg("$select")
        if not value:
            return None
        names: set[str] = set()
        for item in value.split(","):
            name = item.strip().split("/")[-1]
            real = _PROPERTY_NAMES.get(name.lower())
            if real is None:
                raise self._bad_request(f"Could not find a property named '{name}' on type 'microsoft.graph.message'.",
                                        "RequestBroker--ParseUri")
            names.add(real)
        return frozenset(names)

    # --- user & folders ---
    async def _me(self, request: Request, mailbox: GraphMailbox) -> Response:
        """The user resource: its default properties, or with `$select` only those named. `proxyAddresses` (the
        mailbox's addresses, "SMTP:" the primary, "smtp:" the others) is not a default property: only $select
        returns it, as Graph does."""
        given, _, surname = mailbox.display_name.partition(" ")
        default = {
            "businessPhones": [], "displayName": mailbox.display_name, "givenName": given, "jobTitle": None,
            "mail": mailbox.user_principal_name, "mobilePhone": None, "officeLocation": None,
            "preferredLanguage": None, "surname": surname or None,
            "userPrincipalName": mailbox.user_principal_name, "id": mailbox.user_id,
        }
        everything = {**default, "proxyAddresses": [f"SMTP:{mailbox.user_principal_name}",
                                                    *(f"smtp:{alias}" for alias in mailbox.aliases)]}
        select = request.arg("$select")
        context = {"@odata.context": f"{request.base_url}/v1.0/$metadata#users/$entity"}
        if not select:
            return json_response({**context, **default})
        wanted = [name.strip() for name in select.split(",") if name.strip()]
        return json_response({**context, **{name: everything[name] for name in wanted if name in everything}})

    def _folder_resource(self, mailbox: GraphMailbox, folder: GraphFolder) -> dict[str, Any]:
        inside = [m for m in mailbox.messages.values() if m.folder_id == folder.id]
        return {"id": folder.id, "displayName": folder.display_name, "parentFolderId": folder.parent_id,
                "childFolderCount": len(mailbox.children(folder.id, hidden=True)),
                "unreadItemCount": sum(1 for m in inside if not m.is_read), "totalItemCount": len(inside),
                "isHidden": folder.is_hidden}

    async def _folders_list(self, request: Request, mailbox: GraphMailbox) -> Response:
        parent = self._folder(mailbox, request.params.get("folderId", ROOT))
        hidden = (request.arg("includeHiddenFolders") or "").lower() == "true"
        folders = mailbox.children(parent.id, hidden=hidden)
        top = self._int(request.arg("$top"), self.default_page_size)
        skip = self._int(request.arg("$skip"), 0)
        page = folders[skip: skip + top]
        data: dict[str, Any] = {"@odata.context": self._context(request, mailbox, "mailFolders"),
                                "value": [self._folder_resource(mailbox, f) for f in page]}
        if skip + top < len(folders):
            query = {k: v[0] for k, v in request.query.items() if k != "$skip"}
            data["@odata.nextLink"] = f"{request.base_url}{request.path}?{urlencode({**query, '$skip': skip + top})}"
        return json_response(data)

    async def _folders_create(self, request: Request, mailbox: GraphMailbox) -> Response:
        parent = self._folder(mailbox, request.params.get("folderId", ROOT))
        try:
            body = request.json()
            name = body["displayName"]
        except (ValueError, KeyError, TypeError):
            raise self._bad_request("Empty Payload. JSON content expected.") from None
        try:
            folder = mailbox.add_folder(str(name), parent.id, hidden=bool(body.get("isHidden", False)))
        except ValueError:
            raise HttpError(self.error(409, "ErrorFolderExists", "A folder with the specified name already exists.",
                                       request=request)) from None
        return json_response({"@odata.context": self._context(request, mailbox, "mailFolders/$entity"),
                              **self._folder_resource(mailbox, folder)}, 201)

    async def _folder_get(self, request: Request, mailbox: GraphMailbox) -> Response:
        folder = self._folder(mailbox, request.params["folderId"])
        return json_response({"@odata.context": self._context(request, mailbox, "mailFolders/$entity"),
                              **self._folder_resource(mailbox, folder)})

    # --- messages ---
    def _message(self, mailbox: GraphMailbox, message_id: str) -> GraphMessage:
        message = mailbox.messages.get(message_id)
        if message is None:
            raise self._not_found()
        return message

    async def _messages_list(self, request: Request, mailbox: GraphMailbox) -> Response:
        folder_ref = request.params.get("folderId")
        if folder_ref is not None:
            folder_id = self._folder(mailbox, folder_ref).id
            found = [m for m in mailbox.messages.values() if m.folder_id == folder_id]
        else:
            found = list(mailbox.messages.values())
        wanted = request.arg("$filter")
        if wanted:  # OData string literal: quoted, a quote inside doubled
            match = re.fullmatch(r"\s*internetMessageId\s+eq\s+'((?:[^']|'')*)'\s*", wanted, re.IGNORECASE)
            if match is None:
                raise self._bad_request("The fake filters messages by internetMessageId eq '...' only.",
                                        "ErrorInvalidUrlQueryFilter")
            value = match.group(1).replace("''", "'")
            found = [m for m in found if m.internet_message_id == value]
        order = (request.arg("$orderby") or "receivedDateTime desc").strip()
        field_name, _, direction = order.partition(" ")
        if field_name.lower() != "receiveddatetime":
            raise self._bad_request(f"The fake supports $orderby=receivedDateTime only, not {order!r}.")
        found.sort(key=lambda m: (m.received, m.serial), reverse=direction.strip().lower() != "asc")
        top = self._int(request.arg("$top"), self.default_page_size)
        skip = self._int(request.arg("$skip"), 0)
        select = self._select(request)
        data: dict[str, Any] = {"@odata.context": self._context(request, mailbox, "messages"),
                                "value": [m.resource(set(select) if select else None) for m in found[skip: skip + top]]}
        if skip + top < len(found):
            query = {k: v[0] for k, v in request.query.items() if k != "$skip"}
            data["@odata.nextLink"] = f"{request.base_url}{request.path}?{urlencode({**query, '$skip': skip + top})}"
        return json_response(data)

    async def _message_get(self, request: Request, mailbox: GraphMailbox) -> Response:
        message = self._message(mailbox, request.params["id"])
        select = self._select(request)
        return json_response({"@odata.context": self._context(request, mailbox, "messages/$entity"),
                              **message.resource(set(select) if select else None)})

    async def _message_value(self, request: Request, mailbox: GraphMailbox) -> Response:
        message = self._message(mailbox, request.params["id"])
        return Response(200, message.raw, [("content-type", "text/plain")])

    async def _message_patch(self, request: Request, mailbox: GraphMailbox) -> Response:
        message = self._message(mailbox, request.params["id"])
        try:
            body = request.json()
        except ValueError:
            raise self._bad_request("Empty Payload. JSON content expected.") from None
        if not isinstance(body, dict):
            raise self._bad_request("Invalid JSON payload.", "RequestBodyRead")
        for key in body:
            if key.lower() not in _PATCHABLE:
                raise self._bad_request(f"The property '{key}' does not exist on type 'microsoft.graph.message' or "
                                        "is not writable here.", "RequestBodyRead")
        values = {k.lower(): v for k, v in body.items()}
        is_read = values.get("isread")
        if is_read is not None and not isinstance(is_read, bool):
            raise self._bad_request("Cannot convert the literal to the expected type 'Edm.Boolean'.",
                                    "RequestBodyRead")
        flag = values.get("flag")
        flag_status = flag.get("flagStatus") if isinstance(flag, dict) else None
        if flag is not None and flag_status not in ("notFlagged", "flagged", "complete"):
            raise self._bad_request("Invalid flag.flagStatus.", "RequestBodyRead")
        categories = values.get("categories")
        if categories is not None and not (
                isinstance(categories, list) and all(isinstance(c, str) for c in categories)):
            raise self._bad_request("categories must be a list of strings.", "RequestBodyRead")
        updated = mailbox.update(message.id, is_read=is_read, flag_status=flag_status, categories=categories,
                                 importance=values.get("importance"),
                                 inference_classification=values.get("inferenceclassification"))
        return json_response({"@odata.context": self._context(request, mailbox, "messages/$entity"),
                              **updated.resource()})

    async def _message_create(self, request: Request, mailbox: GraphMailbox) -> Response:
        """POST /messages (Drafts) or /mailFolders/{id}/messages: from MIME always a draft; from JSON what its
        PR_MESSAGE_FLAGS say (a draft without them)."""
        folder = self._folder(mailbox, request.params.get("folderId", "drafts"))
        self._inject("createMessage", request)
        if (request.header("content-type") or "").lower().startswith("application/json"):
            raw, is_read, is_draft, received = self._from_json(request, mailbox)
            created = mailbox.add_message(raw, folder.id, is_read=is_read, is_draft=is_draft, received=received)
        else:
            created = mailbox.add_message(self._mime_body(request), folder.id, is_read=True, is_draft=True)
        return json_response({"@odata.context": self._context(request, mailbox, "messages/$entity"),
                              **created.resource()}, 201)

    def _from_json(self, request: Request, mailbox: GraphMailbox) -> tuple[bytes, bool, bool, datetime | None]:
        """(MIME, isRead, isDraft, receivedDateTime) of a message created from JSON, checked as Graph checks it."""
        try:
            body = request.json()
        except ValueError:
            raise self._bad_request("Empty Payload. JSON content expected.", "RequestBodyRead") from None
        if not isinstance(body, dict):
            raise self._bad_request("Invalid JSON payload.", "RequestBodyRead")
        for key in body:
            if not key.startswith("@odata.") and key.lower() not in _CREATABLE:
                raise self._bad_request(f"The property '{key}' does not exist on type 'microsoft.graph.message' or "
                                        "is not writable when creating a message.", "RequestBodyRead")
        values = {k.lower(): v for k, v in body.items()}
        properties = self._extended(values.get("singlevalueextendedproperties"))
        headers = values.get("internetmessageheaders") or []
        if not isinstance(headers, list) or not all(
                isinstance(h, dict) and isinstance(h.get("name"), str) and isinstance(h.get("value"), str)
                for h in headers):
            raise self._bad_request("internetMessageHeaders must be a list of {name, value}.", "RequestBodyRead")
        for header in headers:
            if not header["name"].lower().startswith("x-"):
                raise self._bad_request(f"The internet message header name '{header['name']}' should start with "
                                        "'x-' or 'X-'.", "InvalidInternetMessageHeader")
        if len(headers) > 5:
            raise self._bad_request("Maximum number of headers in one message should be less than or equal to 5.",
                                    "InvalidInternetMessageHeaderCollection")
        mime = EmailMessage()
        sender = self._addresses(values.get("from"), "from") or [formataddr((mailbox.display_name,
                                                                             mailbox.user_principal_name))]
        mime["From"] = sender[0]
        for name, key in (("To", "torecipients"), ("Cc", "ccrecipients"), ("Bcc", "bccrecipients"),
                          ("Reply-To", "replyto")):
            found = self._addresses(values.get(key), key)
            if found:
                mime[name] = ", ".join(found)
        subject = values.get("subject")
        if subject:
            mime["Subject"] = str(subject)
        submitted = properties.get(PR_CLIENT_SUBMIT_TIME)
        mime["Date"] = format_datetime(submitted or datetime.fromtimestamp(self.clock(), UTC))
        mime["Message-ID"] = str(values.get("internetmessageid") or make_msgid(domain="graph.example"))
        for name, tag in (("In-Reply-To", PR_IN_REPLY_TO_ID), ("References", PR_INTERNET_REFERENCES)):
            if tag in properties:
                mime[name] = str(properties[tag])
        for header in headers:
            mime[header["name"]] = header["value"]
        content = values.get("body") or {}
        if not isinstance(content, dict):
            raise self._bad_request("body must be an itemBody.", "RequestBodyRead")
        kind = str(content.get("contentType") or "text").lower()
        if kind not in ("text", "html"):
            raise self._bad_request(f"Invalid body.contentType '{kind}'.", "RequestBodyRead")
        mime.set_content(str(content.get("content") or ""), subtype="html" if kind == "html" else "plain")
        flags = properties.get(PR_MESSAGE_FLAGS)
        is_draft = True if flags is None else bool(int(flags) & MSGFLAG_UNSENT)
        is_read = values.get("isread")
        if not isinstance(is_read, bool):
            is_read = True if flags is None else bool(int(flags) & MSGFLAG_READ)
        received = properties.get(PR_MESSAGE_DELIVERY_TIME)
        return (mime.as_bytes(policy=email_policy.SMTP), is_read, is_draft,
                received if isinstance(received, datetime) else None)

    def _addresses(self, value: Any, where: str) -> list[str]:
        items = value if isinstance(value, list) else [] if value is None else [value]
        found = []
        for item in items:
            address = item.get("emailAddress") if isinstance(item, dict) else None
            if not isinstance(address, dict) or not isinstance(address.get("address"), str) or "@" not in str(
                    address["address"]):
                raise self._bad_request(f"{where}: each recipient needs emailAddress.address.",
                                        "ErrorInvalidRecipients")
            found.append(formataddr((str(address.get("name") or ""), address["address"])))
        return found

    def _extended(self, value: Any) -> dict[str, Any]:
        """singleValueExtendedProperties by lower-case id, each value read as its type says."""
        if value is None:
            return {}
        if not isinstance(value, list):
            raise self._bad_request("singleValueExtendedProperties must be a list.", "RequestBodyRead")
        found: dict[str, Any] = {}
        for item in value:
            if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not isinstance(
                    item.get("value"), str):
                raise self._bad_request("An extended property needs a string id and a string value.",
                                        "RequestBodyRead")
            ident, text = " ".join(item["id"].split()), item["value"]
            if not _EXTENDED_ID.match(ident):
                raise self._bad_request(f"The extended property id '{item['id']}' is not valid.",
                                        "ErrorInvalidProperty")
            kind = ident.split(" ", 1)[0].lower()
            try:
                parsed: Any = text
                if kind in ("integer", "long", "short"):
                    parsed = int(text)
                elif kind == "systemtime":
                    parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
                    parsed = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
                elif kind == "boolean" and text.lower() not in ("true", "false"):
                    raise ValueError(text)
            except ValueError:
                raise self._bad_request(f"The value '{text}' is not valid for the extended property '{ident}'.",
                                        "ErrorInvalidExtendedPropertyValue") from None
            found[ident.lower()] = parsed
        return found

    async def _upload_session(self, request: Request, mailbox: GraphMailbox) -> Response:
        self._inject("addAttachment", request)
        message = self._message(mailbox, request.params["id"])
        try:
            item = request.json()["AttachmentItem"]
            name, size = str(item["name"]), int(item["size"])
        except (ValueError, KeyError, TypeError):
            raise self._bad_request("AttachmentItem with name and size expected.", "RequestBodyRead") from None
        if item.get("attachmentType", "file") != "file":
            raise self._bad_request("The fake uploads file attachments only.", "RequestBodyRead")
        if size < MAX_ATTACHMENT_POST:
            raise self._bad_request("Attachment size should not be less than the minimum size of 3 MB for an upload "
                                    "session.", "ErrorAttachmentSizeShouldNotBeLessThanMinimumSize")
        if size > MAX_ATTACHMENT_UPLOAD:
            raise HttpError(self.error(413, "ErrorAttachmentSizeTooLarge", "The attachment is larger than 150 MB.",
                                       request=request))
        session = UploadSession(uuid.uuid4().hex, mailbox, message.id, name,
                                str(item.get("contentType") or "application/octet-stream"), size,
                                bool(item.get("isInline")), str(item["contentId"]) if item.get("contentId") else None)
        with self.lock:
            self.upload_sessions[session.id] = session
        expires = datetime.fromtimestamp(self.clock() + 900, UTC)
        return json_response({
            "@odata.context": f"{request.base_url}/v1.0/$metadata#microsoft.graph.uploadSession",
            "uploadUrl": f"{request.base_url}/api/v2.0/AttachmentSessions('{session.id}')?authtoken={session.token}",
            "expirationDateTime": _iso(expires), "nextExpectedRanges": ["0-"]}, 201)

    async def _upload_put(self, request: Request) -> Response:
        with self.lock:
            session = self.upload_sessions.get(request.params["id"])
        if session is None or request.arg("authtoken") != session.token:
            return self.error(404, "ErrorItemNotFound", "The upload session was not found.", request=request)
        if request.header("authorization"):
            return self.error(401, "InvalidAuthenticationToken", "The upload URL is pre-authenticated: do not send "
                              "an Authorization header.", request=request)
        found = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+)", request.header("content-range") or "")
        if (found is None or int(found.group(1)) != len(session.received) or int(found.group(3)) != session.size
                or int(found.group(2)) - int(found.group(1)) + 1 != len(request.body)):
            return self.error(400, "ErrorInvalidContentRange", "The Content-Range does not continue the upload.",
                              request=request)
        with self.lock:
            session.received += request.body
            self.calls.append(GraphCall("PUT", request.path, request.query, session.mailbox.user_principal_name,
                                        200, self.clock()))
        if len(session.received) < session.size:
            return json_response({"expirationDateTime": _iso(datetime.fromtimestamp(self.clock() + 900, UTC)),
                                  "nextExpectedRanges": [str(len(session.received))]})
        session.mailbox.add_attachment(session.message_id, session.name, session.content_type,
                                       bytes(session.received), inline=session.inline,
                                       content_id=session.content_id)
        with self.lock:
            self.upload_sessions.pop(session.id, None)
        location = f"{request.base_url}/api/v2.0/Messages('{session.message_id}')/Attachments('{session.id}')"
        return empty_response(201, [("location", location)])

    async def _attachment_add(self, request: Request, mailbox: GraphMailbox) -> Response:
        self._inject("addAttachment", request)
        message = self._message(mailbox, request.params["id"])
        try:
            body = request.json()
        except ValueError:
            raise self._bad_request("Empty Payload. JSON content expected.", "RequestBodyRead") from None
        if not isinstance(body, dict) or body.get("@odata.type") != "#microsoft.graph.fileAttachment":
            raise self._bad_request("The fake adds #microsoft.graph.fileAttachment attachments only.",
                                    "RequestBodyRead")
        name, encoded = body.get("name"), body.get("contentBytes")
        if not isinstance(name, str) or not name:
            raise self._bad_request("The attachment needs a name.", "ErrorInvalidRequest")
        try:
            content = base64.b64decode(str(encoded), validate=True) if encoded is not None else None
        except (binascii.Error, ValueError):
            content = None
        if content is None:
            raise self._bad_request("contentBytes is not valid base64.", "RequestBodyRead")
        if len(content) >= MAX_ATTACHMENT_POST:
            raise HttpError(self.error(413, "ErrorRequestEntityTooLarge", "The attachment is 3 MB or more: "
                                       "attach it through an upload session.", request=request))
        content_type = str(body.get("contentType") or "application/octet-stream")
        content_id = body.get("contentId")
        mailbox.add_attachment(message.id, name, content_type, content, inline=bool(body.get("isInline")),
                               content_id=str(content_id) if content_id else None)
        attachment_id = _encode_id("AAMkADatt", f"{message.id}/{name}/{len(content)}")
        return json_response({"@odata.context": self._context(request, mailbox, f"messages('{message.id}')/"
                                                                                 "attachments/$entity"),
                              "@odata.type": "#microsoft.graph.fileAttachment", "id": attachment_id, "name": name,
                              "contentType": content_type, "size": len(content),
                              "isInline": bool(body.get("isInline")), "contentId": content_id}, 201)

    def _has_recipients(self, message: GraphMessage) -> None:
        if not _outgoing.recipients(message.parsed):
            raise self._bad_request("At least one recipient is not valid., A message can't be sent because it "
                                    "contains no recipients.", "ErrorInvalidRecipients")

    async def _message_send(self, request: Request, mailbox: GraphMailbox) -> Response:
        self._may_send(request)
        self._inject("send", request)
        message = self._message(mailbox, request.params["id"])
        self._has_recipients(message)
        try:
            mailbox.send_draft(message.id)
        except ValueError:
            raise self._bad_request("The item is not a draft and cannot be sent.") from None
        return empty_response(202)

    async def _send_mail(self, request: Request, mailbox: GraphMailbox) -> Response:
        self._may_send(request)
        self._inject("sendMail", request)
        raw = self._mime_body(request)
        if not _outgoing.recipients(_mime.parse(raw)):
            raise self._bad_request("At least one recipient is not valid., A message can't be sent because it "
                                    "contains no recipients.", "ErrorInvalidRecipients")
        mailbox.send_mime(raw)
        return empty_response(202)

    async def _message_delete(self, request: Request, mailbox: GraphMailbox) -> Response:
        if request.method == "DELETE":
            self._inject("deleteMessage", request)
        message = self._message(mailbox, request.params["id"])
        mailbox.delete(message.id)
        return empty_response(204)

    async def _message_move(self, request: Request, mailbox: GraphMailbox) -> Response:
        message = self._message(mailbox, request.params["id"])
        try:
            destination = request.json()["destinationId"]
        except (ValueError, KeyError, TypeError):
            raise self._bad_request("The destinationId parameter is missing.") from None
        target = self._folder(mailbox, str(destination))
        moved = mailbox.move(message.id, target.id)
        return json_response({"@odata.context": self._context(request, mailbox, "messages/$entity"),
                              **moved.resource()}, 201)

    # --- delta ---
    def _expired(self, request: Request) -> HttpError:
        return HttpError(self.error(self.expired_delta_status, self.expired_delta_code,
                                    "The sync state is not found or has expired; a full resync is needed.",
                                    request=request))

    def _delta_options(self, request: Request) -> DeltaOptions:
        select = self._select(request)
        options = DeltaOptions(select=select)
        raw_filter = request.arg("$filter")
        if raw_filter:
            found = re.fullmatch(r"\s*receivedDateTime\s+(ge|gt)\s+(\S+)\s*", raw_filter, re.IGNORECASE)
            if found is None:
                raise self._bad_request("The only supported $filter is receivedDateTime ge|gt {value}.",
                                        "ErrorInvalidUrlQueryFilter")
            try:
                moment = datetime.fromisoformat(found.group(2).replace("Z", "+00:00"))
            except ValueError:
                raise self._bad_request("Invalid date in $filter.", "ErrorInvalidUrlQueryFilter") from None
            op: Literal["ge", "gt"] = "gt" if found.group(1).lower() == "gt" else "ge"
            options = replace(options, received_op=op,
                              received_at=moment if moment.tzinfo else moment.replace(tzinfo=UTC))
        order = request.arg("$orderby")
        if order:
            if re.fullmatch(r"\s*receivedDateTime\s+desc\s*", order, re.IGNORECASE) is None:
                raise self._bad_request("The only supported $orderby is receivedDateTime desc.",
                                        "ErrorInvalidUrlQuery")
            options = replace(options, newest_first=True)
        change_type = request.arg("changeType")
        if change_type:
            if change_type not in ("created", "updated", "deleted"):
                raise self._bad_request(f"Invalid changeType '{change_type}'.")
            options = replace(options, change_type=change_type)  # type: ignore[arg-type]
        top = request.arg("$top")
        if top:
            options = replace(options, top=self._int(top, self.default_page_size))
        return options

    def _page_size(self, request: Request, options: DeltaOptions) -> tuple[int, bool]:
        prefer = request.header("prefer") or ""
        found = re.search(r"odata\.maxpagesize\s*=\s*(\d+)", prefer, re.IGNORECASE)
        if found:
            return max(1, min(int(found.group(1)), 1000)), True
        return options.top or self.default_page_size, False

    async def _delta(self, request: Request, mailbox: GraphMailbox) -> Response:
        folder = self._folder(mailbox, request.params["folderId"])
        skiptoken, deltatoken = request.arg("$skiptoken"), request.arg("$deltatoken")
        if skiptoken:
            try:
                key, offset_text = base64.urlsafe_b64decode(skiptoken + "==").decode().split(":", 1)
                offset = int(offset_text)
            except (ValueError, UnicodeDecodeError):
                raise self._bad_request("Invalid $skiptoken.") from None
            round_ = mailbox.rounds.get(key)
            if round_ is None or mailbox.is_expired(round_.issued_at, round_.expired):
                raise self._expired(request)
            if round_.folder_id != folder.id:
                raise self._bad_request("The $skiptoken belongs to another folder.")
        elif deltatoken:
            state = mailbox.delta_links.get(deltatoken)
            if state is None or mailbox.is_expired(state.issued_at, state.expired):
                raise self._expired(request)
            if state.folder_id != folder.id:
                raise self._bad_request("The $deltatoken belongs to another folder.")
            state.used += 1
            round_, offset = mailbox.start_round(folder.id, state.options, state), 0
        else:
            round_, offset = mailbox.start_round(folder.id, self._delta_options(request), None), 0
        page_size, preferred = self._page_size(request, round_.options)
        select = set(round_.options.select) if round_.options.select else None
        values: list[dict[str, Any]] = []
        for entry in round_.entries[offset: offset + page_size]:
            if entry.removed:
                values.append({"@odata.type": "#microsoft.graph.message", "id": entry.message_id,
                               "@removed": {"reason": entry.reason}})
                continue
            message = mailbox.messages.get(entry.message_id)
            if message is None or message.folder_id != folder.id:
                continue  # changed again since this round began; the next round reports it
            values.append(message.resource(select, odata_type=True))
        prefix = request.path[: request.path.lower().index("/mailfolders/")]
        link_base = f"{request.base_url}{prefix}/mailFolders/{quote(folder.id, safe='')}/messages/delta"
        data: dict[str, Any] = {"@odata.context": f"{request.base_url}/v1.0/$metadata#Collection(message)"}
        if offset + page_size < len(round_.entries):
            token = base64.urlsafe_b64encode(f"{round_.key}:{offset + page_size}".encode()).decode().rstrip("=")
            data["@odata.nextLink"] = f"{link_base}?$skiptoken={token}"
        else:
            state = mailbox.issue_delta_link(round_)
            data["@odata.deltaLink"] = f"{link_base}?$deltatoken={state.token}"
        data["value"] = values
        headers = [("preference-applied", f"odata.maxpagesize={page_size}")] if preferred else []
        return json_response(data, headers=headers)

    # --- identity platform ---
    async def _token(self, request: Request) -> Response:
        form = request.form()
        result = self.oauth.token_request(form, request.header("authorization"))
        if isinstance(result, OAuthFailure):
            code, text = _AADSTS.get(result.kind, (90000, result.description))
            trace, correlation = str(uuid.uuid4()), str(uuid.uuid4())
            stamp = datetime.fromtimestamp(self.clock(), UTC).strftime("%Y-%m-%d %H:%M:%SZ")
            error = "invalid_grant" if result.error == "redirect_uri_mismatch" else result.error
            body: dict[str, Any] = {
                "error": error,
                "error_description": f"AADSTS{code}: {text} Trace ID: {trace} Correlation ID: {correlation} "
                                     f"Timestamp: {stamp}",
                "error_codes": [code], "timestamp": stamp, "trace_id": trace, "correlation_id": correlation,
                "error_uri": f"https://login.microsoftonline.com/error?code={code}",
            }
            if result.kind == "revoked":
                body["suberror"] = "bad_token"
            elif result.kind == "consent_required":
                body["suberror"] = "consent_required"
            return json_response(body, result.status)
        return json_response({"token_type": "Bearer", "scope": result.scope, "expires_in": result.expires_in,
                              "ext_expires_in": result.expires_in, "access_token": result.access_token,
                              "refresh_token": result.refresh_token})

    async def _authorize(self, request: Request) -> Response:
        client = self.oauth.clients.get(request.arg("client_id") or "")
        redirect_uri = request.arg("redirect_uri") or ""
        if client is None or not redirect_uri or (client.redirect_uris and redirect_uri not in client.redirect_uris):
            return Response(400, b"AADSTS700016/AADSTS50011: unknown application or redirect URI mismatch",
                            [("content-type", "text/plain")])
        params: dict[str, str] = {}
        if self.oauth.deny_consent:
            params.update(error="access_denied", error_description="AADSTS65004: User declined to consent.")
        else:
            hint = (request.arg("login_hint") or "").lower()
            user = self.mailboxes[hint].user_principal_name if hint in self.mailboxes else self.oauth.consenting_user
            params["code"] = self.oauth.authorize(
                client.client_id, redirect_uri, user, request.arg("scope") or "",
                code_challenge=request.arg("code_challenge"),
                code_challenge_method=request.arg("code_challenge_method") or "plain",
            )
        state = request.arg("state")
        if state is not None:
            params["state"] = state
        separator = "&" if "?" in redirect_uri else "?"
        return Response(302, b"", [("location", f"{redirect_uri}{separator}{urlencode(params)}")])


__all__ = [
    "ROOT", "WELL_KNOWN_FOLDERS", "DeltaLinkState", "DeltaOptions", "DeltaRound", "FolderEvent", "GraphCall",
    "GraphFake", "GraphFolder", "GraphMailbox", "GraphMessage", "GraphThrottle",
]
