"""What the Graph client hands back: folders, messages as Graph describes them, and delta pages."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from plmail.domain.moments import parse_moment

EVENT_MESSAGE = "#microsoft.graph.eventMessage"


@dataclass(frozen=True, slots=True)
class RemoteFolder:
    id: str
    name: str
    parent_id: str | None
    total: int
    child_count: int


@dataclass(frozen=True, slots=True)
class Recipient:
    name: str
    address: str


@dataclass(frozen=True, slots=True)
class RemoteMessage:
    """One message as a delta page or a GET describes it; no MIME bytes (those are a second call)."""

    id: str
    folder_id: str | None
    conversation_id: str | None
    internet_message_id: str | None
    subject: str
    sender: Recipient | None
    to: tuple[Recipient, ...]
    cc: tuple[Recipient, ...]
    bcc: tuple[Recipient, ...]
    reply_to: tuple[Recipient, ...]
    received_at: datetime | None
    sent_at: datetime | None
    is_read: bool
    is_draft: bool
    flagged: bool
    categories: tuple[str, ...]
    body: str
    body_is_html: bool
    preview: str
    has_attachments: bool
    meeting_message_type: str | None  # set on an eventMessage: an invitation, cancellation or reply
    # Authentication-Results as Exchange Online wrote them, top first (from internetMessageHeaders)
    authentication_results: tuple[str, ...] = ()

    @property
    def is_meeting(self) -> bool:
        return self.meeting_message_type is not None and self.meeting_message_type.lower() != "none"


@dataclass(frozen=True, slots=True)
class DeltaPage:
    """One page of a delta round: changed or listed messages, removals, and where the round goes on."""

    messages: tuple[RemoteMessage, ...]
    removed: tuple[str, ...]
    next_link: str | None  # more pages of this round
    delta_link: str | None  # the round is over; follow this for what changes next


def _recipient(value: Any) -> Recipient | None:
    if not isinstance(value, dict):
        return None
    address = value.get("emailAddress")
    if not isinstance(address, dict):
        return None
    email = str(address.get("address") or "").strip().lower()
    if not email:
        return None
    name = str(address.get("name") or "").strip()
    return Recipient("" if name.lower() == email else name, email)


def _recipients(value: Any) -> tuple[Recipient, ...]:
    if not isinstance(value, list):
        return ()
    found = [_recipient(item) for item in value]
    return tuple(r for r in found if r is not None)


def remote_message(data: dict[str, Any]) -> RemoteMessage:
    body = data.get("body") if isinstance(data.get("body"), dict) else {}
    assert isinstance(body, dict)
    flag = data.get("flag") if isinstance(data.get("flag"), dict) else {}
    assert isinstance(flag, dict)
    meeting = data.get("meetingMessageType")
    if meeting is None and data.get("@odata.type") == EVENT_MESSAGE:
        meeting = "meetingRequest"  # an eventMessage without the property still carries an invitation
    categories = data.get("categories") if isinstance(data.get("categories"), list) else []
    assert isinstance(categories, list)
    return RemoteMessage(
        id=str(data["id"]),
        folder_id=str(data["parentFolderId"]) if data.get("parentFolderId") else None,
        conversation_id=str(data["conversationId"]) if data.get("conversationId") else None,
        internet_message_id=str(data["internetMessageId"]) if data.get("internetMessageId") else None,
        subject=str(data.get("subject") or ""),
        sender=_recipient(data.get("from")) or _recipient(data.get("sender")),
        to=_recipients(data.get("toRecipients")),
        cc=_recipients(data.get("ccRecipients")),
        bcc=_recipients(data.get("bccRecipients")),
        reply_to=_recipients(data.get("replyTo")),
        received_at=parse_moment(data.get("receivedDateTime")),
        sent_at=parse_moment(data.get("sentDateTime")),
        is_read=bool(data.get("isRead")),
        is_draft=bool(data.get("isDraft")),
        flagged=flag.get("flagStatus") == "flagged",
        categories=tuple(str(c) for c in categories if isinstance(c, str) and c.strip()),
        body=str(body.get("content") or ""),
        body_is_html=str(body.get("contentType") or "").lower() == "html",
        preview=str(data.get("bodyPreview") or ""),
        has_attachments=bool(data.get("hasAttachments")),
        meeting_message_type=str(meeting) if meeting else None,
        authentication_results=_authentication_results(data.get("internetMessageHeaders")),
    )


def _authentication_results(value: Any) -> tuple[str, ...]:
    """Only these of the internet headers: the rest is what the JSON already says, and a header the JSON
    gives in its own form (From, To, Date) must not be read twice."""
    if not isinstance(value, list):
        return ()
    return tuple(str(h.get("value") or "") for h in value
                 if isinstance(h, dict) and str(h.get("name") or "").lower() == "authentication-results")


def remote_folder(data: dict[str, Any]) -> RemoteFolder:
    return RemoteFolder(
        id=str(data["id"]), name=str(data.get("displayName") or ""),
        parent_id=str(data["parentFolderId"]) if data.get("parentFolderId") else None,
        total=int(data.get("totalItemCount") or 0), child_count=int(data.get("childFolderCount") or 0),
    )
