"""Body parts of a stored email for JMAP: its MIME tree with textBody / htmlBody / attachments as RFC 8621
§4.1.4 chooses them (mail/structure.py), and a fallback for mail stored before trees were kept.

A leaf's blob is its stored part (`p-<id>`) where the part was stored on its own, else its section of the
original (`m-<id>x1_2`). HTML goes out only sanitised, never the raw body_html (which is kept for the event
extractor's JSON-LD, not for display). The fallback (no tree and no original to read one from) shows the
stored bodies as synthesised parts "text" and "html" over body_text and body_html_safe, beside the stored
parts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from plmail.domain.mailstore import EmailRow, PartRow
from plmail.mail.structure import StructurePart, body_lists, parts_of, section_blob


@dataclass(frozen=True, slots=True)
class BodyPart:
    part_id: str | None  # None for a multipart container
    blob_id: str | None
    size: int
    type: str
    charset: str | None = None
    name: str | None = None
    disposition: str | None = None
    cid: str | None = None
    sub_parts: tuple[BodyPart, ...] = ()
    source: PartRow | None = None  # the stored part behind it, if any
    language: tuple[str, ...] | None = None
    location: str | None = None
    header_pairs: tuple[tuple[str, str], ...] | None = None  # the part's own header fields, when known
    top: bool = False  # the message itself: its header fields are the message's
    stored: str | None = None  # "text" / "html": body_text / body_html_safe hold this part's text

    def headers(self) -> list[tuple[str, str]]:
        """The part's header fields; without them, the MIME ones as they would introduce it."""
        if self.header_pairs is not None:
            return list(self.header_pairs)
        content_type = self.type + (f"; charset={self.charset}" if self.charset else "")
        if self.name:
            content_type += f'; name="{self.name}"'
        pairs = [("Content-Type", " " + content_type)]
        if self.disposition:
            pairs.append(("Content-Disposition", " " + self.disposition
                          + (f'; filename="{self.name}"' if self.name else "")))
        if self.cid:
            pairs.append(("Content-ID", f" <{self.cid}>"))
        return pairs


@dataclass(frozen=True, slots=True)
class EmailBody:
    structure: BodyPart
    text_body: tuple[BodyPart, ...]
    html_body: tuple[BodyPart, ...]
    attachments: tuple[BodyPart, ...]
    by_id: dict[str, BodyPart] = field(default_factory=dict)


def email_body(row: EmailRow, parts: Sequence[PartRow], tree: dict[str, Any] | None = None) -> EmailBody:
    if tree is not None:
        return tree_body(f"m-{row.id}", parts_of(tree), {p.path: p for p in parts})
    return _synthetic_body(row, parts)


def tree_body(container: str, structure: StructurePart, stored: dict[str, PartRow] | None = None) -> EmailBody:
    """The body of a message whose blob is `container`, from its tree; `stored` maps sections to stored parts."""
    stored = stored or {}
    by_id: dict[str, BodyPart] = {}

    def convert(node: StructurePart, top: bool) -> BodyPart:
        children = tuple(convert(child, False) for child in node.sub_parts)
        source = stored.get(node.part_id) if node.part_id is not None else None
        blob = None if node.is_multipart or node.part_id is None else (
            f"p-{source.id}" if source is not None else section_blob(container, node.part_id))
        part = BodyPart(node.part_id, blob, node.size, node.type, node.charset, node.name, node.disposition,
                        node.cid, children, source, node.language, node.location, node.header_pairs, top,
                        node.stored)
        if part.part_id is not None:
            by_id[part.part_id] = part
        return part

    root = convert(structure, True)
    lists = body_lists(structure)

    def chosen(nodes: Sequence[StructurePart] | None) -> tuple[BodyPart, ...]:
        return tuple(by_id[n.part_id] for n in nodes or () if n.part_id is not None and n.part_id in by_id)

    return EmailBody(root, chosen(lists.text), chosen(lists.html), chosen(lists.attachments), by_id)


def _synthetic_body(row: EmailRow, parts: Sequence[PartRow]) -> EmailBody:
    text = BodyPart("text", f"t-{row.id}", row.text_size or 0, "text/plain", "utf-8") \
        if row.text_size is not None else None
    html = BodyPart("html", f"h-{row.id}", row.html_size or 0, "text/html", "utf-8") \
        if row.html_size is not None else None
    seen: set[str] = set()
    attachments: list[BodyPart] = []
    for part in parts:
        part_id = part.path if part.path and part.path not in seen and part.path not in ("text", "html") \
            else f"p{part.id}"
        seen.add(part_id)
        attachments.append(BodyPart(part_id, f"p-{part.id}", part.size, part.content_type, part.charset,
                                    part.filename, part.disposition, part.content_id, source=part))
    if text and html:
        body: BodyPart = BodyPart(None, None, text.size + html.size, "multipart/alternative", sub_parts=(text, html))
    else:
        body = text or html or BodyPart("text", f"t-{row.id}", 0, "text/plain", "utf-8")
    structure = body if not attachments else BodyPart(
        None, None, body.size + sum(a.size for a in attachments), "multipart/mixed", sub_parts=(body, *attachments))
    text_body = tuple(p for p in (text or html,) if p)
    html_body = tuple(p for p in (html or text,) if p)
    by_id = {p.part_id: p for p in (text, html, *attachments) if p is not None and p.part_id is not None}
    return EmailBody(structure, text_body, html_body, tuple(attachments), by_id)


def truncate(value: str, max_bytes: int, *, html: bool) -> tuple[str, bool]:
    """Cut to at most max_bytes of UTF-8 without splitting a character or (for HTML) a tag."""
    encoded = value.encode("utf-8")
    if max_bytes <= 0 or len(encoded) <= max_bytes:
        return value, False
    cut = encoded[:max_bytes].decode("utf-8", errors="ignore")
    if html and cut.rfind("<") > cut.rfind(">"):
        cut = cut[:cut.rfind("<")]
    return cut, True
