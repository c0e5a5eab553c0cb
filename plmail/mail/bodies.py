"""Body parts of a stored email: the plain and HTML bodies as stored, plus the message's other parts.

The bodies are synthesised parts "text" and "html" over the stored body_text and body_html_safe:
HTML goes out only as the sanitised copy, never the raw body_html (which is kept for the event
extractor's JSON-LD, not for display). Every other part is a message_part row (`p-<id>`); the real
MIME tree stays available as the raw message (`m-<id>`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from plmail.domain.mailstore import EmailRow, PartRow


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

    def headers(self) -> list[tuple[str, str]]:
        """Headers as they would introduce this part; only the MIME ones are known without the raw message."""
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


def email_body(row: EmailRow, parts: Sequence[PartRow]) -> EmailBody:
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
