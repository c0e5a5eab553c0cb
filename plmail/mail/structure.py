"""A message's MIME tree as JMAP's bodyStructure (RFC 8621 §4.1.4), and textBody / htmlBody / attachments
chosen from it by the RFC's own algorithm.

The tree is read once, when a message is stored (or the first time it is asked for), and kept as JSON on
the message: part ids are IMAP section numbers ("1", "2.1"), a multipart has none, and a message/rfc822
part is a leaf (its insides are Email/parse's). Each node keeps what an EmailBodyPart shows (type, charset,
disposition, cid, language, location, name, decoded size and, below the top, its own header fields) and
whether the stored body columns hold its text ("text": the one plain body, "html": the first HTML body),
so most body values never need the original.

A part's blob id is its container's blob id, then "x" and its section with "_" for "." (`m-42x1_2`, an
attached message's part `p-17x2`): blob ids may only use the URL-safe base64 alphabet.
"""

from __future__ import annotations

import email
import email.utils
from collections.abc import Sequence
from dataclasses import dataclass, field
from email.message import Message
from email.policy import compat32
from typing import Any

from plmail.domain.errors import NotFoundError
from plmail.mail.charsets import READING_POLICY, repair_surrogates, storable
from plmail.mail.headers import decode_words

MAX_NODES = 500
MAX_DEPTH = 40
MAX_HEADER_CHARS = 4000  # a part's own header fields kept for bodyProperties "headers"
INLINE_MEDIA = ("image/", "audio/", "video/")
SECTION_SEPARATOR = "x"


def section_blob(container: str, part_id: str) -> str:
    """The blob id of a part inside the blob `container` (a raw message, an attached message)."""
    return f"{container}{SECTION_SEPARATOR}{part_id.replace('.', '_')}"


def split_blob(blob_id: str) -> tuple[str, list[str]]:
    """(the container's blob id, the sections to descend, as "2.1")."""
    base, *sections = blob_id.split(SECTION_SEPARATOR)
    return base, [s.replace("_", ".") for s in sections]


# -- reading the tree from a message ------------------------------------------------------------------------

def _params(part: Message, header: str, name: str) -> str | None:
    try:
        value = part.get_param(name, header=header)
    except (TypeError, ValueError, LookupError, UnicodeError):
        return None
    if isinstance(value, tuple):  # RFC 2231
        try:
            value = email.utils.collapse_rfc2231_value(value)
        except (LookupError, UnicodeError):
            return None
    return storable(decode_words(repair_surrogates(str(value)))) if value else None


def _payload_size(part: Message) -> int:
    if part.get_content_type() == "message/rfc822":
        inner = part.get_payload()
        if isinstance(inner, list) and inner and isinstance(inner[0], Message):
            try:
                return len(inner[0].as_bytes(policy=compat32))
            except (TypeError, ValueError, LookupError, UnicodeError):
                return 0
    try:
        data = part.get_payload(decode=True)
    except (TypeError, ValueError, AssertionError):
        data = None
    if isinstance(data, bytes):
        return len(data)
    raw = part.get_payload()
    return len(raw.encode("utf-8", "surrogateescape")) if isinstance(raw, str) else 0


def _header_pairs(part: Message) -> list[list[str]]:
    pairs: list[list[str]] = []
    used = 0
    for name, value in part.items():
        text = storable(str(value))  # already read as text: the tree is read from READING_POLICY's parse
        used += len(name) + len(text)
        if used > MAX_HEADER_CHARS:
            break
        pairs.append([storable(repair_surrogates(str(name))), " " + text])
    return pairs


