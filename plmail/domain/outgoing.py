"""Writing mail: the identities a user sends as, what a draft holds, a message ready for a transport, and how
a submission moves through the outbox."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from plmail.domain.errors import PlmailError
from plmail.domain.ingest import ProviderRef
from plmail.domain.messages import Address, HeaderValue


class IdentityOrigin(StrEnum):
    ACCOUNT = "account"  # the account's own address
    ALIAS = "alias"  # an address the user added (IMAP accounts)
    PROVIDER = "provider"  # listed by the provider (Gmail's send-as addresses), refreshed on sync


@dataclass(frozen=True, slots=True)
class Identity:
    id: int
    account_id: int
    email: str
    name: str
    reply_to: tuple[Address, ...]
    bcc: tuple[Address, ...]
    text_signature: str
    html_signature: str
    is_primary: bool
    origin: IdentityOrigin
    updated_at: datetime
    verified: bool = True  # may send: the account's own address, confirmed by the provider or by its link
    verification_sent_at: datetime | None = None  # when the confirmation link last went to the address

    @property
    def may_delete(self) -> bool:
        """Only addresses the user added can be removed; the others come from the account or the provider."""
        return self.origin is IdentityOrigin.ALIAS

    @property
    def domain(self) -> str:
        return self.email.rpartition("@")[2].lower()


@dataclass(frozen=True, slots=True)
class ProvidedIdentity:
    """An identity as a provider lists it."""

    email: str
    name: str = ""
    reply_to: tuple[Address, ...] = ()
    text_signature: str = ""
    html_signature: str = ""
    is_primary: bool = False
    verified: bool = True  # False while the provider waits for the address's owner (Gmail's "pending")


@dataclass(frozen=True, slots=True)
class OutgoingAttachment:
    filename: str
    content_type: str
    data: bytes
    content_id: str | None = None  # set for an inline part the HTML names as cid:…
    # From JMAP's EmailBodyPart: an attachment keeps its Content-ID (inline=False), and its Content-Language,
    # Content-Location and header:* fields are written on its part.
    inline: bool = True
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class CalendarReply:
    """An iCalendar object sent as the text/calendar alternative of a message (RFC 6047 §2.4)."""

    method: str  # REPLY, …
    ics: str


@dataclass(frozen=True, slots=True)
class DraftContent:
    """What a person writes, in structured fields; the composer (web or JMAP) fills it."""

    identity_id: int
    to: tuple[Address, ...] = ()
    cc: tuple[Address, ...] = ()
    bcc: tuple[Address, ...] = ()
    subject: str = ""
    text_body: str | None = None
    html_body: str | None = None  # None: a plain-text message
    attachments: tuple[OutgoingAttachment, ...] = ()
    in_reply_to: tuple[str, ...] = ()  # Message-IDs without angle brackets
    references: tuple[str, ...] = ()
    reply_to: tuple[Address, ...] | None = None  # None: the identity's own reply-to
    extra_headers: tuple[tuple[str, str], ...] = ()  # the header:* fields a JMAP client sets beside the fields
    text_headers: tuple[tuple[str, str], ...] = ()  # fields of the text/plain part (Content-Language, …)
    html_headers: tuple[tuple[str, str], ...] = ()  # fields of the text/html part
    calendar: CalendarReply | None = None  # an iTIP message carried beside the text (an invitation answered)
    answers: int | None = None  # the stored message this replies to or forwards
    answer_keyword: str | None = None  # "$answered" or "$forwarded", set on `answers` once sent

    @property
    def recipients(self) -> tuple[Address, ...]:
        return (*self.to, *self.cc, *self.bcc)


@dataclass(frozen=True, slots=True)
class Envelope:
    mail_from: str
    rcpt_to: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class OutgoingMessage:
    """A message ready for a transport: what goes on the wire (no Bcc) and the copy kept (Bcc kept)."""

    message_id: str  # without angle brackets
    envelope: Envelope
    wire: bytes
    copy: bytes
    thread_key: str | None = None  # the provider's conversation id of the mail it answers (Gmail's threadId)


@dataclass(frozen=True, slots=True)
class SendReceipt:
    """What a transport learned from sending: where the provider keeps the sent message, if it said, and
    whether the provider files its own Sent copy (which sync then brings and the outbox adopts)."""

    ref: ProviderRef | None = None
    provider_files_copy: bool = False
    replies: tuple[tuple[str, str], ...] = ()  # (recipient, the server's reply) as the server gave them
    # Mail plmail did not send (a copy a client filed in Sent: JMAP's Email/import): the store files the copy in
    # the provider's Sent even where the provider files what plmail sends itself (Gmail's messages.insert).
    sent_elsewhere: bool = False


class SendFailure(StrEnum):
    TEMPORARY = "temporary"  # 4xx, refused connection, timeout before DATA: try again later
    PERMANENT = "permanent"  # 5xx, recipients refused, too large: back to Drafts with the reason
    UNCERTAIN = "uncertain"  # lost after the final dot: it may have gone; never resent blindly


class SendError(PlmailError):
    """A transport could not hand the message over; `failure` says what may be done next."""

    def __init__(self, message: str, *, failure: SendFailure, rejected: tuple[str, ...] = (),
                 reason: str | None = None) -> None:
        super().__init__(message)
        self.failure = failure
        self.rejected = rejected  # recipients the server refused
        self.reason = reason  # tooLarge, forbiddenFrom, … (JMAP's names) where one applies

    @property
    def retryable(self) -> bool:
        return self.failure is SendFailure.TEMPORARY


class SubmissionRefused(PlmailError):
    """The outbox will not take this submission; `reason` names why in JMAP's words (forbiddenFrom,
    forbiddenMailFrom, forbiddenToSend, tooManyRecipients, noRecipients, invalidRecipients, invalidEmail,
    tooLarge, cannotUnsend), so the web page and a phone say the same thing."""

    def __init__(self, message: str, *, reason: str, recipients: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.reason = reason
        self.recipients = recipients


class SubmissionState(StrEnum):
    PENDING = "pending"  # waiting for its send_at (the undo window, or a scheduled time)
    SENDING = "sending"  # claimed by a worker
    SENT = "sent"
    FAILED = "failed"  # refused for good; the message is back in Drafts
    CANCELED = "canceled"  # undone before it went; the message is back in Drafts
    UNCERTAIN = "uncertain"  # the connection was lost after the final dot: it may have been sent


@dataclass(frozen=True, slots=True)
class Submission:
    id: int
    account_id: int
    message_id: int | None
    identity_id: int | None
    envelope: Envelope
    send_at: datetime
    state: SubmissionState
    attempts: int
    last_error: str
    delivery: dict[str, dict[str, str]]
    created_at: datetime
    updated_at: datetime
    sent_at: datetime | None
    origin: str
    # What goes, fixed at submission: the message itself may be deleted meanwhile (JMAP's onSuccessDestroyEmail).
    raw_path: str | None = None
    draft_ref: ProviderRef | None = None
    thread_key: str | None = None
    email_id: int | None = None  # the message as submitted, kept when the message is deleted (JMAP's emailId)
    thread_id: int | None = None

    @property
    def undo_status(self) -> str:
        """JMAP's undoStatus (RFC 8621 §7): "pending" until the transport accepted it (waiting, or being handed
        over); "final" once "relayed to at least one recipient in a manner that cannot be recalled" (sent, or a
        connection lost after the final dot: it may have gone); "canceled" when it "will not be delivered to any
        recipient" (undone, or failed: the message is back in Drafts, the error in deliveryStatus)."""
        if self.state in (SubmissionState.PENDING, SubmissionState.SENDING):
            return "pending"
        if self.state in (SubmissionState.CANCELED, SubmissionState.FAILED):
            return "canceled"
        return "final"


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    """A submission as the outbox lists it."""

    submission: Submission
    account_email: str
    subject: str


