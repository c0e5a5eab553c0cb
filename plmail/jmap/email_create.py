"""Email/set create (RFC 8621 §4.6): the JSON of a new email read into the fields a draft is composed from.

A client gives the body either as `bodyStructure` or as `textBody` / `htmlBody` / `attachments`, never
both; text comes from `bodyValues` by partId or from an uploaded blob by blobId, files from uploaded blobs
(or, by partId, from bodyValues). The composer rebuilds the MIME structure from these fields, so a structure
is read for what it holds (the text, the HTML, the files and the inline images), not copied part for part.
Header fields may be given as `header:{name}[:as{Form}][:all]` in any form RFC 8621 §4.1.2 allows for that
field: the ones the composer writes from fields (From, To, Subject, Date, …) land in those fields, the rest
are written as they are given.
"""

from __future__ import annotations

import email.utils
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from plmail.domain.messages import Address
from plmail.jmap.common import utc_date
from plmail.jmap.email_patch import keyword
from plmail.jmap.errors import MethodError, invalid_properties
from plmail.jmap.headers import HeaderRequest, parse_header_property
from plmail.mail.mime import message_ids

_ADDRESS_FIELDS = ("from", "to", "cc", "bcc", "replyTo", "sender")
_KNOWN = frozenset({
    "mailboxIds", "keywords", "receivedAt", "messageId", "inReplyTo", "references", "subject", "sentAt",
    "bodyStructure", "bodyValues", "textBody", "htmlBody", "attachments", *_ADDRESS_FIELDS,
})
_SERVER_SET = frozenset({"id", "blobId", "threadId", "size", "hasAttachment", "preview"})
# The header field each convenience property stands for: both given is two properties for one field (§4.6).
_PROPERTY_HEADER = {"from": "from", "to": "to", "cc": "cc", "bcc": "bcc", "replyTo": "reply-to", "sender": "sender",
                    "subject": "subject", "sentAt": "date", "messageId": "message-id", "inReplyTo": "in-reply-to",
                    "references": "references"}
_PART_PROPERTIES = frozenset({"partId", "blobId", "size", "name", "type", "charset", "disposition", "cid", "language",
                              "location", "subParts"})
# A part's Content-* fields that a property already represents.
_PART_HEADER_PROPERTY = {"content-type": "type", "content-disposition": "disposition", "content-id": "cid",
                         "content-language": "language", "content-location": "location"}
_COMPOSER_WRITES = frozenset({"mime-version"})


@dataclass(frozen=True, slots=True)
class FilePart:
    """An attachment or inline image: an uploaded blob, or (by partId) text from bodyValues."""

    blob_id: str | None
    content_type: str
    name: str
    content_id: str | None
    inline: bool
    data: bytes | None = None
    headers: tuple[tuple[str, str], ...] = ()  # Content-Language, Content-Location and the part's header:* fields


@dataclass(frozen=True, slots=True)
class BlobText:
    """A textBody/htmlBody part given by blobId: the text is the uploaded blob, decoded with `charset`."""

    blob_id: str
    charset: str | None


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
    received_at: datetime | None = None
    text: str | None = None
    html: str | None = None
    files: list[FilePart] = field(default_factory=list)
    headers: tuple[tuple[str, str], ...] = ()
    text_blob: BlobText | None = None
    html_blob: BlobText | None = None
    text_headers: tuple[tuple[str, str], ...] = ()
    html_headers: tuple[tuple[str, str], ...] = ()


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


def _request(name: str) -> HeaderRequest:
    """`header:…` read with Email/get's rules; a form the field does not take is an invalid property (§4.6:
    "Header fields MUST NOT be specified in parsed forms that are forbidden for that particular field")."""
    try:
        return parse_header_property(name)
    except MethodError as exc:
        raise invalid_properties(exc.description, name) from None


def _format_addresses(value: Any, prop: str) -> str:
    return ", ".join(email.utils.formataddr((a.name, a.address)) for a in _addresses(value, prop))


def _format_groups(value: Any, prop: str) -> str:
    if not isinstance(value, list) or not all(isinstance(g, Mapping) for g in value):
        raise invalid_properties(f"{prop} is a list of {{name, addresses}}.", prop)
    out = []
    for group in value:
        members = _format_addresses(group.get("addresses"), prop)
        name = group.get("name")
        out.append(f"{name}: {members};" if isinstance(name, str) else members)
    return ", ".join(o for o in out if o)


