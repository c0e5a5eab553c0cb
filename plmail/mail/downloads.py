"""Blobs: what a blob id names (for JMAP's download and for the web's attachments), and uploads.

`m-<message>` is the original message, `p-<part>` a stored part, `t-`/`h-<message>` the plain and the
sanitised HTML body, `u-<sha256>` an upload. Every lookup goes through the account, and the account
through the principal, so a blob of someone else's account is simply not found.
"""

from __future__ import annotations

import asyncio
import email
import logging
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import Message
from email.policy import compat32

from plmail.db.database import Database
from plmail.domain.errors import LimitError, NotFoundError
from plmail.domain.ids import parse_id
from plmail.domain.mailstore import MailScope, PartRow, Upload
from plmail.mail.blobs import BlobStore, RawMessageResolver
from plmail.mail.charsets import decode_text
from plmail.mail.repos.jmap_blobs import JmapBlobRepository
from plmail.mail.sanitizer import sanitize_html
from plmail.mail.structure import section, split_blob

log = logging.getLogger(__name__)

HEADER_BLOCK_LIMIT = 256 * 1024
MAX_CONCURRENT_UPLOADS = 4  # per user and process
# An upload no email names by then is removed (the hourly prune job; a draft keeps its own copy of the bytes).
UPLOAD_LIFETIME = timedelta(hours=24)
# What one user's uploads may hold at once: 8 uploads of 45 MB were accepted in 9 s and kept for a week.
MAX_PENDING_UPLOADS = 500 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class BlobContent:
    data: bytes
    content_type: str
    name: str


def _mime_part(raw: bytes, path: str) -> bytes:
    """The decoded content of the MIME part at `path` ("2.1"), for parts stored only as a stub."""
    node: Message = email.message_from_bytes(raw, policy=compat32)
    for step in path.split("."):
        children = node.get_payload() if node.is_multipart() else None
        if not isinstance(children, list):
            if step == "1":
                continue  # a single-part message is its own part 1
            raise NotFoundError("The part is not in the original message.")
        index = int(step) - 1 if step.isdigit() else -1
        if not 0 <= index < len(children):
            raise NotFoundError("The part is not in the original message.")
        child = children[index]
        if not isinstance(child, Message):
            raise NotFoundError("The part is not in the original message.")
        node = child
    if node.get_content_type() == "message/rfc822":
        inner = node.get_payload()
        if isinstance(inner, list) and inner and isinstance(inner[0], Message):
            return inner[0].as_bytes(policy=compat32)
    payload = node.get_payload(decode=True)
    return payload if isinstance(payload, bytes) else b""


