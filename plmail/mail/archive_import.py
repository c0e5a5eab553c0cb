"""Importing an mbox file or a Maildir into a local archive account, through the same pipeline as sync.

Resumable by construction: a message whose bytes are already stored in the account (same SHA-256)
is counted as a duplicate and not stored again, so running an interrupted import again finishes it.
One bad message costs only itself, as on the IMAP path: one that cannot be parsed or stored is skipped with
its reason (kept in ingest_skip and in the report), the rest of its batch is stored.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from plmail.db.database import Database
from plmail.db.repos.accounts import AccountRepository
from plmail.db.repos.changes import ChangeLogRepository
from plmail.db.repos.ingest import IngestRepository
from plmail.db.repos.labels import LabelRepository
from plmail.db.repos.threads import ThreadRepository
from plmail.domain.enums import LabelRole, ProviderKind
from plmail.domain.errors import ValidationError
from plmail.domain.ingest import IngestedMessage, SkippedMessage
from plmail.domain.messages import ParsedMessage
from plmail.domain.models import User
from plmail.mail.batching import bounded_runs
from plmail.mail.changes import MailChangeRecorder, StateManager
from plmail.mail.labels import LabelResolver
from plmail.mail.mailfiles import ArchivedMessage, archive_size, is_maildir, read_maildir, read_mbox
from plmail.mail.mime import parse_mime
from plmail.mail.pipeline import PostIngestPipeline
from plmail.mail.search_index import SearchIndexer

log = logging.getLogger(__name__)

DEFAULT_ACCOUNT_NAME = "Imported mail"
DEFAULT_BATCH = 500
# Google Takeout names its system labels in X-Gmail-Labels; these map to our roles.
_TAKEOUT_ROLES = {"Inbox": LabelRole.INBOX, "Sent": LabelRole.SENT, "Drafts": LabelRole.DRAFTS,
                  "Spam": LabelRole.SPAM, "Trash": LabelRole.TRASH, "Archived": LabelRole.ARCHIVE}
_TAKEOUT_CATEGORIES = {"Category Personal": "CATEGORY_PERSONAL", "Category Social": "CATEGORY_SOCIAL",
                       "Category Promotions": "CATEGORY_PROMOTIONS", "Category Updates": "CATEGORY_UPDATES",
                       "Category Forums": "CATEGORY_FORUMS"}
_TAKEOUT_STATES = {"Unread", "Opened", "Starred", "Important", "IMAP_$NotJunk", "IMAP_NotJunk", "IMAP_Junk"}

Progress = Callable[[int, int, int], None]  # (bytes read, bytes total, messages read)


@dataclass(frozen=True, slots=True)
class ImportReport:
    imported: int
    duplicates: int
    skipped: int
    read: int
    seconds: float
    account_id: int
    noted: int = 0  # stored with a note of what was not read (too deep, too many parts, huge headers)
    reasons: tuple[SkippedMessage, ...] = ()  # why each skipped message was skipped


class ArchiveImporter:
    def __init__(self, db: Database, pipeline: PostIngestPipeline) -> None:
        self.db = db
        self.pipeline = pipeline
        self.accounts = AccountRepository(db)
        self.labels = LabelRepository(db)
        self.ingest_repo = IngestRepository(db)
        self.threads = ThreadRepository(db)
        self.resolver = LabelResolver(db)
        self.search_index = SearchIndexer(db)

    async def import_path(
        self,
        user: User,
        path: Path,
        *,
        account_name: str | None = None,
        label_name: str | None = None,
        batch_size: int = DEFAULT_BATCH,
        progress: Progress | None = None,
    ) -> ImportReport:
        is_folder, total = await asyncio.to_thread(_inspect, path)
        started = time.monotonic()
        name = account_name or DEFAULT_ACCOUNT_NAME
        account_id = await self.accounts.find_by_name(user.id, ProviderKind.LOCAL, name)
        if account_id is None:
            account_id = await self.accounts.create(
                user_id=user.id, provider_kind=ProviderKind.LOCAL, name=name, email=user.email
            )
        folder_label = await self.resolver.label(user.id, (label_name or _default_label(path, is_folder)).split("/"))
        roles = await self.labels.role_ids(user.id)
        for label_id in {folder_label, *roles.values()}:
            await self.resolver.bind(label_id, account_id)  # JMAP clients see labels through bindings
        chunks = _chunks(read_maildir(path) if is_folder else read_mbox(path), batch_size)
        imported = duplicates = read = noted = 0
        skipped: list[SkippedMessage] = []
        # Reading and parsing the next chunk happens in a thread while the database stores this one:
        # parsing is Python work and storing is PostgreSQL work, and the machine has more than one core.
        pending = asyncio.create_task(asyncio.to_thread(_read_and_parse, chunks))
        while True:
            chunk, unreadable = await pending
            if not chunk and not unreadable:
                break
            pending = asyncio.create_task(asyncio.to_thread(_read_and_parse, chunks))
            read += len(chunk) + len(unreadable)
            for item, reason in unreadable:
                await self.ingest_repo.record_skip(account_id, item.source_ref, reason,
                                                   hashlib.sha256(item.raw).hexdigest())
                skipped.append(SkippedMessage(account_id, item.source_ref, reason))
            fresh, repeated = await self._split_known(account_id, chunk)
            duplicates += len(repeated)
            await self._label_repeats(account_id, repeated, folder_label)
            batch = [await self._to_ingest(user, account_id, item, folder_label, roles) for item in fresh]
            if batch:
                outcome = await self.pipeline.ingest_each_if_needed(batch)
                imported += outcome.stored
                duplicates += outcome.duplicates
                skipped.extend(outcome.skipped)
                refused = {s.source_ref for s in outcome.skipped}
                noted += sum(1 for m in batch if m.parsed.cut_note and m.source_ref not in refused)
            if progress is not None:
                progress(max([i.position for i, _ in chunk] + [i.position for i, _ in unreadable]), total, read)
        # Its pages were stored without search vectors (an archive account is always importing); an import ends
        # with its mail searchable, the vectors computed in bulk.
        await self.search_index.catch_up(float("inf"), account_id=account_id)
        return ImportReport(imported, duplicates, len(skipped), read, time.monotonic() - started, account_id,
                            noted, tuple(skipped))

    async def _split_known(
        self, account_id: int, chunk: list[_Parsed]
    ) -> tuple[list[_Parsed], list[int]]:
        """New messages of the chunk, and the stored ids of those already imported (also within the chunk)."""
        known = await self.ingest_repo.known_content_hashes(
            account_id, sorted({parsed.content_hash for _, parsed in chunk}))
        fresh: list[_Parsed] = []
        repeated: list[int] = []
        seen_here: set[str] = set()
        for item in chunk:
            digest = item[1].content_hash
            if digest in known:
                repeated.append(known[digest])
            elif digest in seen_here:
                repeated.append(-1)  # a copy within this chunk: nothing stored yet to relabel
            else:
                seen_here.add(digest)
                fresh.append(item)
        return fresh, repeated

    async def _label_repeats(self, account_id: int, message_ids: list[int], label_id: int) -> None:
        """A message met again in another folder of the archive gains that folder's label."""
        ids = sorted({i for i in message_ids if i > 0})
        if not ids:
            return
        state = StateManager(ChangeLogRepository(self.db))
        recorder = MailChangeRecorder(state)
        async with self.db.transaction():
            added = await self.ingest_repo.add_label_where_missing(ids, label_id)
            if not added:
                return
            for message_id, thread_id in added:
                recorder.email_changed(account_id, message_id, thread_id=thread_id)
            await self.threads.sync_labels([t for _, t in added if t is not None])
            await state.write()
            await state.announce()

    async def _to_ingest(
        self, user: User, account_id: int, parsed_item: _Parsed, folder_label: int, roles: dict[LabelRole, int]
    ) -> IngestedMessage:
        item, parsed = parsed_item
        label_ids = [folder_label]
        categories: list[str] = []
        for name in item.gmail_labels:
            if name in _TAKEOUT_ROLES:
                label_ids.append(roles[_TAKEOUT_ROLES[name]])
            elif name in _TAKEOUT_CATEGORIES:
                categories.append(_TAKEOUT_CATEGORIES[name])
            elif name not in _TAKEOUT_STATES and not name.startswith("IMAP_"):
                label_id = await self.resolver.label(user.id, name.split("/"))
                await self.resolver.bind(label_id, account_id)
                label_ids.append(label_id)
        # Old archives imported as unread would bury the inbox; unread only when the archive says so.
        seen = True if item.seen is None else item.seen
        return IngestedMessage(
            account_id=account_id,
            parsed=parsed,
            raw=item.raw,
            seen=seen,
            starred=bool(item.starred),
            is_draft="Drafts" in item.gmail_labels,
            label_ids=tuple(dict.fromkeys(label_ids)),
            provider_labels=tuple(categories) if item.gmail_labels else None,
            source_ref=item.source_ref,
        )


