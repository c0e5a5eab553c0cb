"""PostIngestPipeline: the one pass every syncer's batch goes through, in one fixed order.

Three providers once carried three copies of this pass; they agreed, which was the problem: the order
is subtle enough that copies drift, and anything reacting to new mail had to be wired into all three.

Per message: sanitise, store the original when the caller has bytes, categorise; then the batch is
inserted, its JMAP creates recorded (ids exist now), and it is threaded, each step guarded so one
message can fail alone. Then, once for the batch: the touched threads are announced, the change
log is written in the same transaction, and after commit the steps are told.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from plmail.db.database import Database
from plmail.db.repos.accounts import AccountRepository
from plmail.db.repos.changes import ChangeLogRepository
from plmail.db.repos.contacts import ContactRepository, ContactSighting
from plmail.db.repos.ingest import IngestRepository, ref_columns
from plmail.db.repos.threads import ThreadRepository
from plmail.domain.enums import Category
from plmail.domain.errors import NotFoundError
from plmail.domain.ingest import (
    AccountFacts,
    HoldQuestion,
    IngestedMessage,
    PostIngestResult,
    SkippedMessage,
    StoredMessage,
)
from plmail.domain.ports import IngestHold
from plmail.domain.registry import ProviderRegistry
from plmail.mail.authentication import SenderAuthentication, trusted_receivers
from plmail.mail.blobs import BlobStore
from plmail.mail.categorizer import CategoryFacts, MessageCategorizer
from plmail.mail.changes import MailChangeRecorder, StateManager
from plmail.mail.rows import PreparedAhead, RowFields, prepare_ahead, row_fields
from plmail.mail.rules.engine import MailRuleEngine
from plmail.mail.sender_auth import judge
from plmail.mail.steps import InitialImportState, RecentMailPolicy, StepRegistry
from plmail.mail.threader import SUBJECT_FALLBACK_WINDOW, ThreadCandidate, has_reply_prefix, plan_threads

log = logging.getLogger(__name__)


class _Threadable(Protocol):
    """A message the threader plans for: its id and what its provider handed over."""

    @property
    def message_id(self) -> int: ...

    @property
    def source(self) -> IngestedMessage: ...


@dataclass(frozen=True, slots=True)
class Rehomed:
    """A stored row that now belongs to another account, with the parse of its new provider's copy."""

    message_id: int
    source: IngestedMessage
    ai_category: str | None = None


@dataclass(slots=True)
class _Prepared:
    source: IngestedMessage
    message_id: int
    category: Category
    held: bool
    ask_assistant: bool
    record: tuple[Any, ...]
    raw_digest: str | None
    part_digests: tuple[str, ...]  # SHA-256 of each of the parsed message's parts, in order

    def blobs(self) -> list[tuple[str, bytes]]:
        """(SHA-256, bytes) of the original, if it was handed over, and of every part."""
        raw = self.source.raw
        own = [(self.raw_digest, raw)] if self.raw_digest is not None and raw is not None else []
        return own + list(zip(self.part_digests, (part.data for part in self.source.parsed.parts), strict=True))