def _render(request: HeaderRequest, value: Any) -> str:
    """One header field's value written from one parsed form (§4.1.2)."""
    prop = request.property
    form = request.form
    if form in ("Raw", "Text"):
        if not isinstance(value, str):
            raise invalid_properties(f"{prop} is a string.", prop)
        return value.strip()
    if form == "Addresses":
        return _format_addresses(value, prop)
    if form == "GroupedAddresses":
        return _format_groups(value, prop)
    if form == "MessageIds":
        return " ".join(f"<{i.strip().strip('<>')}>" for i in _ids(value, prop))
    if form == "Date":
        if not isinstance(value, str):
            raise invalid_properties(f"{prop} is a date.", prop)
        return email.utils.format_datetime(utc_date(value, prop))
    if form == "URLs":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise invalid_properties(f"{prop} is a list of URLs.", prop)
        return ", ".join(f"<{v}>" for v in value)
    raise invalid_properties(f"{prop}: unknown form.", prop)


def _instances(request: HeaderRequest, value: Any) -> list[str]:
    """The field's instances: one, or with :all one per list item (none for null or [])."""
    if not request.all:
        return [] if value is None else [_render(request, value)]
    if value is None:
        return []
    if not isinstance(value, list):
        raise invalid_properties(f"{request.property} (:all) is a list.", request.property)
    return [_render(request, item) for item in value]


def _header_fields(values: Mapping[str, Any], where: str) -> dict[str, tuple[str, HeaderRequest, list[str]]]:
    """Every header:* property of an object: lower-cased name -> (name as written, request, instances). Two
    properties for one field are refused (§4.6: "There MUST NOT be two properties that represent the same
    header field")."""
    found: dict[str, tuple[str, HeaderRequest, list[str]]] = {}
    for prop, value in values.items():
        if not prop.startswith("header:"):
            continue
        request = _request(prop)
        if request.name in found:
            raise invalid_properties(f"{where}: two properties set the {request.name} header field.",
                                     found[request.name][1].property, prop)
        found[request.name] = (prop.split(":")[1], request, _instances(request, value))
    return found


def _one(fields: list[str], prop: str) -> str:
    if len(fields) > 1:
        raise invalid_properties(f"{prop}: this field is written once.", prop)
    return fields[0] if fields else ""


def _parsed_addresses(request: HeaderRequest, value: Any, text: str) -> tuple[Address, ...]:
    if request.form == "Addresses" and not request.all:
        return _addresses(value, request.property)
    return tuple(Address(n, a) for n, a in email.utils.getaddresses([text]) if a)


