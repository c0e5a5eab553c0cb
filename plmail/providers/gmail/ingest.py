"""From Gmail ids to rows: fetch (format=raw), decide whose mail it is, hand it to the pipeline, note what is
looked at and not stored, and re-read the labels of mail that is stored already.

Shared by the sync (history deltas) and the first import, so both treat a message alike:

- A chat is refused (there is no place for one) and an id Gmail lists but answers with 404 cannot be stored.
  Both get a gmail_skipped_message row with the reason, their labels and address headers; the listing treats
  a noted id as stored, and the note disappears when its message is stored after all.
- A message belongs to the Gmail mailbox holding it, unless a sibling account of the same user named in its
  headers already holds it (Gmailify: Gmail fetched it from that account). Mail sent from a "send as" address,
  forwarded from an address not connected here, and drafts stay with Gmail.
- `enrich_existing` is the relabel pass: Gmail files mail into tabs after delivery and again whenever someone
  moves it, so CATEGORY_* comes and goes on rows plmail has held for months. It overwrites the stored Gmail
  labels, recomputes the category from them at once and refreshes the thread's tab, without running the
  pipeline again: a second run would record a JMAP create for an id clients already hold and run the user's
  rules over mail they may have filed by hand since.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from plmail.db.database import Database
from plmail.db.repos.account_admin import AccountRecord
from plmail.db.repos.accounts import AccountRepository
from plmail.db.repos.changes import ChangeLogRepository
from plmail.db.repos.gmail_messages import GmailMessageRepository, Sibling, SkippedNote, StoredGmailMessage
from plmail.db.repos.ingest import IngestRepository
from plmail.db.repos.threads import ThreadRepository
from plmail.domain.enums import Category
from plmail.domain.ingest import AccountFacts, IngestedMessage, ProviderRef
from plmail.mail.batching import BoundedRun
from plmail.mail.categorizer import CategoryFacts, MessageCategorizer
from plmail.mail.changes import MailChangeRecorder, StateManager
from plmail.mail.headers import header_values
from plmail.mail.ingest import parse_message
from plmail.mail.pipeline import PostIngestPipeline
from plmail.mail.settle import settle_deleted
from plmail.providers.gmail.client import FetchedGmail, GmailSession
from plmail.providers.gmail.labels import NOT_PLACES, GmailLabelSyncer, LabelMap
from plmail.providers.gmailify import addresses, claim_note, claimed_by

log = logging.getLogger(__name__)

FETCH_BATCH = 100  # ids per fetch job


def source_ref(gmail_id: str) -> str:
    return f"gmail:{gmail_id}"


@dataclass(frozen=True, slots=True)
class BatchOutcome:
    stored: int = 0
    skipped: int = 0
    answered: frozenset[str] = frozenset()  # stored now, stored before, or noted
    failed: frozenset[str] = frozenset()  # would not store; tried again later
    deferred_until: datetime | None = None  # the quota ran out; the rest waits until then

    def merged(self, later: BatchOutcome) -> BatchOutcome:
        return BatchOutcome(self.stored + later.stored, self.skipped + later.skipped, self.answered | later.answered,
                            self.failed | later.failed, later.deferred_until or self.deferred_until)


@dataclass(frozen=True, slots=True)
class RelabelOutcome:
    changed: int = 0
    threads_moved: int = 0
    gone: frozenset[str] = frozenset()
    deferred_until: datetime | None = None


class GmailMessageIngest:
    def __init__(self, db: Database, pipeline: PostIngestPipeline, labels: GmailLabelSyncer,
                 categorizer: MessageCategorizer | None = None) -> None:
        self.db = db
        self.pipeline = pipeline
        self.labels = labels
        self.categorizer = categorizer or MessageCategorizer()
        self.repo = GmailMessageRepository(db)
        self.ingest_repo = IngestRepository(db)
        self.threads = ThreadRepository(db)
        self.accounts = AccountRepository(db)

    async def label_map(self, session: GmailSession, record: AccountRecord,
                        needed: Sequence[str] = ()) -> LabelMap:
        current = await self.labels.current(record)
        if current is None or not current.knows(needed):
            return await self.labels.sync(session, record)  # a label created since the last label sync
        return current

    async def fetch_and_store(self, session: GmailSession, record: AccountRecord, ids: Sequence[str]
                              ) -> BatchOutcome:
        """Fetch the ids that are neither stored nor noted, and store or note each.

        Gmail tells a message's size only with the message, so the results are taken a request at a time and
        what is held goes to the pipeline before it would pass RAW_BATCH_BYTES: a job of large mail holds
        a bounded amount (and one request's messages), not a hundred attachments at once."""
        known = await self.repo.known(record.id, ids)
        wanted = [i for i in dict.fromkeys(ids) if i not in known]
        outcome = BatchOutcome(answered=frozenset(set(ids) - set(wanted)))
        held: BoundedRun[FetchedGmail] = BoundedRun(count=len(wanted))
        gone: set[str] = set()
        deferred_until: datetime | None = None
        async for result in session.fetch_by_request(wanted):
            for message in result.fetched.values():
                closed = held.add(message, len(message.raw or b""))
                if closed:
                    outcome = outcome.merged(await self._store(session, record, closed, gone))
                    gone = set()
            gone |= result.gone
            deferred_until = result.deferred_until  # only the last result can carry it
        rest = held.rest()
        if rest or gone:
            outcome = outcome.merged(await self._store(session, record, rest, gone))
        return replace(outcome, deferred_until=deferred_until)

    async def _store(self, session: GmailSession, record: AccountRecord, fetched: Sequence[FetchedGmail],
                     gone: set[str]) -> BatchOutcome:
        """Store or note what was fetched; ids Gmail answered with 404 are noted as gone."""
        notes = [SkippedNote(gmail_id, "gone", detail="listed by Gmail, but Gmail answers 404 for it")
                 for gmail_id in sorted(gone)]
        labels = await self.label_map(session, record, [g for f in fetched for g in f.label_ids])
        batch: list[IngestedMessage] = []
        failed: set[str] = set()
        for message in fetched:
            if "CHAT" in message.label_ids:  # the one kind of message there is no place for
                notes.append(self._note(message, "chat", None))
                continue
            if message.raw is None:
                failed.add(message.id)
                continue
            try:
                batch.append(self._ingested(record, message, labels))
            except Exception as exc:  # the parser promises not to raise; if it does, only this message pays
                log.exception("could not parse Gmail message %s of account %s", message.id, record.id)
                await self.ingest_repo.record_skip(record.id, source_ref(message.id), f"parse: {exc}",
                                                   hashlib.sha256(message.raw).hexdigest())
                failed.add(message.id)
        batch, claimed = await self._claims(record, batch)
        notes += claimed
        stored, refused_refs = await self.pipeline.ingest_isolating_failures(batch)
        refused = {ref.removeprefix("gmail:") for ref in refused_refs}
        failed |= refused
        kept = [g for m in batch if (g := m.ref.key) and g not in refused]
        async with self.db.transaction():
            await self.repo.note_skipped(record.id, notes)
            await self.repo.forget_skipped(record.id, kept)
        return BatchOutcome(stored=stored, skipped=len(notes), answered=frozenset(kept) | {n.gmail_id for n in notes},
                            failed=frozenset(failed))

    def _ingested(self, record: AccountRecord, fetched: FetchedGmail, labels: LabelMap) -> IngestedMessage:
        """The original is stored at ingest, not fetched on first use as the seed has it: format=raw brought
        the bytes already, so keeping them costs no second API call."""
        assert fetched.raw is not None
        gmail_labels = fetched.label_ids
        return parse_message(
            fetched.raw, account_id=record.id, ref=ProviderRef(key=fetched.id),
            provider_thread_key=fetched.thread_id, provider_labels=gmail_labels, received_at=fetched.internal_date,
            seen="UNREAD" not in gmail_labels, starred="STARRED" in gmail_labels, is_draft="DRAFT" in gmail_labels,
            label_ids=labels.labels_for(gmail_labels), source_ref=source_ref(fetched.id),
        )

    def _note(self, fetched: FetchedGmail, reason: str, message: IngestedMessage | None, detail: str = ""
              ) -> SkippedNote:
        parsed = message.parsed if message is not None else None
        if parsed is None and fetched.raw is not None:
            try:
                parsed = parse_message(fetched.raw, account_id=0).parsed
            except Exception:
                parsed = None
        return SkippedNote(
            gmail_id=fetched.id, reason=reason, thread_id=fetched.thread_id, label_ids=fetched.label_ids,
            from_address=parsed.from_address if parsed else None,
            to_addresses=tuple(a.address for a in parsed.to) if parsed else (),
            cc_addresses=tuple(a.address for a in parsed.cc) if parsed else (),
            delivered_to=addresses(header_values(parsed.headers, "delivered-to")) if parsed else (),
            subject=parsed.subject if parsed else None, detail=detail,
        )

    async def _claims(self, record: AccountRecord, batch: list[IngestedMessage]
                      ) -> tuple[list[IngestedMessage], list[SkippedNote]]:
        """Gmailify: mail addressed to a sibling account that already holds it is that account's; a sibling
        that syncs later re-points the Gmail row instead (`providers/gmailify.py`)."""
        siblings = await self.repo.siblings(record.id)
        if not siblings or not batch:
            return batch, []
        candidates: dict[str, list[Sibling]] = {}
        for message in batch:
            matching = [s for s in siblings if claimed_by(message.parsed, message.provider_labels, s.addresses)]
            if matching and message.parsed.message_id:
                candidates[message.parsed.message_id] = matching
        if not candidates:
            return batch, []
        holders = await self.repo.held_by(sorted({s.id for group in candidates.values() for s in group}),
                                          sorted(candidates))
        kept: list[IngestedMessage] = []
        notes: list[SkippedNote] = []
        for message in batch:
            rfc_id = message.parsed.message_id
            holder = holders.get(rfc_id) if rfc_id in candidates else None
            if holder is not None and any(s.id == holder for s in candidates[rfc_id or ""]):
                notes.append(claim_note(message.ref.key or "", holder, message.parsed,
                                        thread_key=message.provider_thread_key or "",
                                        gmail_labels=message.provider_labels or ()))
            else:
                kept.append(message)
        return kept, notes

    # -- relabel -----------------------------------------------------------------------------------------
    async def enrich_existing(self, session: GmailSession, record: AccountRecord, ids: Sequence[str]
                              ) -> RelabelOutcome:
        """Re-read the labels of stored messages (format=minimal) and apply them: Gmail labels, place labels,
        read and star, the category and the thread's tab. Messages plmail changed and has not yet told Gmail
        about are left alone: the propagation that follows makes Gmail agree with them."""
        stored = await self.repo.for_relabel(record.id, ids)
        if not stored:
            return RelabelOutcome()
        result = await session.fetch([m.gmail_id for m in stored if not m.pending_change], labels_only=True)
        labels = await self.label_map(session, record, [g for f in result.fetched.values() for g in f.label_ids])
        outcome = await self._apply_labels(record, {k: v.label_ids for k, v in result.fetched.items()}, labels)
        return RelabelOutcome(outcome[0], outcome[1], result.gone, result.deferred_until)

    async def _apply_labels(self, record: AccountRecord, current: dict[str, tuple[str, ...]], labels: LabelMap
                            ) -> tuple[int, int]:
        facts = await self.accounts.facts(record.id)
        if facts is None or not current:
            return 0, 0
        async with self.db.transaction():
            # read again inside the transaction: a change the user made while Gmail was asked wins
            stored = await self.repo.for_relabel(record.id, sorted(current))
            outcome = await self._relabel(record, facts, stored, current, labels)
        return outcome

    async def _relabel(self, record: AccountRecord, facts: AccountFacts, stored: Sequence[StoredGmailMessage],
                       current: dict[str, tuple[str, ...]], labels: LabelMap) -> tuple[int, int]:
        disabled = {Category(c) for c in facts.disabled_categories if c in Category._value2member_map_}
        provider_backed = set(labels.by_gmail.values()) | {labels.archive}
        rows: list[tuple[int, list[str], str, bool, bool]] = []
        adds: list[tuple[int, int]] = []
        removes: list[tuple[int, int]] = []
        changed: list[StoredGmailMessage] = []
        touched_labels: set[int] = set()
        for message in stored:
            gmail_labels = current.get(message.gmail_id)
            if gmail_labels is None or message.pending_change:
                continue
            category = self.categorizer.categorize(
                CategoryFacts(message.from_address, message.headers, gmail_labels,
                              None if facts.sorts_by_rules else message.ai_category),
                disabled=disabled,
            ).value
            seen, starred = "UNREAD" not in gmail_labels, "STARRED" in gmail_labels
            places = {labels.by_gmail[g] for g in gmail_labels if g in labels.by_gmail and g not in NOT_PLACES}
            target = (set(message.labels) - provider_backed) | places
            if not target:
                target = {labels.archive}
            gained, lost = target - message.labels, message.labels - target
            if (tuple(sorted(gmail_labels)) == tuple(sorted(message.provider_labels or ())) and not gained
                    and not lost and category == message.category and seen == message.seen
                    and starred == message.starred):
                continue
            changed.append(message)
            rows.append((message.id, list(gmail_labels), category, seen, starred))
            adds += [(message.id, label) for label in sorted(gained)]
            removes += [(message.id, label) for label in sorted(lost)]
            touched_labels |= gained | lost
        if not changed:
            return 0, 0
        state = StateManager(ChangeLogRepository(self.db))
        recorder = MailChangeRecorder(state)
        await self.repo.update_gmail_state(rows)
        await self.repo.replace_labels(adds, removes)
        threads = sorted({m.thread_id for m in changed if m.thread_id is not None})
        moves = await self.threads.recompute(threads)
        for message in changed:
            recorder.email_changed(record.id, message.id, thread_id=message.thread_id)
        recorder.threads_touched(record.id, threads)
        if touched_labels:
            recorder.mailboxes_changed(record.id,
                                       await self.ingest_repo.bindings_for(record.id, sorted(touched_labels)),
                                       labels=touched_labels)
        await state.write()
        await state.announce()
        return len(changed), sum(1 for m in moves if m.old != m.new)

    async def delete(self, record: AccountRecord, gmail_ids: Sequence[str]) -> int:
        """Messages Gmail deleted for good: their rows go, their threads are recomputed or dropped."""
        if not gmail_ids:
            return 0
        async with self.db.transaction():
            await self.repo.forget_skipped(record.id, gmail_ids)
            deleted = await self.repo.delete(record.id, gmail_ids)
            await settle_deleted(self.db, record.id, {m.id: m.thread_id for m in deleted},
                                 {label for m in deleted for label in m.labels})
        return len(deleted)