class _TreeReader:
    def __init__(self) -> None:
        self.nodes = 0
        self.text_bodies: list[dict[str, Any]] = []
        self.html_bodies: list[dict[str, Any]] = []

    def node(self, part: Message, part_id: str | None, depth: int, top: bool) -> dict[str, Any]:
        self.nodes += 1
        ctype = part.get_content_type()
        disposition = part.get_content_disposition()
        languages = [v.strip() for v in str(part.get("Content-Language") or "").split(",") if v.strip()]
        location = str(part.get("Content-Location") or "").strip() or None
        cid = str(part.get("Content-ID") or "").strip() or None
        node: dict[str, Any] = {
            "id": part_id, "type": ctype, "charset": part.get_content_charset() if ctype.startswith("text/") else None,
            "disposition": disposition, "name": _params(part, "content-disposition", "filename")
            or _params(part, "content-type", "name"),
            "cid": storable(cid.strip("<>"))[:255] if cid else None, "language": languages or None,
            "location": storable(location) if location else None,
        }
        if not top:
            node["headers"] = _header_pairs(part)
        children = part.get_payload() if part.is_multipart() and ctype != "message/rfc822" else None
        if ctype.startswith("multipart/") and isinstance(children, list):
            node["id"] = None
            kids: list[dict[str, Any]] = []
            if depth < MAX_DEPTH:
                for index, child in enumerate(children, start=1):
                    if self.nodes >= MAX_NODES:
                        break
                    if isinstance(child, Message):
                        kids.append(self.node(child, f"{part_id}.{index}" if part_id else str(index), depth + 1,
                                              False))
            node["parts"] = kids
            node["size"] = sum(k["size"] for k in kids)
            return node
        node["id"] = part_id or "1"
        node["size"] = _payload_size(part)
        # The same choice as the parser's (mail/mime.py): the bodies it stores in body_text / body_html.
        if disposition != "attachment" and node["name"] is None and ctype in ("text/plain", "text/html"):
            (self.text_bodies if ctype == "text/plain" else self.html_bodies).append(node)
        return node


def read_tree(msg: Message) -> dict[str, Any]:
    """The JSON kept on the message: its MIME tree, with the stored bodies marked."""
    reader = _TreeReader()
    root = reader.node(msg, None, 0, True)
    if len(reader.text_bodies) == 1:
        reader.text_bodies[0]["stored"] = "text"  # body_text joins every plain body: exact only for one
    if reader.html_bodies:
        reader.html_bodies[0]["stored"] = "html"
    return root


def tree_of(raw: bytes) -> dict[str, Any]:
    return read_tree(email.message_from_bytes(raw, policy=READING_POLICY))


# -- the tree as body parts -----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class StructurePart:
    """One node of the tree, ready to render as an EmailBodyPart."""

    part_id: str | None
    type: str
    size: int
    charset: str | None = None
    disposition: str | None = None
    name: str | None = None
    cid: str | None = None
    language: tuple[str, ...] | None = None
    location: str | None = None
    header_pairs: tuple[tuple[str, str], ...] | None = None  # None: the message's own (the top part)
    stored: str | None = None  # "text" / "html": the stored body column holds this part's text
    sub_parts: tuple[StructurePart, ...] = field(default_factory=tuple)

    @property
    def is_multipart(self) -> bool:
        return self.type.startswith("multipart/")


def parts_of(node: dict[str, Any]) -> StructurePart:
    children = tuple(parts_of(c) for c in node.get("parts") or ()) if "parts" in node else ()
    headers = node.get("headers")
    language = node.get("language")
    return StructurePart(
        part_id=node.get("id"), type=str(node.get("type") or "application/octet-stream"),
        size=int(node.get("size") or 0),
        charset=node.get("charset"), disposition=node.get("disposition"), name=node.get("name"), cid=node.get("cid"),
        language=tuple(language) if language else None, location=node.get("location"),
        header_pairs=tuple((str(n), str(v)) for n, v in headers) if headers is not None else None,
        stored=node.get("stored"), sub_parts=children,
    )


def _is_inline_media(part: StructurePart) -> bool:
    return part.type.startswith(INLINE_MEDIA)


@dataclass(slots=True)
class BodyLists:
    text: list[StructurePart] | None = field(default_factory=list)
    html: list[StructurePart] | None = field(default_factory=list)
    attachments: list[StructurePart] = field(default_factory=list)


