"""From fetched IMAP messages to rows: parse, re-point known mail, hand the rest to the pipeline, and keep
count of messages that would not store.

Shared by the sync (new mail) and the first import (history), so both treat a failing message alike: it
costs only itself, it is tried again, and after `MAX_ATTEMPTS` it is given up and noted with its reason.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from plmail.db.database import Database
from plmail.db.repos.changes import ChangeLogRepository
from plmail.db.repos.gmail_messages import GmailMessageRepository
from plmail.db.repos.imap_messages import AdoptionCandidate, GmailCopy, ImapMessageRepository, ServerFlags
from plmail.db.repos.ingest import IngestRepository
from plmail.db.repos.threads import ThreadRepository
from plmail.domain.ingest import IngestedMessage
from plmail.mail.changes import MailChangeRecorder, StateManager
from plmail.mail.ingest import parse_message
from plmail.mail.parse_worker import ParseJob, ParserProcess, ParserUnavailable
from plmail.mail.pipeline import PostIngestPipeline, Rehomed
from plmail.mail.rows import PreparedAhead, RowFields
from plmail.mail.settle import announce, settle_deleted
from plmail.providers.gmailify import claim_note, may_be_claimed, named_addresses
from plmail.providers.imap.models import FetchedMessage
from plmail.providers.imap.refs import imap_ref
from plmail.providers.imap.repos.mailboxes import MailboxRow

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 5


def source_ref(path: str, uid: int) -> str:
    return f"{path}:{uid}"


def uid_of(ref: str) -> int | None:
    tail = ref.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else None


@dataclass(frozen=True, slots=True)
class ParsedPage:
    """Fetched messages read into what the pipeline takes; the ones the parser choked on, with the reason; and,
    for a page read ahead, their rows' fields worked out ahead (see `plmail.mail.rows`)."""

    parsed: tuple[tuple[FetchedMessage, IngestedMessage], ...]
    unreadable: tuple[tuple[FetchedMessage, str], ...] = ()
    ahead: PreparedAhead | None = None


@dataclass(frozen=True, slots=True)
class StoreOutcome:
    done: frozenset[int]  # UIDs now stored, matched to a known row, already there, or given up
    failed: frozenset[int]  # UIDs to try again
    stored: int = 0
    adopted: int = 0