class _Body:
    def __init__(self, values: Mapping[str, Any]) -> None:
        self.values = values
        self.text: str | None = None
        self.html: str | None = None
        self.text_blob: BlobText | None = None
        self.html_blob: BlobText | None = None
        self.text_headers: tuple[tuple[str, str], ...] = ()
        self.html_headers: tuple[tuple[str, str], ...] = ()
        self.files: list[FilePart] = []

    def value(self, part: Mapping[str, Any], where: str) -> str:
        part_id = part.get("partId")
        found = self.values.get(part_id) if isinstance(part_id, str) else None
        if not isinstance(found, Mapping) or not isinstance(found.get("value"), str):
            raise invalid_properties(f"{where}: partId {part_id!r} names no entry of bodyValues.", "bodyValues")
        if found.get("isTruncated") or found.get("isEncodingProblem"):
            raise invalid_properties("A body value cannot be truncated or have an encoding problem.", "bodyValues")
        return str(found["value"])

    def checked(self, part: Mapping[str, Any], where: str) -> dict[str, Any]:
        """A part's properties after §4.6's rules for an EmailBodyPart, with its Content-* header:* fields read
        into the properties they stand for; the other header:* fields are under "headers"."""
        if "headers" in part:
            raise invalid_properties(f"{where}: set each header field as its own header:* property, not 'headers' "
                                     "(RFC 8621 §4.6).", where)
        unknown = sorted(p for p in part if p not in _PART_PROPERTIES and not p.startswith("header:"))
        if unknown:
            raise invalid_properties(f"{where}: unknown part properties: {', '.join(unknown)}.", where)
        if "partId" in part and "blobId" in part:
            raise invalid_properties(f"{where}: a part has a partId or a blobId, not both.", where)
        if "partId" in part and (part.get("charset") is not None or part.get("size") is not None):
            raise invalid_properties(f"{where}: charset and size are omitted when a partId is given.", where)
        result = {k: v for k, v in part.items() if not k.startswith("header:")}
        extra: list[tuple[str, str]] = []
        for name, (written, request, instances) in _header_fields(part, where).items():
            if name == "content-transfer-encoding":
                raise invalid_properties(f"{where}: a Content-Transfer-Encoding header field MUST NOT be given; the "
                                         "server chooses the encoding.", request.property)
            if name in _PART_HEADER_PROPERTY:
                prop = _PART_HEADER_PROPERTY[name]
                if part.get(prop) is not None:
                    raise invalid_properties(f"{where}: {prop} and {request.property} set the same field.",
                                             prop, request.property)
                text = _one(instances, request.property)
                if prop == "type":
                    result["type"] = text.split(";")[0].strip()
                elif prop == "disposition":
                    result["disposition"] = text.split(";")[0].strip().lower()
                elif prop == "language":
                    result["language"] = [t.strip() for t in text.split(",") if t.strip()]
                else:
                    result[prop] = text.strip().strip("<>") if prop == "cid" else text
                continue
            extra += [(written, text) for text in instances]
        language = result.get("language")
        if language is not None:
            if not isinstance(language, list) or not all(isinstance(t, str) for t in language):
                raise invalid_properties(f"{where}: language is a list of language tags.", where)
            if language:
                extra.append(("Content-Language", ", ".join(language)))
        location = result.get("location")
        if location is not None:
            if not isinstance(location, str):
                raise invalid_properties(f"{where}: location is a URI.", where)
            extra.append(("Content-Location", location))
        result["headers"] = tuple(extra)
        return result

    def text_of(self, part: Mapping[str, Any], where: str) -> str | BlobText:
        if "partId" in part:
            return self.value(part, where)
        blob_id = part.get("blobId")
        if not isinstance(blob_id, str):
            raise invalid_properties(f"{where}: a part needs a partId or a blobId.", where)
        charset = part.get("charset")
        return BlobText(blob_id, charset if isinstance(charset, str) else None)

    def file(self, part: Mapping[str, Any], where: str) -> None:
        checked = self.checked(part, where)
        content_type = str(checked.get("type") or ("text/plain" if "partId" in checked
                                                   else "application/octet-stream"))
        cid = checked.get("cid")
        disposition = str(checked.get("disposition") or ("inline" if cid else "attachment")).lower()
        content_id = str(cid).strip("<>") if isinstance(cid, str) and cid else None
        name = str(checked.get("name") or "")
        if "partId" in checked:
            data = self.value(checked, where).encode()
            self.files.append(FilePart(None, content_type, name, content_id, disposition == "inline", data=data,
                                       headers=checked["headers"]))
            return
        blob_id = checked.get("blobId")
        if not isinstance(blob_id, str):
            raise invalid_properties(f"{where}: a part without text needs a blobId.", where)
        self.files.append(FilePart(blob_id, content_type, name, content_id, disposition == "inline",
                                   headers=checked["headers"]))

    def _set_text(self, kind: str, content: str | BlobText, headers: tuple[tuple[str, str], ...]) -> None:
        if kind == "text/plain":
            if isinstance(content, BlobText):
                self.text_blob = content
            else:
                self.text = content
            self.text_headers = headers
        else:
            if isinstance(content, BlobText):
                self.html_blob = content
            else:
                self.html = content
            self.html_headers = headers

    def _has(self, kind: str) -> bool:
        return (self.text is not None or self.text_blob is not None) if kind == "text/plain" \
            else (self.html is not None or self.html_blob is not None)

    def leaf(self, part: Mapping[str, Any], where: str) -> None:
        checked = self.checked(part, where)
        content_type = str(checked.get("type") or "text/plain").lower()
        is_file = checked.get("disposition") == "attachment" or checked.get("cid") is not None \
            or content_type not in ("text/plain", "text/html")
        if not is_file and not self._has(content_type):
            self._set_text(content_type, self.text_of(checked, where), checked["headers"])
        else:
            self.file(part, where)

    def structure(self, part: Any, depth: int = 0) -> None:
        if not isinstance(part, Mapping) or depth > 10:
            raise invalid_properties("bodyStructure is an EmailBodyPart.", "bodyStructure")
        children = part.get("subParts")
        if children is not None:
            if not isinstance(children, list):
                raise invalid_properties("subParts is a list.", "bodyStructure")
            self.checked(part, "bodyStructure")
            for child in children:
                self.structure(child, depth + 1)
            return
        self.leaf(part, "bodyStructure")

    def listed(self, parts: Any, name: str, content_type: str) -> None:
        """§4.6: "If given, textBody MUST contain exactly one body part and it MUST be of type "text/plain""
        (htmlBody: "text/html")."""
        if parts is None:
            return
        if not isinstance(parts, list) or len(parts) != 1 or not isinstance(parts[0], Mapping):
            raise invalid_properties(f"'{name}' holds exactly one part.", name)
        checked = self.checked(parts[0], name)
        if str(checked.get("type") or content_type).lower() != content_type:
            raise invalid_properties(f"'{name}' is {content_type}.", name)
        self._set_text(content_type, self.text_of(checked, name), checked["headers"])