@dataclass(frozen=True, slots=True)
class SubmissionQuery:
    """EmailSubmission/query's filter and sort (RFC 8621 §7.3), in plmail's terms."""

    identity_ids: tuple[int, ...] | None = None
    email_ids: tuple[int, ...] | None = None
    thread_ids: tuple[int, ...] | None = None
    undo_status: str | None = None  # pending | final | canceled
    before: datetime | None = None  # send_at before
    after: datetime | None = None  # send_at at or after
    sort: tuple[tuple[str, bool], ...] = ()  # ("emailId" | "threadId" | "sentAt", ascending)


@dataclass(frozen=True, slots=True)
class ContactSuggestion:
    """A harvested address offered while typing a recipient."""

    email: str
    name: str
    correspondent: bool  # the user has written to it

    @property
    def field_text(self) -> str:
        """How the address goes into a To/Cc/Bcc field."""
        if not self.name:
            return self.email
        name = self.name.replace("\\", "\\\\").replace('"', '\\"')
        return f'"{name}" <{self.email}>'


class ReplyQuoting(StrEnum):
    BELOW = "below"  # the original quoted under the answer
    NONE = "none"  # an answer starts empty


@dataclass(frozen=True, slots=True)
class SendingPreferences:
    """A user's choices for writing mail (Settings → Sending)."""

    undo_delay: int  # seconds
    reply_quoting: ReplyQuoting
    plain_text: bool  # new messages start in plain text
    default_identity_id: int | None  # preselected for new mail; None: the first account's primary


class BodyFormat(StrEnum):
    RICH = "rich"  # HTML from the editor, with the text part derived from it
    PLAIN = "plain"  # text only


@dataclass(frozen=True, slots=True)
class DraftFile:
    """An attachment or inline image of a stored draft, by its part path."""

    path: str
    filename: str
    content_type: str
    size: int
    content_id: str | None  # an inline image the HTML shows as cid:…


@dataclass(frozen=True, slots=True)
class ComposerDraft:
    """What the composer opens with: the fields, the body in its format, and the draft's files."""

    content: DraftContent
    body_format: BodyFormat
    message_id: int | None = None  # the stored draft, once there is one
    thread_id: int | None = None
    files: tuple[DraftFile, ...] = ()
    failure: str = ""  # why its last send did not go, shown on the reopened draft
    # A forward before its first save: the message whose files it carries (listed in `files` by index, nothing
    # stored yet: opening the composer creates nothing) and how it forwards them.
    forwards: int | None = None
    forward_mode: str = ""


@dataclass(frozen=True, slots=True)
class IncomingMail:
    """A received message as the automatic reply judges it (RFC 3834 §2)."""

    user_id: int
    account_id: int
    sender: str | None
    headers: Mapping[str, HeaderValue]
    sent_at: datetime | None  # the Date header
    received_at: datetime | None  # when it arrived (IMAP INTERNALDATE, Gmail internalDate)
    recipients: tuple[str, ...]  # To and Cc, lower-cased: Bcc and list copies are not addressed to the user
    is_draft: bool
    in_inbox: bool
    in_spam: bool


@dataclass(frozen=True, slots=True)
class VacationSettings:
    """A user's automatic reply (JMAP VacationResponse): answered while enabled and between the dates."""

    is_enabled: bool = False
    from_date: datetime | None = None
    to_date: datetime | None = None
    subject: str | None = None
    text_body: str | None = None
    html_body: str | None = None

    def active(self, now: datetime) -> bool:
        return (self.is_enabled and (self.from_date is None or self.from_date <= now)
                and (self.to_date is None or now < self.to_date))