def _parse_structure(parts: Sequence[StructurePart], multipart_type: str, in_alternative: bool,
                     html_body: list[StructurePart] | None, text_body: list[StructurePart] | None,
                     attachments: list[StructurePart]) -> None:
    """RFC 8621 §4.1.4's parseStructure, step by step: the lists are shared and appended to, and (as the RFC's
    reassigned parameters do) a body part inside an alternative stops the other list for the rest of its
    multipart."""
    text_length = len(text_body) if text_body is not None else -1
    html_length = len(html_body) if html_body is not None else -1
    for index, part in enumerate(parts):
        is_inline = (part.disposition != "attachment"
                     # one of the allowed body types
                     and (part.type in ("text/plain", "text/html") or _is_inline_media(part))
                     # in multipart/related only the first part can be inline; a text part with a name that is
                     # not first in its multipart is an attachment
                     and (index == 0 or (multipart_type != "related"
                                         and (_is_inline_media(part) or not part.name))))
        if part.is_multipart:
            sub_type = part.type.split("/", 1)[1]
            _parse_structure(part.sub_parts, sub_type, in_alternative or sub_type == "alternative",
                             html_body, text_body, attachments)
        elif is_inline:
            if multipart_type == "alternative":
                if part.type == "text/plain":
                    if text_body is not None:
                        text_body.append(part)
                elif part.type == "text/html":
                    if html_body is not None:
                        html_body.append(part)
                else:
                    attachments.append(part)
                continue
            if in_alternative:
                if part.type == "text/plain":
                    html_body = None
                if part.type == "text/html":
                    text_body = None
            if text_body is not None:
                text_body.append(part)
            if html_body is not None:
                html_body.append(part)
            if (text_body is None or html_body is None) and _is_inline_media(part):
                attachments.append(part)
        else:
            attachments.append(part)
    if multipart_type == "alternative" and text_body is not None and html_body is not None:
        # Found an HTML part only: the plain list shows it too.
        if text_length == len(text_body) and html_length != len(html_body):
            text_body.extend(html_body[html_length:])
        # Found a plain part only: the HTML list shows it too.
        if html_length == len(html_body) and text_length != len(text_body):
            html_body.extend(text_body[text_length:])


def body_lists(structure: StructurePart) -> BodyLists:
    """textBody, htmlBody and attachments of a bodyStructure, as RFC 8621 §4.1.4 computes them."""
    lists = BodyLists()
    assert lists.text is not None
    assert lists.html is not None
    _parse_structure([structure], "mixed", False, lists.html, lists.text, lists.attachments)
    return lists


# -- a section of a message ---------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Section:
    data: bytes  # transfer-decoded content (an attached message: its bytes)
    type: str
    charset: str | None
    name: str | None


def section(raw: bytes, part_id: str) -> Section:
    """The part at an IMAP section number ("2.1") of a message; "1" of a single-part message is its body."""
    node: Message = email.message_from_bytes(raw, policy=READING_POLICY)
    for depth, step in enumerate(part_id.split(".")):
        children = node.get_payload() if node.get_content_type().startswith("multipart/") else None
        if not isinstance(children, list):
            if step == "1" and depth == 0:
                continue  # a single-part message is its own part 1
            raise NotFoundError("The part is not in the message.")
        index = int(step) - 1 if step.isdigit() else -1
        child = children[index] if 0 <= index < len(children) else None
        if not isinstance(child, Message):
            raise NotFoundError("The part is not in the message.")
        node = child
    ctype = node.get_content_type()
    if ctype.startswith("multipart/"):
        raise NotFoundError("A multipart has no content of its own.")
    if ctype == "message/rfc822":
        inner = node.get_payload()
        data = inner[0].as_bytes(policy=compat32) if isinstance(inner, list) and inner and isinstance(
            inner[0], Message) else b""
    else:
        payload = node.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
    return Section(data, ctype, node.get_content_charset(),
                   _params(node, "content-disposition", "filename") or _params(node, "content-type", "name"))