def _top_headers(values: Mapping[str, Any], parsed: EmailCreate) -> None:
    """header:* properties of the Email: the composer's own fields into them, the rest written as given."""
    extra: list[tuple[str, str]] = []
    for name, (written, request, instances) in _header_fields(values, "Email").items():
        prop = request.property
        if name.startswith("content-"):
            raise invalid_properties("Header fields beginning with Content- are set on a body part, not on the "
                                     "Email (RFC 8621 §4.6).", prop)
        if name in _COMPOSER_WRITES:
            raise invalid_properties(f"The server writes {written} itself.", prop)
        twin = next((p for p, h in _PROPERTY_HEADER.items() if h == name and p in values), None)
        if twin is not None:
            raise invalid_properties(f"{twin} and {prop} set the same header field.", twin, prop)
        value = values[prop]
        if name in ("from", "to", "cc", "bcc", "reply-to"):
            text = _one(instances, prop)
            people = _parsed_addresses(request, value, text)
            if name == "from":
                if len(people) > 1:
                    raise invalid_properties("An email plmail writes has one From address.", prop)
                parsed.sender = people[0] if people else None
            else:
                setattr(parsed, {"reply-to": "reply_to"}.get(name, name), people)
        elif name == "subject":
            parsed.subject = _one(instances, prop)
        elif name == "date":
            text = _one(instances, prop)
            try:
                parsed.sent_at = email.utils.parsedate_to_datetime(text) if text else None
            except (TypeError, ValueError):
                raise invalid_properties(f"{prop} is not an RFC 5322 date.", prop) from None
        elif name == "message-id":
            found = message_ids(_one(instances, prop))
            if len(found) > 1:
                raise invalid_properties("An email has one Message-ID.", prop)
            parsed.message_id = found[0] if found else None
        elif name in ("in-reply-to", "references"):
            ids = message_ids(" ".join(instances))
            if name == "in-reply-to":
                parsed.in_reply_to = ids
            else:
                parsed.references = ids
        else:
            extra += [(written, text) for text in instances]
    parsed.headers = tuple(extra)


def parse_create(values: Mapping[str, Any]) -> EmailCreate:
    unknown: list[str] = []
    for name in values:
        if name.startswith("header:"):
            continue
        if name == "headers":
            raise invalid_properties("Set each header field as its own header:* property; 'headers' MUST NOT be "
                                     "given when creating an email (RFC 8621 §4.6).", "headers")
        if name in _SERVER_SET:
            raise invalid_properties(f"'{name}' is set by the server.", name)
        if name not in _KNOWN:
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
    message_ids_given = _ids(values.get("messageId"), "messageId")
    if len(message_ids_given) > 1:
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
        body.listed(values.get("textBody"), "textBody", "text/plain")
        body.listed(values.get("htmlBody"), "htmlBody", "text/html")
        attachments = values.get("attachments")
        if attachments is not None:
            if not isinstance(attachments, list) or not all(isinstance(a, Mapping) for a in attachments):
                raise invalid_properties("'attachments' is a list of parts.", "attachments")
            for attachment in attachments:
                body.file(attachment, "attachments")
    subject = values.get("subject")
    if subject is not None and not isinstance(subject, str):
        raise invalid_properties("'subject' is a string.", "subject")
    parsed = EmailCreate(
        mailbox_keys={str(k): True for k in mailboxes},
        keywords=frozenset(keyword(str(k)) for k in keywords),
        sender=senders[0] if senders else None,
        to=_addresses(values.get("to"), "to"), cc=_addresses(values.get("cc"), "cc"),
        bcc=_addresses(values.get("bcc"), "bcc"), reply_to=_addresses(values.get("replyTo"), "replyTo"),
        subject=subject or "", message_id=message_ids_given[0] if message_ids_given else None,
        in_reply_to=_ids(values.get("inReplyTo"), "inReplyTo"), references=_ids(values.get("references"), "references"),
        sent_at=_date(values.get("sentAt"), "sentAt"), received_at=_date(values.get("receivedAt"), "receivedAt"),
        text=body.text, html=body.html, files=body.files,
        text_blob=body.text_blob, html_blob=body.html_blob, text_headers=body.text_headers,
        html_headers=body.html_headers,
    )
    _top_headers(values, parsed)
    sender_field = values.get("sender")
    if sender_field is not None:  # Sender: no field of its own in the composer, written as given
        parsed.headers = (*parsed.headers, ("Sender", _format_addresses(sender_field, "sender")))
    return parsed
