"""From delta entries to rows, shared by the sync and the first import.

A message seen in a folder is where it is: attachment is exclusive and does not wait for the removal
half of a move, because on a private outlook.com mailbox the two halves need not carry the same id.
A removal only holds the message (on the account, `graph_removals`); whether it was deleted or moved is
judged once every folder has answered. A message that turns up under an unknown id while one with its
Message-ID is held is the same message moved under a new id, and its row is re-pointed, not stored twice.

A message that will not store costs only itself: the caller reads its page again, and after
`MAX_ATTEMPTS` failures it is given up and the folder goes on.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from plmail.db.database import Database
from plmail.db.repos.account_admin import AccountRecord
from plmail.db.repos.changes import ChangeLogRepository
from plmail.db.repos.gmail_messages import GmailMessageRepository
from plmail.db.repos.imap_messages import GmailCopy, ImapMessageRepository
from plmail.db.repos.ingest import IngestRepository
from plmail.db.repos.threads import DeletedMessage, ThreadRepository
from plmail.domain.ingest import IngestedMessage
from plmail.mail.changes import MailChangeRecorder, StateManager
from plmail.mail.labels import BindingHandle, LabelResolver
from plmail.mail.mime import message_ids
from plmail.mail.pipeline import PostIngestPipeline, Rehomed
from plmail.mail.settle import announce, settle_deleted
from plmail.providers.gmailify import claim_note, may_be_claimed, named_addresses
from plmail.providers.graph.client import GraphClient
from plmail.providers.graph.convert import ingested, source_ref
from plmail.providers.graph.errors import GraphNotFound
from plmail.providers.graph.folders import Folder
from plmail.providers.graph.models import RemoteMessage
from plmail.providers.graph.repos.messages import GraphMessageRepository, KnownMessage
from plmail.providers.graph.repos.state import GraphStateRepository

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 5
BATCH = 50


@dataclass(slots=True)
class StoreOutcome:
    stored: int = 0  # new rows
    matched: int = 0  # messages already stored (moved, re-flagged, or found again under a new id)
    retry: bool = False  # a message failed below its attempt limit: read this page or round again
    changed: set[int] = field(default_factory=set)  # stored messages whose state changed

    @property
    def touched(self) -> bool:
        return bool(self.stored or self.changed)


class GraphIngest:
    def __init__(self, db: Database, client: GraphClient, pipeline: PostIngestPipeline,
                 resolver: LabelResolver) -> None:
        self.db = db
        self.client = client
        self.pipeline = pipeline
        self.resolver = resolver
        self.repo = GraphMessageRepository(db)
        self.state = GraphStateRepository(db)
        self.threads = ThreadRepository(db)
        self.skips = IngestRepository(db)

    # -- removals -----------------------------------------------------------------------------------------

    async def hold_removals(self, record: AccountRecord, folder_id: str, removed: Sequence[str],
                            held: dict[str, str]) -> int:
        """Hold the removal of messages recorded in `folder_id`; one recorded elsewhere was seen there since
        and is not affected. Returns how many were held."""
        known = await self.repo.known(record.id, sorted(set(removed)))
        hold = {g: folder_id for g, k in known.items() if k.folder_id in (None, folder_id)}
        if hold:
            await self.state.hold_removals(record.id, hold)
            held.update(hold)
        return len(hold)

    async def judge_removals(self, record: AccountRecord, held: dict[str, str]) -> int:
        """Every folder has answered: a held message still recorded where it was removed from arrived in no
        other folder, and is deleted. Returns how many were."""
        if not held:
            return 0
        async with self.db.transaction():
            deleted = await self.repo.delete_removed(record.id, dict(held))
            await self._settle_deleted(record.id, deleted)
            await self.state.release_removals(record.id, sorted(held))
        held.clear()
        return len(deleted)

    async def _settle_deleted(self, account_id: int, deleted: Sequence[DeletedMessage]) -> None:
        await settle_deleted(self.db, account_id, {m.id: m.thread_id for m in deleted},
                             {label for m in deleted for label in m.labels})

    # -- messages seen in a folder ------------------------------------------------------------------------

    async def store(self, record: AccountRecord, folder: Folder, listed: Sequence[RemoteMessage],
                    held: dict[str, str], listed_at: datetime) -> StoreOutcome:
        outcome = StoreOutcome()
        messages = list({m.id: m for m in listed}.values())
        if not messages:
            return outcome
        categories = await self._category_labels(record, messages)
        known = await self.repo.known(record.id, [m.id for m in messages])
        unknown = [m for m in messages if m.id not in known]
        adopted = await self._adopt(record, unknown, held)
        known.update(adopted)
        seen = [(m, known[m.id]) for m in messages if m.id in known]
        outcome.matched = len(seen)
        outcome.changed |= await self._update(record, folder, seen, categories, listed_at)
        released = [m.id for m in messages if m.id in held]
        if released:
            await self.state.release_removals(record.id, released)
            for graph_id in released:
                held.pop(graph_id, None)
        fresh = [m for m in messages if m.id not in known]
        converted: dict[str, IngestedMessage] = {}  # built once from the JSON, for the claim and the ingest
        claimed = await self._claim_gmailified(record, folder, fresh, converted)
        outcome.matched += len(claimed)
        fresh = [m for m in fresh if m.id not in claimed]
        stored, failed = await self._ingest(record, folder, fresh, categories, converted, listed_at)
        outcome.stored = stored
        outcome.retry = await self._count_attempts(record.id, [m.id for m in fresh], failed)
        return outcome

    async def _category_labels(self, record: AccountRecord, messages: Sequence[RemoteMessage]) -> dict[str, int]:
        """Outlook category name -> the user's label for it ("A/B" nests like a folder path); a category that
        shares its label with a folder of this account stays a category only in name."""
        names = sorted({c for m in messages for c in m.categories})
        if not names:
            return {}
        folder_labels = {f.label_id for f in await self.repo.folder_labels(record.id)}
        found: dict[str, int] = {}
        for name in names:
            path = tuple(s for s in name.split("/") if s.strip()) or (name,)
            try:
                resolved = await self.resolver.resolve(user_id=record.user_id, account_id=record.id, path=path,
                                                       handle=BindingHandle(provider_tag=name))
            except Exception:  # a category plmail cannot turn into a label costs only itself
                log.exception("category %r of account %s has no label", name, record.id)
                continue
            if resolved.label_id not in folder_labels:
                found[name] = resolved.label_id
        return found

    async def _adopt(self, record: AccountRecord, unknown: Sequence[RemoteMessage], held: dict[str, str]
                     ) -> dict[str, KnownMessage]:
        """Unknown ids whose Message-ID belongs to a held message: the same message, moved under a new id."""
        if not unknown or not held:
            return {}
        rfc = {m.id: next(iter(message_ids(m.internet_message_id)), None) for m in unknown}
        candidates = await self.repo.held_candidates(record.id, sorted(held), sorted({r for r in rfc.values() if r}))
        if not candidates:
            return {}
        used: set[int] = set()
        adopted: dict[str, KnownMessage] = {}
        async with self.db.transaction():
            for message in unknown:
                wanted = rfc[message.id]
                match = next((c for c in candidates if c[2] == wanted and c[0] not in used), None)
                if wanted is None or match is None:
                    continue
                row_id, old_graph_id, _, thread_id = match
                used.add(row_id)
                await self.repo.repoint(row_id, message.id)
                await self.state.release_removals(record.id, [old_graph_id])
                old_folder = held.pop(old_graph_id, None)
                adopted[message.id] = KnownMessage(row_id, message.id, thread_id, old_folder)
        return adopted

    async def _claim_gmailified(self, record: AccountRecord, folder: Folder, fresh: Sequence[RemoteMessage],
                                converted: dict[str, IngestedMessage]) -> set[str]:
        """Gmailify from this side, as the IMAP sibling does (`providers/gmailify.py`): a message a Gmail account
        of the same user fetched from this mailbox (this account is named in its headers) is this account's,
        whichever synced first. The Gmail row is re-pointed here, not stored twice nor run through the pipeline
        again: same id, read state and the user's own labels, the steps' results kept; the Gmail account notes
        the id so its listing does not fetch it again. Returns the Graph ids claimed."""
        if not fresh:
            return set()
        facts = await self.pipeline.accounts.facts(record.id)
        if facts is None:
            return set()
        mine: dict[str, tuple[RemoteMessage, IngestedMessage]] = {}
        for message in fresh:
            if message.is_draft:
                continue
            item = ingested(record.id, message, label_ids=(folder.label_id,) if folder.label_id is not None else ())
            converted[message.id] = item
            rfc = item.parsed.message_id
            if rfc and rfc not in mine and named_addresses(item.parsed) & facts.addresses:
                mine[rfc] = (message, item)
        if not mine:
            return set()
        chosen: dict[str, GmailCopy] = {}
        # The user's Gmail rows with these Message-IDs, oldest first (the query the IMAP sibling claims with).
        for copy in await ImapMessageRepository(self.db).gmail_copies(facts.user_id, sorted(mine)):
            if copy.rfc_message_id not in chosen and may_be_claimed(copy.provider_labels):
                chosen[copy.rfc_message_id] = copy
        if not chosen:
            return set()
        state = StateManager(ChangeLogRepository(self.db))
        recorder = MailChangeRecorder(state)
        gmail = GmailMessageRepository(self.db)
        async with self.db.transaction():
            taken = await self.repo.take_over(record.id, folder.id, folder.label_id, [
                (copy.id, mine[rfc][0].id, mine[rfc][0].conversation_id) for rfc, copy in chosen.items()])
            for gmail_account in sorted({copy.account_id for copy in chosen.values()}):
                copies = [(rfc, c) for rfc, c in chosen.items() if c.account_id == gmail_account]
                await gmail.note_skipped(gmail_account, [
                    claim_note(c.gmail_id, record.id, mine[rfc][1].parsed, thread_key=c.gmail_thread_key,
                               gmail_labels=c.provider_labels) for rfc, c in copies])
                left = [t for t in taken if t.account_id == gmail_account]
                await settle_deleted(self.db, gmail_account, {t.id: t.thread_id for t in left},
                                     {label for t in left for label in t.labels})
            await self.pipeline.rehome(record.id, [Rehomed(copy.id, mine[rfc][1], copy.ai_category)
                                                   for rfc, copy in chosen.items()], recorder)
            if folder.label_id is not None:
                recorder.mailboxes_changed(record.id, await self.skips.bindings_for(record.id, [folder.label_id]))
            await state.write()
            await state.announce()
        return {mine[rfc][0].id for rfc in chosen}

    async def _update(self, record: AccountRecord, folder: Folder, seen: Sequence[tuple[RemoteMessage, KnownMessage]],
                      categories: dict[str, int], listed_at: datetime) -> set[int]:
        """Folder, read and flag state, and categories of stored messages, as Graph reports them now."""
        if not seen:
            return set()
        threads = {k.id: k.thread_id for _, k in seen}
        async with self.db.transaction():
            await self.repo.seen(record.id, sorted(threads))
            moves = [(k.id, folder.id, folder.label_id) for _, k in seen if k.folder_id != folder.id]
            relocated, labels = await self.repo.relocate(record.id, moves, listed_at)
            flagged = await self.repo.apply_flags(record.id, [(k.id, m.is_read, m.flagged) for m, k in seen],
                                                  listed_at)
            recategorised, category_labels = await self.repo.set_categories(
                record.id, [(k.id, [categories[c] for c in m.categories if c in categories]) for m, k in seen],
                listed_at)
            changed = set(relocated) | set(flagged) | set(recategorised)
            if changed:
                await self.threads.recompute(sorted({t for i in changed if (t := threads.get(i)) is not None}))
                await announce(self.db, record.id, {i: threads.get(i) for i in changed},
                               sorted(set(labels) | set(category_labels)))
        return changed

    async def _ingest(self, record: AccountRecord, folder: Folder, fresh: Sequence[RemoteMessage],
                      categories: dict[str, int], converted: dict[str, IngestedMessage], listed_at: datetime
                      ) -> tuple[int, set[str]]:
        """(stored, Graph ids that failed). Invitations are read from their MIME so the calendar part is kept."""
        stored = 0
        failed: set[str] = set()
        for start in range(0, len(fresh), BATCH):
            batch: list[IngestedMessage] = []
            for message in fresh[start:start + BATCH]:
                labels = tuple(dict.fromkeys(
                    [*([folder.label_id] if folder.label_id is not None else []),
                     *(categories[c] for c in message.categories if c in categories)]))
                raw = await self._mime(record, message) if message.is_meeting else None
                known = converted.get(message.id) if raw is None else None
                batch.append(replace(known, label_ids=labels) if known is not None
                             else ingested(record.id, message, label_ids=labels, raw=raw))
            count, refused_refs = await self.pipeline.ingest_isolating_failures(batch)
            by_ref = {m.source_ref: m.ref.key for m in batch}
            refused = {g for ref in refused_refs if (g := by_ref.get(ref)) is not None}
            stored += count
            failed |= refused
            placed = [g for m in batch if (g := m.ref.key) is not None and g not in refused]
            await self.repo.place(record.id, placed, [folder.id] * len(placed), listed_at)
        return stored, failed

    async def _mime(self, record: AccountRecord, message: RemoteMessage) -> bytes | None:
        try:
            return await self.client.mime(record.account, message.id)
        except GraphNotFound:
            # moved or deleted since it was listed; the JSON still names the meeting, and the raw MIME is
            # fetched later, by the message's id then, if the extractor asks
            return None

    async def _count_attempts(self, account_id: int, graph_ids: Sequence[str], failed: set[str]) -> bool:
        """Whether a failed message deserves another attempt; one that stored after earlier failures loses its
        notes, one that failed `MAX_ATTEMPTS` times stays noted and is passed over."""
        refs = {source_ref(g): g for g in graph_ids}
        counts = await self.repo.skip_counts(account_id, list(refs))
        await self.repo.forget_skips(account_id, [ref for ref, g in refs.items() if g not in failed and ref in counts])
        retry = False
        for graph_id in failed:
            attempts = counts.get(source_ref(graph_id), 1)
            if attempts < MAX_ATTEMPTS:
                retry = True
            else:
                log.warning("message %s of account %s given up after %d attempts", graph_id, account_id, attempts)
        return retry
