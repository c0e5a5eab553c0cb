"""Reading emails (JMAP's Email/get): rows, their mailboxes, parts and body values, in few queries."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from plmail.db.database import Database
from plmail.domain.errors import InvalidMessageError, PlmailError
from plmail.domain.mailstore import EmailRow, MailScope, PartRow
from plmail.mail.bodies import BodyPart, EmailBody, email_body, tree_body, truncate
from plmail.mail.charsets import decode_text
from plmail.mail.downloads import HEADER_BLOCK_LIMIT, BlobService
from plmail.mail.headers import raw_header_pairs, stored_headers
from plmail.mail.mime import parse_mime
from plmail.mail.repos.jmap_email import JmapEmailRepository
from plmail.mail.sanitizer import sanitize_html
from plmail.mail.structure import parts_of, section, tree_of

_HEADER_FIELD = re.compile(rb"[!-9;-~]+[ \t]*:")  # RFC 5322 §2.2: a field name, then a colon
PART_PROPERTIES = frozenset({"bodyStructure", "textBody", "htmlBody", "attachments", "bodyValues"})
HEADER_PROPERTIES = frozenset({"headers", "sender"})


@dataclass(frozen=True, slots=True)
class ReadSpec:
    """What to read of each email, already validated by the caller."""

    properties: tuple[str, ...]
    header_lines: bool = False  # some header is wanted beyond the properties (a header:… form)
    fetch_text: bool = False
    fetch_html: bool = False
    fetch_all: bool = False
    max_body_bytes: int = 0

    @property
    def wants_headers(self) -> bool:
        return bool(HEADER_PROPERTIES & set(self.properties)) or self.header_lines

    @property
    def wants_parts(self) -> bool:
        return bool(PART_PROPERTIES & set(self.properties))

    @property
    def wants_values(self) -> bool:
        return "bodyValues" in self.properties and (self.fetch_text or self.fetch_html or self.fetch_all)


@dataclass(frozen=True, slots=True)
class BodyValue:
    value: str
    truncated: bool


@dataclass(frozen=True, slots=True)
class EmailRecord:
    row: EmailRow
    mailbox_ids: tuple[int, ...]
    body: EmailBody | None
    values: dict[str, BodyValue] = field(default_factory=dict)
    headers: list[tuple[str, str]] | None = None  # from the original when it is stored, in its order


class EmailReader:
    def __init__(self, db: Database, blobs: BlobService) -> None:
        self.repo = JmapEmailRepository(db)
        self.blobs = blobs

    async def count(self, scope: MailScope) -> int:
        return await self.repo.count(scope.account_ids)

    async def all_ids(self, scope: MailScope, limit: int) -> list[int]:
        return await self.repo.all_ids(scope.account_ids, limit)

    async def flags(self, scope: MailScope, ids: Sequence[int]) -> dict[int, tuple[str, ...]]:
        """The provider flags stored on each email (the keywords beyond seen and flagged come from them)."""
        return await self.repo.flags(scope.account_ids, ids)

    async def thread_ids(self, scope: MailScope, limit: int) -> list[int]:
        return await self.repo.thread_ids(scope.account_ids, limit)

    async def thread_emails(self, scope: MailScope, thread_ids: Sequence[int]
                            ) -> dict[int, tuple[list[int], str | None]]:
        """thread id -> (email ids oldest first, the thread's category)."""
        return await self.repo.thread_emails(scope.account_ids, thread_ids)

    async def get(self, scope: MailScope, ids: Sequence[int], spec: ReadSpec) -> dict[int, EmailRecord]:
        records, _ = await self.get_checking_bindings(None, scope, ids, spec)
        return records

    async def get_checking_bindings(self, user_id: int | None, scope: MailScope, ids: Sequence[int], spec: ReadSpec
                                    ) -> tuple[dict[int, EmailRecord], bool]:
        """The records, and (with a user id, when Mailbox ids are asked for) whether some label of the user lacks a
        binding in the scope's accounts, told in the same statement: then the caller binds and reads again."""
        mailboxes: dict[int, tuple[int, ...]] = {}
        unbound = False
        if "mailboxIds" in spec.properties:
            with_mailboxes, unbound = await self.repo.emails_in_mailboxes(
                scope.account_ids, ids, unified=scope.unified, headers=spec.wants_headers, bodies=spec.wants_values,
                tree=spec.wants_parts, properties=spec.properties, unbound_of=user_id)
            rows = [row for row, _ in with_mailboxes]
            mailboxes = {row.id: boxes for row, boxes in with_mailboxes}
        else:
            rows = await self.repo.emails(scope.account_ids, ids, headers=spec.wants_headers,
                                          bodies=spec.wants_values, tree=spec.wants_parts, properties=spec.properties)
        found = [r.id for r in rows]
        parts_of: dict[int, list[PartRow]] = {}
        if spec.wants_parts and found:
            for part in await self.repo.parts(found):
                parts_of.setdefault(part.message_id, []).append(part)
        records: dict[int, EmailRecord] = {}
        for row in rows:
            body = email_body(row, parts_of.get(row.id, []), await self._tree(row)) if spec.wants_parts else None
            values = await self._values(row, body, spec) if body is not None and spec.wants_values else {}
            headers = await self._headers(row) if spec.wants_headers else None
            records[row.id] = EmailRecord(row, mailboxes.get(row.id, ()), body, values, headers)
        return records, unbound

    async def parse(self, user_id: int, scope: MailScope, blob_id: str, spec: ReadSpec) -> EmailRecord:
        """A blob that holds a message (an attached message/rfc822, an upload) read as an Email (RFC 8621 §4.9):
        NotFoundError when the blob is not the account's, InvalidMessageError when it is no message."""
        content = await self.blobs.download(user_id, scope, blob_id)
        raw = content.data
        if not _HEADER_FIELD.match(raw):
            raise InvalidMessageError("The blob is not a message: it does not start with a header field.")
        pairs = raw_header_pairs(raw[:HEADER_BLOCK_LIMIT])
        parsed = await asyncio.to_thread(parse_mime, raw)
        safe = sanitize_html(parsed.body_html, message_id=0).html if parsed.body_html is not None else None
        row = EmailRow(
            id=0, account_id=0, thread_id=None, size=len(raw), received_at=None, sent_at=parsed.sent_at,
            created_at=datetime.now(UTC), message_id=parsed.message_id, in_reply_to=parsed.in_reply_to,
            references=parsed.references, subject=parsed.subject, from_address=parsed.from_address,
            from_name=parsed.from_name, to=tuple(a.as_json() for a in parsed.to),
            cc=tuple(a.as_json() for a in parsed.cc), bcc=tuple(a.as_json() for a in parsed.bcc),
            reply_to=tuple(a.as_json() for a in parsed.reply_to), seen=False, starred=False, flags=(),
            has_attachments=parsed.has_attachments, preview=parsed.preview, category=None, raw_path=None,
            text_size=len(parsed.body_text.encode()) if parsed.body_text is not None else None,
            html_size=len(safe.encode()) if safe is not None else None, headers=dict(parsed.headers),
            body_text=parsed.body_text, body_html_safe=safe, mime_tree=parsed.mime_tree,
            has_subject=bool(parsed.subject) or any(name.lower() == "subject" for name, _ in pairs))
        body = tree_body(blob_id, parts_of(parsed.mime_tree)) if parsed.mime_tree is not None \
            else email_body(row, [])
        values = await self._values(row, body, spec, raw=raw) if spec.wants_values else {}
        return EmailRecord(row, (), body, values, pairs)

    async def _tree(self, row: EmailRow) -> dict[str, Any] | None:
        """The message's MIME tree; one stored before trees were kept is read from its stored original once
        (a lazily fetched original is not fetched for this: such a message shows its stored bodies)."""
        if row.mime_tree is not None or not row.raw_path:
            return row.mime_tree
        try:
            raw = await self.blobs.store.get(row.raw_path)
        except PlmailError:
            return None
        tree = await asyncio.to_thread(tree_of, raw)
        await self.repo.remember_tree(row.id, tree)
        return tree

    async def _headers(self, row: EmailRow) -> list[tuple[str, str]]:
        """The stored JSON keeps each name's values in order but not the order across names (jsonb sorts its
        keys), so the original is read when it is here; a lazily fetched original is not fetched for this."""
        block = await self.blobs.header_block(row.raw_path) if row.raw_path else None
        return raw_header_pairs(block) if block else stored_headers(row.headers)

    async def _values(self, row: EmailRow, body: EmailBody, spec: ReadSpec, *, raw: bytes | None = None
                      ) -> dict[str, BodyValue]:
        wanted: list[BodyPart] = []
        if spec.fetch_text:
            wanted += body.text_body
        if spec.fetch_html:
            wanted += body.html_body
        if spec.fetch_all:
            wanted += list(body.by_id.values())
        values: dict[str, BodyValue] = {}
        for part in wanted:
            if part.part_id is None or part.part_id in values or not part.type.startswith("text/"):
                continue
            if part.part_id == "text" or part.stored == "text":
                text = row.body_text or ""
            elif part.part_id == "html" or part.stored == "html":
                text = row.body_html_safe or ""
            else:
                if part.source is not None:
                    data = await self.blobs.part_content(row.account_id, part.source)
                else:
                    if raw is None:
                        raw, _ = await self.blobs.raw_message(row.account_id, row.id)
                    data = (await asyncio.to_thread(section, raw, part.part_id)).data
                text = await asyncio.to_thread(decode_text, data, part.charset)
                if part.type == "text/html":  # every HTML part goes out sanitised, like the body
                    text = sanitize_html(text, message_id=row.id).html
            # RFC 8621 §4.1.4: the value "with any CRLF replaced with a single LF", before maxBodyValueBytes cuts it
            value, cut = truncate(text.replace("\r\n", "\n"), spec.max_body_bytes, html=part.type == "text/html")
            values[part.part_id] = BodyValue(value, cut)
        return values
