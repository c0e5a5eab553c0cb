"""Reading emails (JMAP's Email/get): rows, their mailboxes, parts and body values, in few queries."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from plmail.db.database import Database
from plmail.db.repos.jmap_email import JmapEmailRepository
from plmail.db.repos.jmap_mailboxes import JmapMailboxRepository
from plmail.domain.mailstore import EmailRow, PartRow
from plmail.mail.bodies import BodyPart, EmailBody, email_body, truncate
from plmail.mail.charsets import decode_text
from plmail.mail.downloads import BlobService
from plmail.mail.headers import raw_header_pairs, stored_headers
from plmail.mail.sanitizer import sanitize_html

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
        self.mailboxes = JmapMailboxRepository(db)
        self.blobs = blobs

    async def count(self, account_id: int) -> int:
        return await self.repo.count(account_id)

    async def all_ids(self, account_id: int, limit: int) -> list[int]:
        return await self.repo.all_ids(account_id, limit)

    async def flags(self, account_id: int, ids: Sequence[int]) -> dict[int, tuple[str, ...]]:
        """The provider flags stored on each email (the keywords beyond seen and flagged come from them)."""
        return await self.repo.flags(account_id, ids)

    async def thread_ids(self, account_id: int, limit: int) -> list[int]:
        return await self.repo.thread_ids(account_id, limit)

    async def thread_emails(self, account_id: int, thread_ids: Sequence[int]
                            ) -> dict[int, tuple[list[int], str | None]]:
        """thread id -> (email ids oldest first, the thread's category)."""
        return await self.repo.thread_emails(account_id, thread_ids)

    async def get(self, account_id: int, ids: Sequence[int], spec: ReadSpec) -> dict[int, EmailRecord]:
        rows = await self.repo.emails(account_id, ids, headers=spec.wants_headers, bodies=spec.wants_values)
        found = [r.id for r in rows]
        mailboxes: dict[int, list[int]] = {}
        if "mailboxIds" in spec.properties and found:
            labels = await self.repo.labels(found)
            binding_of = await self.mailboxes.bindings_of_labels(account_id)
            mailboxes = {m: sorted(binding_of[label] for label in ls if label in binding_of)
                         for m, ls in labels.items()}
        parts_of: dict[int, list[PartRow]] = {}
        if spec.wants_parts and found:
            for part in await self.repo.parts(found):
                parts_of.setdefault(part.message_id, []).append(part)
        records: dict[int, EmailRecord] = {}
        for row in rows:
            body = email_body(row, parts_of.get(row.id, [])) if spec.wants_parts else None
            values = await self._values(account_id, row, body, spec) if body is not None and spec.wants_values else {}
            headers = await self._headers(row) if spec.wants_headers else None
            records[row.id] = EmailRecord(row, tuple(mailboxes.get(row.id, ())), body, values, headers)
        return records

    async def _headers(self, row: EmailRow) -> list[tuple[str, str]]:
        """The stored JSON keeps each name's values in order but not the order across names (jsonb sorts its
        keys), so the original is read when it is here; a lazily fetched original is not fetched for this."""
        block = await self.blobs.header_block(row.raw_path) if row.raw_path else None
        return raw_header_pairs(block) if block else stored_headers(row.headers)

    async def _values(self, account_id: int, row: EmailRow, body: EmailBody, spec: ReadSpec
                      ) -> dict[str, BodyValue]:
        wanted: list[BodyPart] = []
        if spec.fetch_text or spec.fetch_all:
            wanted += body.text_body
        if spec.fetch_html or spec.fetch_all:
            wanted += body.html_body
        if spec.fetch_all:
            wanted += [p for p in body.attachments if p.type.startswith("text/")]
        values: dict[str, BodyValue] = {}
        for part in wanted:
            if part.part_id is None or part.part_id in values:
                continue
            if part.part_id == "text":
                text = row.body_text or ""
            elif part.part_id == "html":
                text = row.body_html_safe or ""
            else:
                assert part.source is not None
                data = await self.blobs.part_content(account_id, part.source)
                text = await asyncio.to_thread(decode_text, data, part.charset)
                if part.type == "text/html":  # an HTML attachment goes out sanitised, like the body
                    text = sanitize_html(text, message_id=row.id).html
            value, cut = truncate(text, spec.max_body_bytes, html=part.type == "text/html")
            values[part.part_id] = BodyValue(value, cut)
        return values