def _inspect(path: Path) -> tuple[bool, int]:
    """Whether the archive is a Maildir, and its size; refuses what is neither an mbox nor a Maildir."""
    if not path.exists():
        raise ValidationError(f"{path} does not exist.")
    if path.is_dir() and not is_maildir(path):
        raise ValidationError(f"{path} is a directory but not a Maildir (it has no cur/ folder).")
    return path.is_dir(), archive_size(path)


def _default_label(path: Path, is_folder: bool) -> str:
    name = path.name if is_folder else path.stem
    return name.removesuffix(".mbox") or "Imported"


_Parsed = tuple[ArchivedMessage, ParsedMessage]


def _read_and_parse(chunks: Iterator[list[ArchivedMessage]]) -> tuple[list[_Parsed], list[tuple[ArchivedMessage, str]]]:
    """The next chunk of the archive, parsed, and the messages that could not be (with why); empty at the end."""
    parsed: list[_Parsed] = []
    unreadable: list[tuple[ArchivedMessage, str]] = []
    for item in next(chunks, []):
        try:
            parsed.append((item, parse_mime(item.raw)))
        except Exception as exc:  # the parser promises not to raise; if it does, only this message pays
            log.exception("could not parse %s", item.source_ref)
            unreadable.append((item, f"parse: {type(exc).__name__}: {exc}"))
    return parsed, unreadable


def _chunks(items: Iterable[ArchivedMessage], size: int) -> Iterator[list[ArchivedMessage]]:
    """Runs of at most `size` messages and RAW_BATCH_BYTES: a Takeout mbox is where years of attachments sit,
    and a chunk is held whole, twice over while the next one is read."""
    return bounded_runs(items, lambda item: len(item.raw), count=size)
