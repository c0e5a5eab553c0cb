"""EmailRecord → RFC 8621 Email object, property by property."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from plmail.jmap.headers import HeaderRequest, addresses, header_value
from plmail.mail.bodies import BodyPart
from plmail.mail.email_reader import EmailRecord, ReadSpec
from plmail.mail.keywords import keywords_of

BODY_PROPERTIES = ("partId", "blobId", "size", "headers", "name", "type", "charset", "disposition", "cid",
                   "language", "location", "subParts")
DEFAULT_BODY_PROPERTIES = ("partId", "blobId", "size", "name", "type", "charset", "disposition", "cid",
                           "language", "location")


EMAIL_PROPERTIES = ("id", "blobId", "threadId", "mailboxIds", "keywords", "size", "receivedAt", "headers",
                    "messageId", "inReplyTo", "references", "sender", "from", "to", "cc", "bcc", "replyTo", "subject",
                    "sentAt", "bodyStructure", "bodyValues", "textBody", "htmlBody", "attachments", "hasAttachment",
                    "preview")
DEFAULT_EMAIL_PROPERTIES = ("id", "blobId", "threadId", "mailboxIds", "keywords", "size", "receivedAt", "messageId",
                            "inReplyTo", "references", "sender", "from", "to", "cc", "bcc", "replyTo", "subject",
                            "sentAt", "hasAttachment", "preview", "bodyValues", "textBody", "htmlBody", "attachments")
VENDOR_PROPERTIES = ("category",)



@dataclass(frozen=True, slots=True)
class EmailSpec:
    """What Email/get was asked for, already validated: what to read, and how to render it."""

    read: ReadSpec
    header_requests: tuple[HeaderRequest, ...] = ()
    body_properties: tuple[str, ...] = ()
    body_header_requests: tuple[HeaderRequest, ...] = ()

    @property
    def properties(self) -> tuple[str, ...]:
        return self.read.properties


def utc(moment: datetime | None) -> str | None:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if moment else None


def keywords(record: EmailRecord) -> dict[str, bool]:
    row = record.row
    return dict.fromkeys(sorted(keywords_of(row.flags, seen=row.seen, starred=row.starred)), True)


def _people(values: Iterable[dict[str, str]]) -> list[dict[str, Any]] | None:
    people = [{"name": v.get("name") or None, "email": v.get("address", "")} for v in values if v.get("address")]
    return people or None


def _parts(parts: Iterable[BodyPart], spec: EmailSpec, message_headers: Sequence[tuple[str, str]]
           ) -> list[dict[str, Any]]:
    return [part_json(p, spec.body_properties, spec.body_header_requests, message_headers) for p in parts]


def part_json(part: BodyPart, props: Iterable[str], headers: Sequence[HeaderRequest],
              message_headers: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    values: dict[str, Any] = {
        "partId": part.part_id,
        "blobId": part.blob_id,
        # a multipart has no content of its own to download: no blob, so no size either
        "size": None if part.type.startswith("multipart/") else part.size,
        "name": part.name,
        "type": part.type,
        # RFC 8621 §4.1.4: a text part without a charset parameter is us-ascii; other types have none.
        "charset": (part.charset or "us-ascii") if part.type.startswith("text/") else None,
        "disposition": part.disposition,
        "cid": part.cid,
        "language": list(part.language) if part.language else None,
        "location": part.location,
    }
    own = list(message_headers) if part.top and part.header_pairs is None and message_headers else part.headers()
    props = list(props)
    result: dict[str, Any] = {}
    for prop in props:
        if prop == "headers":
            result["headers"] = [{"name": n, "value": v} for n, v in own]
        elif prop in values:
            result[prop] = values[prop]
    for request in headers:
        result[request.property] = header_value(own, request)
    if part.sub_parts:  # a structure without its children says nothing, whatever bodyProperties lists
        result["subParts"] = [part_json(p, props, headers, message_headers) for p in part.sub_parts]
    elif "subParts" in props:  # asked for: null on a part that is not multipart (RFC 8621 §4.1.4)
        result["subParts"] = None
    return result


def email_json(record: EmailRecord, spec: EmailSpec) -> dict[str, Any]:
    row = record.row
    headers = record.headers or []
    body = record.body
    values: dict[str, Callable[[], Any]] = {
        "id": lambda: str(row.id),
        "blobId": lambda: f"m-{row.id}",
        "threadId": lambda: str(row.thread_id) if row.thread_id is not None else None,
        "mailboxIds": lambda: {str(b): True for b in record.mailbox_ids},
        "keywords": lambda: keywords(record),
        "size": lambda: row.size,
        "receivedAt": lambda: utc(row.received_at or row.sent_at or row.created_at),
        "headers": lambda: [{"name": n, "value": v} for n, v in headers],
        "messageId": lambda: [row.message_id] if row.message_id else None,
        "inReplyTo": lambda: list(row.in_reply_to) or None,
        "references": lambda: list(row.references) or None,
        "sender": lambda: next((addresses(v) or None for n, v in reversed(headers) if n.lower() == "sender"), None),
        "from": lambda: [{"name": row.from_name or None, "email": row.from_address}] if row.from_address else None,
        "to": lambda: _people(row.to),
        "cc": lambda: _people(row.cc),
        "bcc": lambda: _people(row.bcc),
        "replyTo": lambda: _people(row.reply_to),
        # RFC 8621 §4.1.3: subject is "String|null", the header:Subject:asText form, null where there is none
        "subject": lambda: row.subject if row.has_subject else None,
        "sentAt": lambda: utc(row.sent_at),
        "hasAttachment": lambda: row.has_attachments,
        "preview": lambda: row.preview,
        "category": lambda: row.category,
        "bodyStructure": lambda: part_json(body.structure, spec.body_properties, spec.body_header_requests,
                                           headers) if body else None,
        "textBody": lambda: _parts(body.text_body, spec, headers) if body else [],
        "htmlBody": lambda: _parts(body.html_body, spec, headers) if body else [],
        "attachments": lambda: _parts(body.attachments, spec, headers) if body else [],
        "bodyValues": lambda: {k: {"value": v.value, "isEncodingProblem": False, "isTruncated": v.truncated}
                               for k, v in record.values.items()},
    }
    result = {prop: values[prop]() for prop in spec.properties if prop in values}
    for request in spec.header_requests:
        result[request.property] = header_value(headers, request)
    return result
