"""Email/set create (RFC 8621 §4.6): the JSON of a new email read into the fields a draft is composed from.

A client gives the body either as `bodyStructure` or as `textBody` / `htmlBody` / `attachments`, never
both; text comes from `bodyValues` by partId, files from uploaded blobs by blobId. The composer rebuilds
the MIME structure from these fields, so a structure is read for what it holds (the text, the HTML, the
files and the inline images), not copied part for part.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from plmail.domain.messages import Address
from plmail.jmap.common import utc_date
from plmail.jmap.email_patch import keyword
from plmail.jmap.errors import invalid_properties

_ADDRESS_FIELDS = ("from", "to", "cc", "bcc", "replyTo", "sender")
_KNOWN = frozenset({
    "mailboxIds", "keywords", "receivedAt", "messageId", "inReplyTo", "references", "subject", "sentAt",
    "bodyStructure", "bodyValues", "textBody", "htmlBody", "attachments", *_ADDRESS_FIELDS,
})
_SERVER_SET = frozenset({"id", "blobId", "threadId", "size", "hasAttachment", "preview"})


@dataclass(frozen=True, slots=True)
class FilePart:
    """An attachment or inline image, named by the blob it was uploaded as."""

    blob_id: str
    content_type: str
    name: str
    content_id: str | None
    inline: bool


@dataclass(slots=True)
class EmailCreate:
    mailbox_keys: dict[str, bool]
    keywords: frozenset[str]
    sender: Address | None
    to: tuple[Address, ...] = ()
    cc: tuple[Address, ...] = ()
    bcc: tuple[Address, ...] = ()
    reply_to: tuple[Address, ...] = ()
    subject: str = ""
    message_id: str | None = None
    in_reply_to: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
    sent_at: datetime | None = None
    text: str | None = None
    html: str | None = None
    files: list[FilePart] = field(default_factory=list)
    headers: tuple[tuple[str, str], ...] = ()


def _addresses(value: Any, name: str) -> tuple[Address, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, Mapping) and isinstance(v.get("email"), str)
                                              for v in value):
        raise invalid_properties(f"'{name}' is a list of {{name, email}} or null.", name)
    return tuple(Address(str(v.get("name") or ""), str(v["email"])) for v in value)


def _ids(value: Any, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise invalid_properties(f"'{name}' is a list of message ids or null.", name)
    return tuple(value)


def _date(value: Any, name: str) -> datetime | None:
    return utc_date(value, name) if value is not None else None


def _header_property(name: str, value: Any) -> tuple[str, str]:
    """`header:X-Foo` or `header:X-Foo:asText`: one header the client adds, as text."""
    _, header, *form = name.split(":")
    if form and form != ["asText"] and form != ["asRaw"]:
        raise invalid_properties(f"{name}: only the text and raw forms can be set.", name)
    if not isinstance(value, str):
        raise invalid_properties(f"{name} is a string.", name)
    return header, value.strip()


class _Body:
    def __init__(self, values: Mapping[str, Any]) -> None:
        self.values = values
        self.text: str | None = None
        self.html: str | None = None
        self.files: list[FilePart] = []

    def value(self, part: Mapping[str, Any], where: str) -> str:
        part_id = part.get("partId")
        found = self.values.get(part_id) if isinstance(part_id, str) else None
        if not isinstance(found, Mapping) or not isinstance(found.get("value"), str):
            raise invalid_properties(f"{where}: partId {part_id!r} names no entry of bodyValues.", "bodyValues")
        if found.get("isTruncated") or found.get("isEncodingProblem"):
            raise invalid_properties("A body value cannot be truncated or have an encoding problem.", "bodyValues")
        return str(found["value"])

    def file(self, part: Mapping[str, Any], where: str, *, inline: bool = False) -> None:
        blob_id = part.get("blobId")
        if not isinstance(blob_id, str):
            raise invalid_properties(f"{where}: a part without text needs a blobId.", where)
        content_type = str(part.get("type") or "application/octet-stream")
        cid = part.get("cid")
        disposition = str(part.get("disposition") or ("inline" if cid else "attachment")).lower()
        self.files.append(FilePart(blob_id, content_type, str(part.get("name") or ""),
                                   str(cid).strip("<>") if isinstance(cid, str) and cid else None,
                                   inline or disposition == "inline"))

    def leaf(self, part: Mapping[str, Any], where: str) -> None:
        content_type = str(part.get("type") or "text/plain").lower()
        is_file = "blobId" in part or part.get("disposition") == "attachment"
        if not is_file and content_type == "text/plain" and self.text is None:
            self.text = self.value(part, where)
        elif not is_file and content_type == "text/html" and self.html is None:
            self.html = self.value(part, where)
        else:
            self.file(part, where)

    def structure(self, part: Any, depth: int = 0) -> None:
        if not isinstance(part, Mapping) or depth > 10:
            raise invalid_properties("bodyStructure is an EmailBodyPart.", "bodyStructure")
        children = part.get("subParts")
        if children is not None:
            if not isinstance(children, list):
                raise invalid_properties("subParts is a list.", "bodyStructure")
            for child in children:
                self.structure(child, depth + 1)
            return
        self.leaf(part, "bodyStructure")

    def listed(self, parts: Any, name: str, content_type: str) -> str | None:
        if parts is None:
            return None
        if not isinstance(parts, list) or len(parts) > 1 or not all(isinstance(p, Mapping) for p in parts):
            raise invalid_properties(f"'{name}' holds at most one part.", name)
        if not parts:
            return None
        part = parts[0]
        if str(part.get("type") or content_type).lower() != content_type:
            raise invalid_properties(f"'{name}' is {content_type}.", name)
        return self.value(part, name)


def parse_create(values: Mapping[str, Any]) -> EmailCreate:
    headers: list[tuple[str, str]] = []
    unknown: list[str] = []
    for name, value in values.items():
        if name.startswith("header:"):
            headers.append(_header_property(name, value))
        elif name in _SERVER_SET:
            raise invalid_properties(f"'{name}' is set by the server.", name)
        elif name not in _KNOWN:
            unknown.append(name)
    if unknown:
        raise invalid_properties("These properties cannot be set when creating an email.", *unknown)
    mailboxes = values.get("mailboxIds")
    if not isinstance(mailboxes, Mapping) or not mailboxes or not all(v is True for v in mailboxes.values()):
        raise invalid_properties("An email needs at least one mailbox.", "mailboxIds")
    keywords = values.get("keywords") or {}
    if not isinstance(keywords, Mapping) or not all(v is True for v in keywords.values()):
        raise invalid_properties("'keywords' maps keywords to true.", "keywords")
    senders = _addresses(values.get("from"), "from")
    if len(senders) > 1:
        raise invalid_properties("An email plmail writes has one From address.", "from")
    message_ids = _ids(values.get("messageId"), "messageId")
    if len(message_ids) > 1:
        raise invalid_properties("An email has one Message-ID.", "messageId")
    body = _Body(values.get("bodyValues") or {})
    if not isinstance(body.values, Mapping):
        raise invalid_properties("'bodyValues' maps partIds to values.", "bodyValues")
    listed = any(values.get(k) is not None for k in ("textBody", "htmlBody", "attachments"))
    if values.get("bodyStructure") is not None:
        if listed:
            raise invalid_properties("Give bodyStructure or textBody/htmlBody/attachments, not both.",
                                     "bodyStructure")
        body.structure(values["bodyStructure"])
    else:
        body.text = body.listed(values.get("textBody"), "textBody", "text/plain")
        body.html = body.listed(values.get("htmlBody"), "htmlBody", "text/html")
        attachments = values.get("attachments")
        if attachments is not None:
            if not isinstance(attachments, list) or not all(isinstance(a, Mapping) for a in attachments):
                raise invalid_properties("'attachments' is a list of parts.", "attachments")
            for attachment in attachments:
                body.file(attachment, "attachments")
    subject = values.get("subject")
    if subject is not None and not isinstance(subject, str):
        raise invalid_properties("'subject' is a string.", "subject")
    return EmailCreate(
        mailbox_keys={str(k): True for k in mailboxes},
        keywords=frozenset(keyword(str(k)) for k in keywords),
        sender=senders[0] if senders else None,
        to=_addresses(values.get("to"), "to"), cc=_addresses(values.get("cc"), "cc"),
        bcc=_addresses(values.get("bcc"), "bcc"), reply_to=_addresses(values.get("replyTo"), "replyTo"),
        subject=subject or "", message_id=message_ids[0] if message_ids else None,
        in_reply_to=_ids(values.get("inReplyTo"), "inReplyTo"), references=_ids(values.get("references"), "references"),
        sent_at=_date(values.get("sentAt"), "sentAt"), text=body.text, html=body.html, files=body.files,
        headers=tuple(headers),
    )
