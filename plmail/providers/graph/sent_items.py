"""A stored RFC 5322 message as Graph's message JSON, for filing a copy of mail sent elsewhere in Sent Items.

Graph has no APPEND: a message created from MIME is always a draft ("By default, this operation saves the draft
in the Drafts folder"; the MIME converter sets MSGFLAG_UNSENT). A message created as JSON in a folder with
PR_MESSAGE_FLAGS (PidTagMessageFlags, `Integer 0x0E07`) set is what the flag says: mfRead (0x1) without mfUnsent
(0x8, "the message is still being composed and is treated as a Draft Message object", MS-OXCMSG 2.2.1.6) is a
read, sent item. The flags can be set only before the first save, so they go in the create call itself. Sent
and received times are read-only properties; their MAPI properties (PR_CLIENT_SUBMIT_TIME `SystemTime 0x0039`,
PR_MESSAGE_DELIVERY_TIME `SystemTime 0x0E06`) carry the message's Date instead of the moment of filing.

Custom internet headers can be given "only when creating a message, and name them starting with x-" (Graph's
message resource), so In-Reply-To and References travel as their MAPI properties (PR_IN_REPLY_TO_ID
`String 0x1042`, PR_INTERNET_REFERENCES `String 0x1039`). Attachments follow the create, one at a time: a file
"under 3 MB" in one POST, a larger one "between 3 MB and 150 MB" through an upload session (Graph: attach large
files to Outlook messages). A file over 150 MB cannot be attached at all: such a message is refused with a clear
reason and stays in plmail's Sent alone.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import UTC
from email import policy
from email.message import EmailMessage, Message
from email.parser import BytesParser
from email.utils import getaddresses, parsedate_to_datetime
from typing import Any

PR_MESSAGE_FLAGS = "Integer 0x0E07"
MSGFLAG_READ = 0x1  # mfRead; mfUnsent (0x8) left out: the item is not a draft
PR_CLIENT_SUBMIT_TIME = "SystemTime 0x0039"
PR_MESSAGE_DELIVERY_TIME = "SystemTime 0x0E06"
PR_IN_REPLY_TO_ID = "String 0x1042"
PR_INTERNET_REFERENCES = "String 0x1039"
# "If the file size is under 3 MB, do a single POST on the attachments navigation property"; "between 3 MB and
# 150 MB, create an upload session" (Graph: attach large files to Outlook messages).
MAX_POSTED_ATTACHMENT = 3 * 1024 * 1024
MAX_ATTACHMENT_BYTES = 150 * 1024 * 1024
MAX_CUSTOM_HEADERS = 5  # Graph refuses more than five custom internet message headers on one message


class NotFileable(ValueError):
    """The message cannot be filed at Microsoft as it is (the reason is written for the account's owner)."""


@dataclass(frozen=True, slots=True)
class FileAttachment:
    name: str
    content_type: str
    content: bytes
    inline: bool
    content_id: str | None

    @property
    def posted(self) -> bool:
        """Small enough for one POST; otherwise it goes through an upload session."""
        return len(self.content) < MAX_POSTED_ATTACHMENT

    def as_json(self) -> dict[str, Any]:
        """The fileAttachment resource one POST adds."""
        found: dict[str, Any] = {"@odata.type": "#microsoft.graph.fileAttachment", "name": self.name,
                                 "contentType": self.content_type, "isInline": self.inline,
                                 "contentBytes": base64.b64encode(self.content).decode("ascii")}
        if self.content_id:
            found["contentId"] = self.content_id
        return found

    def upload_item(self) -> dict[str, Any]:
        """The attachmentItem an upload session is created for."""
        found: dict[str, Any] = {"attachmentType": "file", "name": self.name, "size": len(self.content),
                                 "contentType": self.content_type, "isInline": self.inline}
        if self.content_id:
            found["contentId"] = self.content_id
        return found


@dataclass(frozen=True, slots=True)
class SentItem:
    """The create call's JSON and the attachments to add after it, in order."""

    message: dict[str, Any]
    attachments: tuple[FileAttachment, ...]


def _recipients(message: Message, name: str) -> list[dict[str, Any]]:
    values = [str(v) for v in message.get_all(name, [])]
    found = []
    for display, address in getaddresses(values):
        if address and "@" in address:
            found.append({"emailAddress": {"name": display, "address": address} if display else {"address": address}})
    return found


def _moment(value: str | None) -> str | None:
    if not value:
        return None
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _leaves(part: Message) -> list[Message]:
    """The message's parts that carry content, a forwarded message (message/rfc822) as one part."""
    if part.get_content_type() == "message/rfc822" or not part.is_multipart():
        return [part]
    found: list[Message] = []
    for sub in part.get_payload():
        if isinstance(sub, Message):
            found.extend(_leaves(sub))
    return found


def _attachment(part: Message, index: int, limit: int) -> FileAttachment:
    if part.get_content_type() == "message/rfc822":
        inner = part.get_payload()
        inner_message = inner[0] if isinstance(inner, list) and inner else inner
        content = inner_message.as_bytes(policy=policy.SMTP) if isinstance(inner_message, Message) else b""
    else:
        payload = part.get_payload(decode=True)
        content = payload if isinstance(payload, bytes) else b""
    name = part.get_filename() or f"attachment-{index}"
    if len(content) > limit:
        raise NotFileable(f"Its attachment {name!r} is {len(content) / 1048576:.1f} MB; Microsoft attaches files "
                          f"up to {limit / 1048576:.0f} MB, so the copy stays in plmail's Sent alone.")
    content_id = str(part.get("Content-ID") or "").strip().strip("<>")
    inline = part.get_content_disposition() == "inline" or (not part.get_content_disposition() and bool(content_id))
    return FileAttachment(name, part.get_content_type(), content, inline, content_id or None)


def sent_item(raw: bytes, *, max_attachment: int = MAX_ATTACHMENT_BYTES) -> SentItem:
    """The message as a read, sent item of Graph, with its attachments (NotFileable: one is larger than
    `max_attachment`)."""
    message = BytesParser(policy=policy.default).parsebytes(raw)
    assert isinstance(message, EmailMessage)
    body_part = message.get_body(preferencelist=("html", "plain"))
    text_part = message.get_body(preferencelist=("plain",))
    body: dict[str, str] = {"contentType": "text", "content": ""}
    if body_part is not None:
        content = body_part.get_content()
        body = {"contentType": "html" if body_part.get_content_type() == "text/html" else "text",
                "content": content if isinstance(content, str) else ""}
    properties = [{"id": PR_MESSAGE_FLAGS, "value": str(MSGFLAG_READ)}]
    sent_at = _moment(message.get("Date"))
    if sent_at is not None:
        properties += [{"id": PR_CLIENT_SUBMIT_TIME, "value": sent_at},
                       {"id": PR_MESSAGE_DELIVERY_TIME, "value": sent_at}]
    for header, tag in (("In-Reply-To", PR_IN_REPLY_TO_ID), ("References", PR_INTERNET_REFERENCES)):
        value = " ".join(str(message.get(header) or "").split())
        if value:
            properties.append({"id": tag, "value": value})
    item: dict[str, Any] = {
        "subject": str(message.get("Subject") or ""),
        "body": body,
        "toRecipients": _recipients(message, "To"),
        "ccRecipients": _recipients(message, "Cc"),
        "bccRecipients": _recipients(message, "Bcc"),
        "replyTo": _recipients(message, "Reply-To"),
        "isRead": True,
        "singleValueExtendedProperties": properties,
    }
    sender = _recipients(message, "From")
    if sender:
        item["from"] = sender[0]
    message_id = str(message.get("Message-ID") or "").strip()
    if message_id:
        item["internetMessageId"] = message_id
    custom = [{"name": name, "value": " ".join(str(value).split())} for name, value in message.items()
              if name.lower().startswith("x-")][:MAX_CUSTOM_HEADERS]
    if custom:
        item["internetMessageHeaders"] = custom
    bodies = {id(p) for p in (body_part, text_part) if p is not None}
    leaves = [p for p in _leaves(message) if id(p) not in bodies]
    return SentItem(item, tuple(_attachment(part, i, max_attachment) for i, part in enumerate(leaves, 1)))