class PostIngestPipeline:
    def __init__(
        self,
        db: Database,
        blobs: BlobStore,
        *,
        steps: StepRegistry | None = None,
        import_state: InitialImportState | None = None,
        recent: RecentMailPolicy | None = None,
        categorizer: MessageCategorizer | None = None,
        rules: MailRuleEngine | None = None,
        hold: IngestHold | None = None,
    ) -> None:
        self.db = db
        self.blobs = blobs
        self.steps = steps or StepRegistry()
        self.import_state = import_state or InitialImportState(ProviderRegistry())
        self.recent = recent or RecentMailPolicy()
        self.categorizer = categorizer or MessageCategorizer()
        self.rules = rules
        self.hold = hold
        self.accounts = AccountRepository(db)
        self.repo = IngestRepository(db)
        self.threads = ThreadRepository(db)
        self.contacts = ContactRepository(db)
        self.change_log = ChangeLogRepository(db)
        self.sender_auth = SenderAuthentication(db)

    async def prepare_ahead(self, messages: Sequence[IngestedMessage]) -> PreparedAhead:
        """Work out what the rows of a coming batch hold that depends on nothing stored (`mail.rows`), with their
        ids, outside any transaction; hand the result to `ingest` with that batch."""
        return await prepare_ahead(messages, await self.repo.allocate_message_ids(len(messages)))

    async def ingest(self, messages: Sequence[IngestedMessage], *, ahead: PreparedAhead | None = None,
                     refetchable: bool = False) -> PostIngestResult:
        """Store, thread and announce a batch; then notify the steps. Returns what was stored. `ahead` holds row
        fields prepared beforehand (`prepare_ahead`) for some or all of the messages. `refetchable`: a page of an
        account's history, which the provider still holds; its commit does not wait for the disk (`open_batch`)."""
        groups: dict[int, list[IngestedMessage]] = {}
        for message in messages:
            groups.setdefault(message.account_id, []).append(message)
        facts: dict[int, AccountFacts] = {}
        for account_id in groups:
            found = await self.accounts.facts(account_id)
            if found is None:
                raise NotFoundError(f"Account {account_id} does not exist.")
            facts[account_id] = await self.sender_auth.facts_with_receivers(found, groups[account_id])
        # Asked before the transaction: whether mail is live decides whether it may be held for the assistant.
        # An account its provider says is importing has its pages indexed for search afterwards (index_search):
        # the vector is a third of the database's work per message, and the import is what a new user waits for.
        importing = {account.id: await self.import_state.answer(account.provider_kind, account.id)
                     for account in facts.values()}
        live_accounts = {account_id for account_id, answer in importing.items() if answer is False}
        holding = self.hold is not None and await self.hold.enabled()
        state = StateManager(self.change_log)
        recorder = MailChangeRecorder(state)
        stored: list[StoredMessage] = []
        skipped: list[SkippedMessage] = []
        duplicates = 0
        threads_by_account: dict[int, tuple[int, ...]] = {}
        propagate: set[int] = set()
        async with self.db.transaction():
            await self.repo.open_batch(unflushed=refetchable)
            for account_id, batch in groups.items():
                outcome = await self._ingest_account(
                    facts[account_id], batch, recorder, live=account_id in live_accounts, holding=holding,
                    search_later=importing[account_id] is True, ahead=ahead or PreparedAhead(),
                )
                propagate |= outcome.propagate
                stored.extend(outcome.stored)
                skipped.extend(outcome.skipped)
                duplicates += outcome.duplicates
                threads_by_account[account_id] = outcome.threads
            await self.repo.close_batch()
            await state.write()
            await state.announce()
        if propagate and self.rules is not None:
            await self.rules.operations.propagate(propagate)
        result = PostIngestResult(
            messages=tuple(stored),
            accounts=facts,
            threads_by_account=threads_by_account,
            live=len(live_accounts) == len(facts),
            duplicates=duplicates,
            skipped=tuple(skipped),
            recent_ids=self.recent.recent_ids(stored),
        )
        if stored:
            await self.steps.notify(result)
        return result

    async def ingest_isolating_failures(self, batch: Sequence[IngestedMessage], *, ahead: PreparedAhead | None = None,
                                        refetchable: bool = False) -> tuple[int, set[str]]:
        """(stored, source refs not stored). A batch the pipeline cannot take as a whole is taken one by one,
        so a message that breaks more than itself still costs only itself; each one that fails is noted."""
        outcome = await self.ingest_each_if_needed(batch, ahead=ahead, refetchable=refetchable)
        return outcome.stored, {s.source_ref for s in outcome.skipped}

    async def ingest_each_if_needed(self, batch: Sequence[IngestedMessage], *, ahead: PreparedAhead | None = None,
                                    refetchable: bool = False) -> IsolatedIngest:
        """Ingest the batch; when it fails as a whole, one message at a time, noting each that fails. Fields
        prepared ahead serve the retries too: the failed batch rolled back, so its ids are still unused."""
        if not batch:
            return IsolatedIngest(0, 0, ())
        try:
            result = await self.ingest(batch, ahead=ahead, refetchable=refetchable)
            return IsolatedIngest(result.stored, result.duplicates, result.skipped)
        except Exception:
            log.exception("a batch of %s messages failed as a whole; storing them one by one", len(batch))
        stored = duplicates = 0
        skipped: list[SkippedMessage] = []
        for message in batch:
            try:
                result = await self.ingest([message], ahead=ahead, refetchable=refetchable)
            except Exception as exc:
                log.exception("could not store %s of account %s", message.source_ref, message.account_id)
                reason = f"{type(exc).__name__}: {exc}"
                await self.repo.record_skip(message.account_id, message.source_ref, reason,
                                            message.parsed.content_hash)
                skipped.append(SkippedMessage(message.account_id, message.source_ref, reason))
                continue
            stored += result.stored
            duplicates += result.duplicates
            skipped.extend(result.skipped)
        return IsolatedIngest(stored, duplicates, tuple(skipped))

    async def rehome(self, account_id: int, rows: Sequence[Rehomed], recorder: MailChangeRecorder) -> tuple[int, ...]:
        """Rows stored once under another account that now belong to `account_id` (the Gmailify claim of IMAP):
        categorised from their own headers and threaded there, announced there as created. Inside the caller's
        transaction; the rows must already point at the account and at no thread. Returns the threads touched.

        Not run again: rules and steps. A second run would run the user's rules over mail they may have
        filed by hand since, and the steps' results (events, proposals) already hang on the row's id."""
        if not rows:
            return ()
        account = await self.accounts.facts(account_id)
        if account is None:
            raise NotFoundError(f"Account {account_id} does not exist.")
        disabled = {Category(c) for c in account.disabled_categories if c in Category._value2member_map_}
        senders = sorted({r.source.parsed.from_address for r in rows if r.source.parsed.from_address})
        correspondents = await self.contacts.correspondents(account.user_id, senders)
        categories = [(r.message_id, self.categorizer.categorize(
            CategoryFacts(r.source.parsed.from_address, r.source.parsed.headers, r.source.provider_labels,
                          None if account.sorts_by_rules else r.ai_category),
            correspondents=correspondents, disabled=disabled).value) for r in rows]
        threading = await self._thread(account, rows)
        await self.repo.set_categories_and_threads(
            [(message_id, category, threading.thread_of.get(message_id)) for message_id, category in categories])
        touched = sorted(set(threading.thread_of.values()) | set(threading.survivors))
        await self.threads.recompute(touched)
        for r in rows:
            recorder.email_changed(account.id, r.message_id, created=True)
        for thread_id in threading.absorbed:
            recorder.thread_destroyed(account.id, thread_id)
        for message_id in threading.moved:
            recorder.email_changed(account.id, message_id)
        recorder.threads_touched(account.id, touched, created=threading.created)
        return tuple(touched)

    async def _ingest_account(
        self, account: AccountFacts, batch: Sequence[IngestedMessage], recorder: MailChangeRecorder, *,
        live: bool, holding: bool, search_later: bool, ahead: PreparedAhead,
    ) -> _AccountOutcome:
        skipped: list[SkippedMessage] = []
        await self._harvest_contacts(account, batch)
        senders = sorted({m.parsed.from_address for m in batch if m.parsed.from_address})
        correspondents = await self.contacts.correspondents(account.user_id, senders)
        known_fields = [ahead.get(message) for message in batch]
        ids = iter(await self.repo.allocate_message_ids(sum(1 for f in known_fields if f is None)))
        prepared: list[_Prepared] = []
        for message, fields in zip(batch, known_fields, strict=True):
            try:
                prepared.append(self._prepare(account, message, fields or row_fields(message, next(ids)),
                                              correspondents, live=live, holding=holding))
            except Exception as exc:  # one unreadable message costs only itself
                log.exception("could not prepare message %s of account %s", message.source_ref, account.id)
                reason = f"{type(exc).__name__}: {exc}"
                skipped.append(SkippedMessage(account.id, message.source_ref, reason))
                await self.repo.record_skip(account.id, message.source_ref, reason, message.parsed.content_hash)
        fresh = await self._drop_known(account, prepared)
        # Threads are planned before the insert, so each row is written once with its thread; an
        # UPDATE afterwards would write a second version of every new row and all its index entries.
        threading = await self._thread(account, fresh)
        inserted = await self._insert(account, fresh, threading, skipped, search_later=search_later)
        kept = [p for p in fresh if p.message_id in inserted]
        await self.blobs.put_hashed([blob for p in kept for blob in p.blobs()])
        duplicates = len(prepared) - len(kept) - sum(1 for s in skipped if s.reason.startswith("insert:"))
        await self.threads.delete_empty(threading.created)
        await self._insert_parts_and_labels(kept)
        for p in kept:
            recorder.email_changed(account.id, p.message_id, created=True)
        ruled: set[int] = set()
        if self.rules is not None and kept:
            outcome = await self.rules.apply_to_batch(account.user_id, account.id, [p.message_id for p in kept])
            ruled = outcome.accounts
        touched = sorted({threading.thread_of[p.message_id] for p in kept if p.message_id in threading.thread_of}
                         | set(threading.survivors))
        await self.threads.recompute(touched)
        for thread_id in threading.absorbed:
            recorder.thread_destroyed(account.id, thread_id)
        for message_id in threading.moved:
            recorder.email_changed(account.id, message_id)
        recorder.threads_touched(account.id, touched, created=threading.created)
        label_ids = sorted({label for p in kept for label in p.source.label_ids})
        if label_ids:
            recorder.mailboxes_changed(account.id, await self.repo.bindings_for(account.id, label_ids),
                                       labels=label_ids)
        stored = [
            StoredMessage(
                id=p.message_id,
                account_id=account.id,
                thread_id=threading.thread_of.get(p.message_id),
                occurred_at=p.source.occurred_at,
                category=p.category.value,
                is_draft=p.source.is_draft,
                parsed=p.source.parsed,
                held=p.held,
                ask_assistant=p.ask_assistant,
            )
            for p in kept
        ]
        return _AccountOutcome(stored, skipped, max(duplicates, 0), tuple(touched), ruled)

    async def _drop_known(self, account: AccountFacts, prepared: Sequence[_Prepared]) -> list[_Prepared]:
        """Leave out what is stored already, or twice in this batch, under its provider id, and the Sent copies
        a provider filed itself of what plmail sent (the sent message is stored already)."""
        refs = [(p.message_id, p.source.ref) for p in prepared]
        # Tombstoned: a message the user destroyed that the provider still lists (its deletion there may still wait).
        known = await self.repo.stored_or_tombstoned(account.id, refs)
        adopted = await self.repo.adopt_sent_copies(account.id, [
            (rfc_id, p.source.ref) for p in prepared
            if p.message_id not in known and (rfc_id := p.source.parsed.message_id) and p.source.ref.identity()])
        fresh: list[_Prepared] = []
        keys: set[tuple[object, ...]] = set()
        for p in prepared:
            own = p.source.ref.identity()
            if p.message_id in known or (own is not None and own in keys) or p.source.parsed.message_id in adopted:
                continue
            if own is not None:
                keys.add(own)
            fresh.append(p)
        return fresh

    async def _harvest_contacts(self, account: AccountFacts, batch: Sequence[IngestedMessage]) -> None:
        """Addresses the user wrote to become correspondents; done before categorising so a reply in the
        same batch already counts. Inside the pipeline, not a step as the seed's HarvestContactsStep: a step
        runs after the batch is categorised, too late for the mail that made the sender a correspondent."""
        sightings: list[ContactSighting] = []
        now = datetime.now(UTC)
        for message in batch:
            parsed = message.parsed
            seen_at = message.occurred_at or now
            if parsed.from_address and parsed.from_address in account.addresses:
                for rcpt in (*parsed.to, *parsed.cc, *parsed.bcc):
                    if rcpt.address not in account.addresses:
                        sightings.append(ContactSighting(rcpt.address, rcpt.name, seen_at, True))
            elif parsed.from_address:
                sightings.append(ContactSighting(parsed.from_address, parsed.from_name or "", seen_at, False))
        await self.contacts.record(account.user_id, sightings)

    def _prepare(
        self, account: AccountFacts, message: IngestedMessage, fields: RowFields, correspondents: set[str],
        *, live: bool, holding: bool,
    ) -> _Prepared:
        parsed = message.parsed
        message_id = fields.message_id
        verdict = self.categorizer.explain(
            CategoryFacts(parsed.from_address, parsed.headers, message.provider_labels),
            correspondents=correspondents,
            disabled={Category(c) for c in account.disabled_categories if c in Category._value2member_map_},
        )
        category = verdict.category
        own_copy = parsed.from_address is not None and parsed.from_address in account.addresses
        ask_assistant = (not own_copy and not message.is_draft and not account.sorts_by_rules
                         and verdict.verdict_could_decide)
        # Held before threading, so a new thread is created without a tab instead of jumping between two.
        held = ask_assistant and self.hold is not None and self.hold.should_hold(HoldQuestion(
            holding_enabled=holding, user_sorts_by_rules=account.sorts_by_rules, live=live,
            recent=self.recent.is_recent(message.occurred_at), own_sent_copy=own_copy,
            verdict_could_decide=verdict.verdict_could_decide,
        ))
        now = datetime.now(UTC)
        sender = judge(parsed.headers, parsed.from_address, trusted_receivers(account))
        record = (
            message_id, account.id, *ref_columns(message.ref), parsed.message_id, message.provider_thread_key,
            fields.provider_labels, fields.headers, parsed.subject, parsed.from_address, parsed.from_name,
            fields.to, fields.cc, fields.bcc, fields.reply_to,
            parsed.sent_at, message.occurred_at or now,
            now if message.seen else None, now if message.starred else None,
            fields.in_reply_to, fields.references, parsed.size, parsed.has_attachments, fields.flags,
            parsed.body_text, parsed.body_html, fields.safe_html, parsed.preview,
            category.value, parsed.content_hash, fields.raw_digest, now, now if held else None, parsed.cut_note,
            fields.mime_tree, json.dumps(sender.as_json()),
        )
        return _Prepared(message, message_id, category, held, ask_assistant, record, fields.raw_digest,
                         fields.part_digests)

    async def _insert(
        self, account: AccountFacts, prepared: Sequence[_Prepared], threading: _Threading,
        skipped: list[SkippedMessage], *, search_later: bool,
    ) -> set[int]:
        if not prepared:
            return set()

        def row(p: _Prepared) -> tuple[Any, ...]:
            return (*p.record, threading.thread_of.get(p.message_id), threading.error)

        try:
            async with self.db.savepoint():
                return await self.repo.insert_messages([row(p) for p in prepared], search_later=search_later)
        except Exception:
            log.exception("bulk insert for account %s failed; inserting one by one", account.id)
        inserted: set[int] = set()
        for p in prepared:
            try:
                async with self.db.savepoint():
                    inserted |= await self.repo.insert_messages([row(p)], search_later=search_later)
            except Exception as exc:  # the database refused this one message; the others go on
                reason = f"insert: {type(exc).__name__}: {exc}"
                skipped.append(SkippedMessage(account.id, p.source.source_ref, reason))
                await self.repo.record_skip(account.id, p.source.source_ref, reason, p.source.parsed.content_hash)
        return inserted

    async def _insert_parts_and_labels(self, kept: Sequence[_Prepared]) -> None:
        parts: list[tuple[Any, ...]] = []
        labels: list[tuple[int, int]] = []
        for p in kept:
            for part, digest in zip(p.source.parsed.parts, p.part_digests, strict=True):
                parts.append((
                    p.message_id, part.path, part.content_type, part.charset, part.filename, part.content_id,
                    part.disposition, len(part.data), digest, part.is_inline, part.is_calendar,
                ))
            labels.extend((p.message_id, label_id) for label_id in dict.fromkeys(p.source.label_ids))
        await self.repo.insert_parts(parts)
        await self.repo.add_labels(labels)

    async def _thread(self, account: AccountFacts, fresh: Sequence[_Threadable]) -> _Threading:
        if not fresh:
            return _Threading()
        try:
            async with self.db.savepoint():
                return await self._plan_and_create(account, fresh)
        except Exception as exc:
            log.exception("threading failed for a batch of account %s; giving each message its own thread", account.id)
            error = f"{type(exc).__name__}: {exc}"
        # Threading must never cost the batch: each message gets a thread of its own, and the error is
        # kept on the message so a later backfill can try again.
        try:
            async with self.db.savepoint():
                ids = await self.threads.create(account.id, [(None, "none")] * len(fresh))
        except Exception:
            log.exception("fallback threading failed too for account %s", account.id)
            return _Threading(error=error)
        return _Threading(
            thread_of={p.message_id: t for p, t in zip(fresh, ids, strict=True)}, created=tuple(ids), error=error
        )

    async def _plan_and_create(self, account: AccountFacts, fresh: Sequence[_Threadable]) -> _Threading:
        candidates = [_candidate(i, p) for i, p in enumerate(fresh)]
        dated = [c.occurred_at for c in candidates if c.occurred_at is not None]
        lookups = await self.threads.lookups(
            account.id,
            provider_keys=sorted({c.provider_key for c in candidates if c.provider_key}),
            referenced_ids=sorted({r for c in candidates if not c.provider_key for r in c.references}),
            own_ids=sorted({c.rfc_id for c in candidates if c.rfc_id and not c.provider_key}),
            subjects=sorted({c.normalized_subject for c in candidates
                             if not c.provider_key and not c.references and has_reply_prefix(c.subject)}),
            subjects_since=min(dated) - SUBJECT_FALLBACK_WINDOW if dated else None,
        )
        plans = plan_threads(candidates, lookups)
        new_plans = [plan for plan in plans if plan.survivor is None]
        new_ids = await self.threads.create(account.id, [(p.provider_key, p.method.value) for p in new_plans])
        thread_of: dict[int, int] = {}
        for plan, thread_id in zip(new_plans, new_ids, strict=True):
            for index in plan.members:
                thread_of[fresh[index].message_id] = thread_id
        survivors: list[int] = []
        absorbed: list[int] = []
        for plan in plans:
            if plan.survivor is None:
                continue
            survivors.append(plan.survivor)
            for index in plan.members:
                thread_of[fresh[index].message_id] = plan.survivor
            absorbed += plan.absorbed
        moved = await self.threads.absorb([(plan.survivor, plan.absorbed) for plan in plans
                                           if plan.survivor is not None and plan.absorbed])
        return _Threading(thread_of, tuple(new_ids), tuple(survivors), tuple(absorbed), tuple(moved))