class BlobService:
    def __init__(self, db: Database, store: BlobStore, raw_messages: RawMessageResolver) -> None:
        self.repo = JmapBlobRepository(db)
        self.store = store
        self.raw_messages = raw_messages
        self._uploading: Counter[int] = Counter()

    async def raw_message(self, account_id: int | Sequence[int], message_id: int) -> tuple[bytes, str]:
        """The original of a message of the account (or of any of the accounts)."""
        accounts = [account_id] if isinstance(account_id, int) else list(account_id)
        source = await self.repo.message_source(accounts, message_id)
        if source is None:
            raise NotFoundError("No such message.")

        async def remember(digest: str) -> None:
            await self.repo.remember_raw(message_id, digest)

        data = await self.raw_messages.load(raw_path=source.raw_path, account_id=source.account_id,
                                            message_id=message_id, kind=source.provider_kind, remember=remember)
        return data, source.subject

    async def header_block(self, digest: str) -> bytes | None:
        """The start of a stored original, enough for its header block; None when it is not stored."""
        try:
            return await self.store.head(digest, HEADER_BLOCK_LIMIT)
        except (OSError, ValueError):
            return None

    async def part_content(self, account_id: int | Sequence[int], part: PartRow) -> bytes:
        if part.sha256:
            return await self.store.get(part.sha256)
        raw, _ = await self.raw_message(account_id, part.message_id)
        return await asyncio.to_thread(_mime_part, raw, part.path)

    async def download(self, user_id: int, scope: MailScope, blob_id: str) -> BlobContent:
        """The blob; a part of a message blob (`m-42x1_2`, an attached message's `p-17x2`) is cut from it."""
        base, sections = split_blob(blob_id)
        content = await self._blob(user_id, scope, base)
        owner = (parse_id(base.partition("-")[2]) or 0) if base.startswith("m-") else 0
        for part_id in sections:
            if not part_id or not all(s.isdigit() for s in part_id.split(".")):
                raise NotFoundError("No such blob.")
            found = await asyncio.to_thread(section, content.data, part_id)
            data = found.data
            if found.type == "text/html":  # HTML leaves plmail only sanitised, like the body
                data = sanitize_html(decode_text(data, found.charset), message_id=owner).html.encode("utf-8")
            media = found.type + ("; charset=utf-8" if found.type == "text/html" else
                                  f"; charset={found.charset}" if found.charset else "")
            content = BlobContent(data, media, found.name or f"part-{part_id}")
        return content

    async def _blob(self, user_id: int, scope: MailScope, blob_id: str) -> BlobContent:
        kind, _, key = blob_id.partition("-")
        if kind == "u":
            since = datetime.now(UTC) - UPLOAD_LIFETIME  # expired the moment its day is over, pruned nightly
            upload = await self.repo.upload(user_id, None if scope.unified else scope.account_id, key, since) \
                if len(key) == 64 else None
            if upload is None:
                raise NotFoundError("No such blob.")
            return BlobContent(await self.store.get(upload.sha256), upload.content_type, "upload")
        number = parse_id(key)
        if number is None:
            raise NotFoundError("No such blob.")
        accounts = scope.account_ids
        if kind == "m":
            data, subject = await self.raw_message(accounts, number)
            return BlobContent(data, "message/rfc822", f"{subject.strip() or 'message'}.eml")
        if kind == "p":
            part = await self.repo.part(accounts, number)
            if part is None:
                raise NotFoundError("No such blob.")
            return BlobContent(await self.part_content(accounts, part), part.content_type,
                               part.filename or f"part-{part.id}")
        if kind in ("t", "h"):
            bodies = await self.repo.bodies(accounts, number)
            if bodies is None or bodies[0 if kind == "t" else 1] is None:
                raise NotFoundError("No such blob.")
            text = bodies[0 if kind == "t" else 1] or ""
            media = "text/plain; charset=utf-8" if kind == "t" else "text/html; charset=utf-8"
            return BlobContent(text.encode("utf-8"), media, f"{bodies[2].strip() or 'message'}"
                               + (".txt" if kind == "t" else ".html"))
        raise NotFoundError("No such blob.")

    @asynccontextmanager
    async def upload_slot(self, user_id: int) -> AsyncIterator[None]:
        if self._uploading[user_id] >= MAX_CONCURRENT_UPLOADS:
            raise LimitError("Too many uploads at once.", limit="maxConcurrentUpload")
        self._uploading[user_id] += 1
        try:
            yield
        finally:
            self._uploading[user_id] -= 1
            if self._uploading[user_id] <= 0:
                del self._uploading[user_id]

    async def pending_uploads(self, user_id: int, now: datetime | None = None) -> int:
        """Octets the user's unexpired uploads hold: what the upload quota counts."""
        return await self.repo.pending_upload_bytes(user_id, (now or datetime.now(UTC)) - UPLOAD_LIFETIME)

    async def upload(self, user_id: int, scope: MailScope, data: bytes, content_type: str) -> Upload:
        if await self.pending_uploads(user_id) + len(data) > MAX_PENDING_UPLOADS:
            raise LimitError(f"Your uploads from the last 24 hours hold {MAX_PENDING_UPLOADS // (1024 * 1024)} MB "
                             "already; send or discard what you uploaded, or wait until it expires.",
                             limit="overQuota")
        digest = await self.store.put(data)
        upload = Upload(digest, content_type, len(data))
        await self.repo.record_upload(user_id, None if scope.unified else scope.account_id, upload)
        return upload

    async def uploaded(self, user_id: int, scope: MailScope, blob_id: str) -> bytes | None:
        """The bytes of any blob the account can reach (an upload, a part, a raw message), or None."""
        try:
            return (await self.download(user_id, scope, blob_id)).data
        except NotFoundError:
            return None

    async def prune_uploads(self, older_than: datetime) -> int:
        return await self.store.discard(await self.repo.prune_uploads(older_than))

    async def prune_expired_uploads(self, now: datetime | None = None) -> int:
        return await self.prune_uploads((now or datetime.now(UTC)) - UPLOAD_LIFETIME)