class FolderIngest:
    def __init__(self, db: Database, pipeline: PostIngestPipeline, parser: ParserProcess | None = None) -> None:
        self.db = db
        self.pipeline = pipeline
        self.parser = parser
        self.messages = ImapMessageRepository(db)
        self.threads = ThreadRepository(db)

    async def parse(self, account_id: int, folder: MailboxRow, fetched: Sequence[FetchedMessage], *,
                    yielding: bool = False) -> ParsedPage:
        """With `yielding` (a page read ahead, parsed while the page before it is stored), the parse and the
        rows' fields are worked out in the parsing process when there is one and the machine has room for it
        (`mail.parse_worker`), else here with the event loop getting a turn after every message."""
        if yielding and self.parser is not None and self.parser.wanted():
            try:
                return await self._parse_elsewhere(self.parser, account_id, folder, fetched)
            except ParserUnavailable as exc:
                log.warning("parsing in this process instead: %s", exc)
        parsed: list[tuple[FetchedMessage, IngestedMessage]] = []
        unreadable: list[tuple[FetchedMessage, str]] = []
        for message in fetched:
            try:
                parsed.append((message, self._parse(account_id, folder, message)))
            except Exception as exc:  # the parser promises not to raise; if it does, only this message pays
                log.exception("could not parse %s of account %s", source_ref(folder.full_path, message.uid),
                              account_id)
                unreadable.append((message, f"parse: {type(exc).__name__}: {exc}"))
            if yielding:
                await asyncio.sleep(0)
        ahead = await self.pipeline.prepare_ahead([ingested for _, ingested in parsed]) if yielding else None
        return ParsedPage(tuple(parsed), tuple(unreadable), ahead)

    async def _parse_elsewhere(self, parser: ParserProcess, account_id: int, folder: MailboxRow,
                               fetched: Sequence[FetchedMessage]) -> ParsedPage:
        ids = await self.pipeline.repo.allocate_message_ids(len(fetched))
        jobs = [ParseJob(message.raw, message_id, self._facts(account_id, folder, message))
                for message, message_id in zip(fetched, ids, strict=True)]
        parsed: list[tuple[FetchedMessage, IngestedMessage]] = []
        unreadable: list[tuple[FetchedMessage, str]] = []
        fields: list[RowFields | None] = []
        for message, job, result in zip(fetched, jobs, await parser.parse_each(jobs), strict=True):
            if result.parsed is None:
                log.error("could not parse %s of account %s: %s", source_ref(folder.full_path, message.uid),
                          account_id, result.error)
                unreadable.append((message, result.error or "parse: no result"))
                continue
            parsed.append((message, job.ingested(result.parsed)))
            fields.append(result.fields)
        messages = tuple(ingested for _, ingested in parsed)
        return ParsedPage(tuple(parsed), tuple(unreadable), PreparedAhead(messages, tuple(fields)))

    async def store(self, account_id: int, folder: MailboxRow, fetched: Sequence[FetchedMessage],
                    *, listed_at: datetime, page: ParsedPage | None = None, refetchable: bool = False
                    ) -> StoreOutcome:
        """Store fetched messages; `page` is their parse when it was done ahead of time. `refetchable`: a page of the
        first import, which the server still holds and the folder's floor fetches again should it be lost, so its
        commit need not wait for the disk."""
        if not fetched:
            return StoreOutcome(frozenset(), frozenset())
        if page is None:
            page = await self.parse(account_id, folder, fetched)
        failed: set[int] = set()
        for message, reason in page.unreadable:
            await self.messages.record_skip(account_id, source_ref(folder.full_path, message.uid), reason,
                                            hashlib.sha256(message.raw).hexdigest())
            failed.add(message.uid)
        parsed = page.parsed
        adopted = await self._adopt(account_id, folder, parsed, listed_at)
        adopted |= await self._claim_gmailified(account_id, folder, [p for p in parsed if p[0].uid not in adopted])
        rest = [ingested for message, ingested in parsed if message.uid not in adopted]
        stored, refused = await self.pipeline.ingest_isolating_failures(rest, ahead=page.ahead, refetchable=refetchable)
        failed |= {uid for uid in (uid_of(ref) for ref in refused) if uid is not None}
        retry = await self._count_attempts(account_id, folder, [m.uid for m in fetched], failed)
        return StoreOutcome(frozenset(m.uid for m in fetched) - retry, frozenset(retry), stored, len(adopted))

    def _parse(self, account_id: int, folder: MailboxRow, message: FetchedMessage) -> IngestedMessage:
        return parse_message(message.raw, **self._facts(account_id, folder, message))

    @staticmethod
    def _facts(account_id: int, folder: MailboxRow, message: FetchedMessage) -> dict[str, Any]:
        """What the server says of a message, as `IngestedMessage` fields."""
        return {
            "account_id": account_id, "ref": imap_ref(folder.id, message.uid), "received_at": message.internaldate,
            "flags": tuple(sorted(message.flags)), "seen": "\\Seen" in message.flags,
            "starred": "\\Flagged" in message.flags, "is_draft": "\\Draft" in message.flags,
            "label_ids": (folder.label_id,) if folder.label_id is not None else (),
            "source_ref": source_ref(folder.full_path, message.uid),
        }

    async def _count_attempts(self, account_id: int, folder: MailboxRow, uids: Sequence[int], failed: set[int]
                              ) -> set[int]:
        """Failed messages are tried again until their fifth failure, then given up with a note; a message
        that stored after earlier failures loses its notes."""
        refs = {source_ref(folder.full_path, uid): uid for uid in uids}
        attempts = await self.messages.skip_attempts(account_id, list(refs))
        await self.messages.forget_skips(
            account_id, [ref for ref, (_, given_up) in attempts.items() if refs[ref] not in failed and not given_up])
        retry: set[int] = set()
        for uid in failed:
            ref = source_ref(folder.full_path, uid)
            count, given_up = attempts.get(ref, (1, False))
            if given_up:
                continue
            if count >= MAX_ATTEMPTS:
                await self.messages.give_up(account_id, ref, count)
            else:
                retry.add(uid)
        return retry

    async def _adopt(self, account_id: int, folder: MailboxRow, parsed: Sequence[tuple[FetchedMessage,
                     IngestedMessage]], listed_at: datetime) -> set[int]:
        """Messages the account already holds as vanished rows (moved by another client, or a renumbered
        folder) are re-pointed instead of stored again: same id, same thread, the user's labels kept."""
        if not parsed or not await self.messages.has_vanished(account_id):
            return set()
        hashes = [ingested.parsed.content_hash for _, ingested in parsed]
        message_ids = [i.parsed.message_id for _, i in parsed if i.parsed.message_id]
        candidates = await self.messages.adoption_candidates(account_id, hashes, message_ids)
        if not candidates:
            return set()
        used: set[int] = set()
        matches: list[tuple[FetchedMessage, AdoptionCandidate]] = []
        for message, ingested in parsed:
            match = _best(candidates, used, folder.id, content_hash=ingested.parsed.content_hash,
                          message_id=ingested.parsed.message_id)
            if match is not None:
                used.add(match.id)
                matches.append((message, match))
        if not matches:
            return set()
        async with self.db.transaction():
            for message, candidate in matches:
                await self.messages.repoint(candidate, mailbox_id=folder.id, uid=message.uid,
                                            server=ServerFlags(message.uid, tuple(sorted(message.flags))),
                                            label_id=folder.label_id, listed_at=listed_at)
            threads = {c.thread_id for _, c in matches if c.thread_id is not None}
            await self.threads.recompute(sorted(threads))
            labels = {c.old_label_id for _, c in matches if c.old_label_id is not None}
            if folder.label_id is not None:
                labels.add(folder.label_id)
            await announce(self.db, account_id, {c.id: c.thread_id for _, c in matches}, sorted(labels))
        return {message.uid for message, _ in matches}

    async def _claim_gmailified(self, account_id: int, folder: MailboxRow,
                                parsed: Sequence[tuple[FetchedMessage, IngestedMessage]]) -> set[int]:
        """Gmailify from this side: a message a Gmail account of the same user fetched from this account (it is
        named in the headers) is this account's, whichever synced first. The Gmail row is re-pointed here, not
        stored twice and not run through the pipeline again: same id, read state and the user's own labels, the
        steps' results kept; the Gmail account notes the id so its listing does not fetch it again."""
        if not parsed:
            return set()
        facts = await self.pipeline.accounts.facts(account_id)
        if facts is None:
            return set()
        # The Gmail rows first: most users have none, and then no message's addresses need reading.
        gmail_rows = await self.messages.gmail_copies(
            facts.user_id, sorted({i.parsed.message_id for _, i in parsed if i.parsed.message_id}))
        if not gmail_rows:
            return set()
        copied = {copy.rfc_message_id for copy in gmail_rows}
        mine = {ingested.parsed.message_id: (message, ingested) for message, ingested in parsed
                if ingested.parsed.message_id in copied and named_addresses(ingested.parsed) & facts.addresses}
        chosen: dict[str, GmailCopy] = {}
        for copy in gmail_rows:
            if copy.rfc_message_id in mine and copy.rfc_message_id not in chosen and may_be_claimed(
                    copy.provider_labels):
                chosen[copy.rfc_message_id] = copy
        if not chosen:
            return set()
        state = StateManager(ChangeLogRepository(self.db))
        recorder = MailChangeRecorder(state)
        gmail = GmailMessageRepository(self.db)
        async with self.db.transaction():
            taken = await self.messages.take_over(account_id, folder.id, folder.label_id, [
                (copy.id, ServerFlags(mine[rfc][0].uid, tuple(sorted(mine[rfc][0].flags))))
                for rfc, copy in chosen.items()])
            for gmail_account in sorted({copy.account_id for copy in chosen.values()}):
                copies = [(rfc, c) for rfc, c in chosen.items() if c.account_id == gmail_account]
                await gmail.note_skipped(gmail_account, [
                    claim_note(c.gmail_id, account_id, mine[rfc][1].parsed, thread_key=c.gmail_thread_key,
                               gmail_labels=c.provider_labels) for rfc, c in copies])
                left = [t for t in taken if t.account_id == gmail_account]
                await settle_deleted(self.db, gmail_account, {t.id: t.thread_id for t in left},
                                     {label for t in left for label in t.labels})
            await self.pipeline.rehome(account_id, [Rehomed(copy.id, mine[rfc][1], copy.ai_category)
                                                    for rfc, copy in chosen.items()], recorder)
            if folder.label_id is not None:
                recorder.mailboxes_changed(account_id, await IngestRepository(self.db).bindings_for(
                    account_id, [folder.label_id]))
            await state.write()
            await state.announce()
        return {mine[rfc][0].uid for rfc in chosen}


def _best(candidates: Sequence[AdoptionCandidate], used: set[int], mailbox_id: int, *, content_hash: str,
          message_id: str | None) -> AdoptionCandidate | None:
    """The same bytes first, then the same Message-ID; a row that vanished from this very folder first."""
    for matches in (
        [c for c in candidates if c.content_hash == content_hash],
        [c for c in candidates if message_id and c.rfc_message_id == message_id],
    ):
        free = [c for c in matches if c.id not in used]
        if free:
            free.sort(key=lambda c: (c.mailbox_id != mailbox_id, c.id))
            return free[0]
    return None