@dataclass(frozen=True, slots=True)
class IsolatedIngest:
    stored: int
    duplicates: int
    skipped: tuple[SkippedMessage, ...]


@dataclass(frozen=True, slots=True)
class _Threading:
    """The threading decision for a batch, made before its rows are written."""

    thread_of: dict[int, int] = field(default_factory=dict)  # message id -> thread id
    created: tuple[int, ...] = ()
    survivors: tuple[int, ...] = ()
    absorbed: tuple[int, ...] = ()
    moved: tuple[int, ...] = ()  # stored messages that moved into a survivor
    error: str | None = None


@dataclass(frozen=True, slots=True)
class _AccountOutcome:
    stored: list[StoredMessage]
    skipped: list[SkippedMessage]
    duplicates: int
    threads: tuple[int, ...]
    propagate: set[int]  # accounts whose rules changed labels the provider must learn about


def _candidate(index: int, prepared: _Threadable) -> ThreadCandidate:
    parsed = prepared.source.parsed
    refs = tuple(dict.fromkeys((*parsed.in_reply_to, *reversed(parsed.references))))
    participants = {a.address for a in (*parsed.to, *parsed.cc)}
    if parsed.from_address:
        participants.add(parsed.from_address)
    return ThreadCandidate(
        index=index,
        rfc_id=parsed.message_id,
        references=refs,
        provider_key=prepared.source.provider_thread_key,
        subject=parsed.subject,
        sender=parsed.from_address,
        participants=frozenset(participants),
        occurred_at=prepared.source.occurred_at,
    )
