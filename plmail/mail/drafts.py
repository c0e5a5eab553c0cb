"""Drafts are mail: a message row in Drafts carrying `$draft`, built from structured fields into real MIME,
stored through the same pipeline as arriving mail (so a reply joins its conversation at once), and kept in
step with the provider's Drafts by the provider's draft store.

Saving again writes a new message and removes the previous version, here and at the provider, as every
mail client does over IMAP (a message cannot change; a draft is replaced). The provider is told by a job on
`ingest` under the account's sync lock, so a sync never sees a half-written draft and stores it twice.

This service owns a draft's whole life (issue 29: a message that was sent leaves no draft anywhere). The versions
of one composition share a lineage (db/repos/draft_versions.py); each version is current, submitted, superseded,
sent or destroyed. Saves, discards and sends of a composition take its advisory lock in turn; a version leaves
the draft state in the same statement that reads where its provider copy is, so a copy stored at that moment is
found either way; one coalesced push job per composition stores its draft and deletes every retired copy,
raising until the provider agrees, and a sweep every minute sends it again for whatever is still left.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime

from plmail.db.database import Database
from plmail.db.repos.account_admin import SYNC_LOCK, AccountAdminRepository
from plmail.db.repos.drafts import DraftRepository, WrittenMessage
from plmail.db.repos.labels import LabelRepository
from plmail.domain.enums import LabelRole, ProviderKind
from plmail.domain.errors import ConflictError, ForbiddenError, InvalidMessageError, NotFoundError
from plmail.domain.ingest import IngestedMessage, ProviderRef
from plmail.domain.jobs import FILE_KEPT_COPY, PUSH_DRAFT
from plmail.domain.messages import Address, flags_say_draft
from plmail.domain.outgoing import (
    DraftContent,
    DraftFile,
    Identity,
    IdentityOrigin,
    OutgoingAttachment,
    SendReceipt,
)
from plmail.domain.ports import Enqueuer
from plmail.domain.registry import ProviderRegistry
from plmail.mail.blobs import BlobStore
from plmail.mail.compose import DEFAULT_SIZE_LIMIT, ComposedMessage, compose
from plmail.mail.identities import IdentityService
from plmail.mail.ingest import parse_message
from plmail.mail.mime import parse_mime
from plmail.mail.pipeline import PostIngestPipeline
from plmail.mail.repos.draft_versions import DRAFT_LOCK, RETIRED_STATES, DraftVersionRepository
from plmail.mail.repos.submissions import SubmissionRepository
from plmail.mail.settle import settle_deleted

log = logging.getLogger(__name__)

DRAFT_FLAG = "$draft"
_KEEPS_ONLY = ("Only drafts ($draft, in Drafts) and copies of sent mail (in Sent alone) can be {verb} in this "
               "account: its server would never see any other email kept here.")
# A version's life (draft_version.state): the composition's draft (current), waiting to go (submitted), or no
# longer a draft: replaced by a newer version (superseded), gone out (sent), deleted (destroyed).
CURRENT, SUBMITTED, SUPERSEDED, SENT, DESTROYED = "current", "submitted", "superseded", "sent", "destroyed"
# The compositions whose lock this task holds: a send holds it across its save and its submit, which take it too.
_HELD: ContextVar[frozenset[int]] = ContextVar("plmail_held_compositions", default=frozenset())


@dataclass(frozen=True, slots=True)
class SavedDraft:
    message_id: int
    thread_id: int | None
    rfc_message_id: str
    account_id: int
    size: int = 0
    files: tuple[DraftFile, ...] = ()  # its attachments and inline images, by part path
    composition: int | None = None  # the composition it is a version of (its first version's id)


@dataclass(frozen=True, slots=True)
class LoadedDraft:
    message_id: int
    thread_id: int | None
    content: DraftContent  # without its attachments, which `files` lists
    files: tuple[DraftFile, ...]


def attachments_of(raw: bytes) -> list[tuple[str, OutgoingAttachment]]:
    """The files and inline images of a stored message, by part path, ready to go into a new version."""
    return [(p.path, OutgoingAttachment(p.filename or "", p.content_type, p.data,
                                        content_id=p.content_id if p.is_inline else None))
            for p in parse_mime(raw).parts if not p.is_calendar]


def draft_files(raw: bytes) -> tuple[DraftFile, ...]:
    return tuple(DraftFile(path, a.filename, a.content_type, len(a.data), a.content_id)
                 for path, a in attachments_of(raw))


def _named_in(html: str | None, content_id: str | None) -> bool:
    return html is not None and content_id is not None and f"cid:{content_id}" in html


def stranger(account_id: int, sender: Address) -> Identity:
    """A From that is none of the user's identities: a draft may say it, a submission of it is refused."""
    return Identity(id=0, account_id=account_id, email=sender.address, name=sender.name, reply_to=(), bcc=(),
                    text_signature="", html_signature="", is_primary=False, origin=IdentityOrigin.ALIAS,
                    updated_at=datetime.now(UTC))


def is_draft(message: WrittenMessage, drafts_label: int | None) -> bool:
    return flags_say_draft(message.flags) or (
        drafts_label is not None and drafts_label in message.labels)


class DraftService:
    def __init__(self, db: Database, pipeline: PostIngestPipeline, blobs: BlobStore, identities: IdentityService,
                 providers: ProviderRegistry, queues: Enqueuer | None) -> None:
        self.db = db
        self.pipeline = pipeline
        self.blobs = blobs
        self.identities = identities
        self.stores = providers.draft_stores
        self.queues = queues
        self.repo = DraftRepository(db)
        self.labels = LabelRepository(db)
        self.accounts = AccountAdminRepository(db)
        self.submissions = SubmissionRepository(db)
        self.versions = DraftVersionRepository(db)

    async def save(self, user_id: int, content: DraftContent, *, replaces: int | None = None,
                   now: datetime | None = None, keywords: frozenset[str] | None = None,
                   keep_parts: tuple[str, ...] = (), push: bool = True,
                   identity: Identity | None = None) -> SavedDraft:
        """Store the draft (a new version of the composition `replaces` belongs to, whose draft goes) and have the
        provider's Drafts follow. `replaces` may name any earlier version: another window's save since then is
        replaced too, so a composition has one draft. `keep_parts` names attachments of the replaced version (by
        part path); its inline images go along while the new HTML still shows them (cid:…), so an editor need
        not track them.
        `push` off keeps it from the provider's Drafts (a message sent at once, such as an invitation's answer).
        `identity`: the caller's `sendable` answer for `content.identity_id`, saving an autosave a second look."""
        if identity is None or identity.id != content.identity_id:
            identity = await self.identities.sendable(user_id, content.identity_id)
        lineage = await self._lineage(user_id, replaces) if replaces is not None else None
        async with self._composition(lineage):
            previous = await self._live_draft(user_id, lineage) if lineage is not None else None
            if previous is not None and (keep_parts or content.html_body) and previous.raw_path is not None:
                fresh = {a.content_id for a in content.attachments if a.content_id}
                carried = [a for path, a in attachments_of(await self.blobs.get(previous.raw_path))
                           if path in keep_parts or (a.content_id not in fresh
                                                     and _named_in(content.html_body, a.content_id))]
                content = dataclasses.replace(content, attachments=(*carried, *content.attachments))
            composed = compose(identity, content, now=now, size_limit=await self.size_limit(identity.account_id))
            saved = await self.store(user_id, identity, composed, keywords=keywords,
                                     has_files=bool(content.attachments))
            composition = lineage if lineage is not None else saved.message_id
            async with self.db.transaction():
                await self.versions.add(saved.message_id, composition, saved.account_id)
                if previous is not None:
                    await self._retire(previous, SUPERSEDED)
        if push or previous is not None:
            await self._push_composition(composition)
        return dataclasses.replace(saved, composition=composition)

    @contextlib.asynccontextmanager
    async def sending(self, user_id: int, replaces: int | None) -> AsyncIterator[None]:
        """Held across a send's last save and its submit, so no other window's save (an autosave still on its way
        when Send was pressed) comes between them and is left behind as a draft of a message that went."""
        lineage = await self._lineage(user_id, replaces) if replaces is not None else None
        async with self._composition(lineage):
            yield

    @contextlib.asynccontextmanager
    async def submitting(self, message_id: int) -> AsyncIterator[None]:
        """Held while a version is submitted: a version another window replaced, or that was sent or discarded,
        is refused rather than sent beside the draft that replaced it."""
        lineage = await self.versions.lineage_of(message_id)  # the lock is per composition: its lineage first
        async with self._composition(lineage):
            # read under the lock: another window may have replaced this version while we waited for it
            if lineage is not None and await self.versions.state_of(message_id) in RETIRED_STATES:
                raise NotFoundError("This draft was changed in another window (or sent or discarded there) since "
                                    "this version was saved, so it was not sent. Open the draft again to send what "
                                    "it says now.")
            yield

    async def live_version(self, user_id: int, draft_or_composition: int) -> int:
        """The composition's draft now (the newest version, whichever window saved it). Reads only: a draft saved
        before versions were kept is its own composition without a row written for it (a GET changes nothing)."""
        if await self.versions.lineage_of(draft_or_composition) is None:
            return draft_or_composition
        lineage = await self._lineage(user_id, draft_or_composition)
        live = await self.versions.live(lineage)
        if live is None:
            raise NotFoundError("This message was sent or discarded.")
        return live.message_id

    async def store(self, user_id: int, identity: Identity, composed: ComposedMessage, *,
                    keywords: frozenset[str] | None = None, label_ids: tuple[int, ...] | None = None,
                    has_files: bool = False, received_at: datetime | None = None) -> SavedDraft:
        """A composed message stored in the identity's account: a read draft in Drafts, unless the keywords
        and labels say otherwise (JMAP's Email/set create)."""
        roles = await self.labels.role_ids(user_id)
        labels = label_ids if label_ids is not None else (roles[LabelRole.DRAFTS],)
        wanted = keywords if keywords is not None else frozenset({DRAFT_FLAG, "$seen"})
        flags = tuple(sorted(k for k in wanted if k not in ("$seen", "$flagged")))
        message: IngestedMessage = parse_message(
            composed.raw, account_id=identity.account_id, received_at=received_at or datetime.now(UTC),
            label_ids=labels,
            is_draft=DRAFT_FLAG in flags, flags=flags, seen="$seen" in wanted, starred="$flagged" in wanted,
            source_ref=f"composed:{composed.message_id}",
        )
        # A reply belongs to the provider's conversation of what it answers: threading joins a conversation the
        # provider grouped only by its key, and the transport sends the reply into it (Gmail's threadId).
        answered = (*message.parsed.in_reply_to, *reversed(message.parsed.references))
        thread_key = await self.repo.provider_thread_of(identity.account_id, answered)
        if thread_key is not None:
            message = dataclasses.replace(message, provider_thread_key=thread_key)
        result = await self.pipeline.ingest([message])
        if not result.messages:
            reason = result.skipped[0].reason if result.skipped else "it was stored already"
            raise InvalidMessageError(f"The draft could not be stored: {reason}.")
        stored = result.messages[0]
        files = draft_files(composed.raw) if has_files else ()
        return SavedDraft(stored.id, stored.thread_id, composed.message_id, identity.account_id, len(composed.raw),
                          files)

    async def write(self, user_id: int, account_id: int, sender: Address, content: DraftContent, *,
                    keywords: frozenset[str], label_ids: tuple[int, ...], message_id: str | None = None,
                    sent_at: datetime | None = None, local_account: bool = False,
                    received_at: datetime | None = None) -> SavedDraft:
        """An email written whole, as JMAP's Email/set create gives it. In a provider's account only drafts can
        be written (its server would never see anything else); a draft reaches the provider's Drafts. The From
        need not be an identity here: sending it is what is refused (forbiddenFrom)."""
        roles = await self.labels.role_ids(user_id)
        drafts = roles[LabelRole.DRAFTS]
        kept_in_sent = not local_account and await self._kept_in_sent(account_id, roles, label_ids, keywords)
        if kept_in_sent:
            keywords = keywords | {"$seen"}
        elif not local_account and (drafts not in label_ids or DRAFT_FLAG not in keywords):
            raise ForbiddenError(_KEEPS_ONLY.format(verb="created"))
        identity = await self.identities.for_address(user_id, sender.address)
        if identity is None or identity.account_id != account_id:
            identity = stranger(account_id, sender)
        else:
            identity = dataclasses.replace(identity, name=sender.name)
        composed = compose(identity, dataclasses.replace(content, identity_id=identity.id), now=sent_at,
                           message_id=message_id, size_limit=await self.size_limit(account_id))
        saved = await self.store(user_id, identity, composed, keywords=keywords, label_ids=label_ids,
                                 received_at=received_at)
        if kept_in_sent:
            await self._enqueue_filing(account_id, saved.message_id)
        elif drafts in label_ids:
            await self.versions.add(saved.message_id, saved.message_id, account_id)
            if not local_account:
                await self._push_composition(saved.message_id)
        return saved

    async def import_draft(self, user_id: int, account_id: int, raw: bytes, *, label_ids: tuple[int, ...],
                           keywords: frozenset[str], received_at: datetime | None) -> SavedDraft:
        """A whole message a client uploaded, kept as a draft of a provider's account (JMAP's Email/import into
        Drafts): stored here and in the provider's Drafts, so the client can submit it next. Imported into Sent
        alone, it is a copy of mail sent elsewhere: kept in Sent here and at the provider."""
        roles = await self.labels.role_ids(user_id)
        if await self._kept_in_sent(account_id, roles, label_ids, keywords):
            return await self._import_sent(account_id, raw, label_ids=label_ids, keywords=keywords,
                                           received_at=received_at)
        if roles[LabelRole.DRAFTS] not in label_ids or DRAFT_FLAG not in keywords:
            raise ForbiddenError(_KEEPS_ONLY.format(verb="imported"))
        flags = tuple(sorted(k for k in keywords if k not in ("$seen", "$flagged")))
        message = parse_message(raw, account_id=account_id, received_at=received_at or datetime.now(UTC),
                                label_ids=label_ids, is_draft=True, flags=flags, seen="$seen" in keywords,
                                starred="$flagged" in keywords, source_ref="jmap-import")
        result = await self.pipeline.ingest([message])
        if not result.messages:
            reason = result.skipped[0].reason if result.skipped else "it is already stored"
            raise InvalidMessageError(f"The message could not be stored: {reason}.")
        stored = result.messages[0]
        await self.versions.add(stored.id, stored.id, account_id)
        await self._push_composition(stored.id)
        return SavedDraft(stored.id, stored.thread_id, stored.parsed.message_id or "", account_id, len(raw), ())

    async def _import_sent(self, account_id: int, raw: bytes, *, label_ids: tuple[int, ...], keywords: frozenset[str],
                           received_at: datetime | None) -> SavedDraft:
        """A copy of mail sent elsewhere, kept in the account's Sent (read, as the provider's copy will be) and
        filed at the provider by a job."""
        flags = tuple(sorted(k for k in keywords if k not in ("$seen", "$flagged", DRAFT_FLAG)))
        message = parse_message(raw, account_id=account_id, received_at=received_at or datetime.now(UTC),
                                label_ids=label_ids, is_draft=False, flags=flags, seen=True,
                                starred="$flagged" in keywords, source_ref="jmap-import")
        result = await self.pipeline.ingest([message])
        if not result.messages:
            reason = result.skipped[0].reason if result.skipped else "it is already stored"
            raise InvalidMessageError(f"The message could not be stored: {reason}.")
        stored = result.messages[0]
        await self._enqueue_filing(account_id, stored.id)
        return SavedDraft(stored.id, stored.thread_id, stored.parsed.message_id or "", account_id, len(raw), ())

    async def _kept_in_sent(self, account_id: int, roles: dict[LabelRole, int], label_ids: tuple[int, ...],
                            keywords: frozenset[str]) -> bool:
        """Whether a provider account keeps this email as a copy of mail sent elsewhere: in Sent alone (the one
        folder its server files it in), no draft, and the account's provider files such copies."""
        if set(label_ids) != {roles[LabelRole.SENT]} or DRAFT_FLAG in keywords:
            return False
        record = await self.accounts.for_job(account_id)
        return record is not None and self.keeps_sent_copies(record.provider_kind)

    def keeps_sent_copies(self, kind: ProviderKind) -> bool:
        """Whether an account of this provider can keep a copy of mail sent elsewhere in its Sent."""
        store = self.stores.get(kind)
        return store is not None and store.files_sent_copies

    async def file_kept_copy(self, account_id: int, message_id: int) -> None:
        """The job for a copy kept in Sent: stored in the provider's Sent (IMAP: APPEND with \\Seen; Gmail:
        messages.insert under SENT) the way the
        outbox files a sent message's copy, under the account's sync lock, and where it landed recorded, so the
        next sync finds it stored instead of storing it twice. A failure is shown with the account and raised,
        for the queue to try again; the copy stays in plmail meanwhile. A message the provider cannot take as it is
        (InvalidMessageError: Microsoft's attachment limit) is noted once and not tried again."""
        record = await self.accounts.for_job(account_id)
        store = self.stores.get(record.provider_kind) if record is not None else None
        message = await self.repo.get(message_id)
        if (record is None or store is None or message is None or message.account_id != account_id
                or message.raw_path is None or message.ref.identity() is not None):
            return  # the account or the message is gone, or it is filed already
        raw = await self.blobs.get(message.raw_path)
        try:
            async with self.accounts.session_lock(SYNC_LOCK, account_id, wait=60.0) as lock:
                if not lock.taken:
                    raise TimeoutError("the account is busy syncing")
                ref = await store.file_sent(record.account, raw, draft=None, receipt=SendReceipt(sent_elsewhere=True))
                if ref is not None:
                    await self.repo.set_ref(message.id, ref)
        except InvalidMessageError as exc:  # the provider cannot take this message: trying again cannot help
            await self.accounts.note_problem(
                account_id, f"A message kept in Sent cannot be filed in the mail server's Sent folder: {exc} "
                            f"plmail keeps it.")
        except Exception as exc:
            summary = getattr(exc, "summary", None) or type(exc).__name__
            await self.accounts.note_problem(
                account_id, f"A message kept in Sent is not in the mail server's Sent folder yet ({summary}); "
                            f"plmail keeps it and tries again.")
            raise

    async def _enqueue_filing(self, account_id: int, message_id: int) -> None:
        if self.queues is not None:
            await self.queues.enqueue(FILE_KEPT_COPY, unique_key=f"file-kept:{message_id}", account_id=account_id,
                                      message_id=message_id)

    async def load(self, user_id: int, message_id: int) -> LoadedDraft:
        """A draft as the composer reopens it: its fields, and its attachments by part path."""
        draft = await self._own_draft(user_id, message_id)
        if draft.raw_path is None:
            raise NotFoundError("The draft's text is not stored.")
        raw = await self.blobs.get(draft.raw_path)
        parsed = parse_mime(raw)
        identity = await self.identities.for_address(user_id, parsed.from_address or "")
        if identity is None or identity.account_id != draft.account_id:
            identity = await self.identities.primary(user_id, draft.account_id)
        if identity is None:
            raise NotFoundError("The draft's account has no address to send from.")
        content = DraftContent(
            identity_id=identity.id, to=parsed.to, cc=parsed.cc, bcc=parsed.bcc, subject=parsed.subject,
            text_body=parsed.body_text or "", html_body=parsed.body_html, in_reply_to=parsed.in_reply_to,
            references=parsed.references, reply_to=parsed.reply_to or None)
        return LoadedDraft(draft.id, draft.thread_id, content, draft_files(raw))

    async def discard(self, user_id: int, message_id: int) -> None:
        """Delete the draft here and at the provider; a send of it still waiting is canceled with it. `message_id`
        may be any version of the composition: its draft now is the one that goes."""
        lineage = await self._lineage(user_id, message_id)
        async with self._composition(lineage):
            draft = await self._live_draft(user_id, lineage)
            async with self.db.transaction():
                await self.submissions.cancel_pending_for(draft.id)
                await self._retire(draft, DESTROYED)
        await self._push_composition(lineage)

    async def forget(self, user_id: int, message_id: int) -> None:
        """A submitted message deleted here and its draft at the provider; its submission still sends what was
        submitted (JMAP's onSuccessDestroyEmail)."""
        found = await self.repo.owned(user_id, message_id)
        if found is None:
            raise NotFoundError("No such message.")
        async with self.db.transaction():
            await self._retire(found, DESTROYED)
        await self._push_composition(await self.versions.lineage_of(found.id) or found.id)

    async def restore(self, account_id: int, raw: bytes) -> int:
        """A message that was to be sent and did not go, stored as a draft again (and at the provider)."""
        record = await self.accounts.for_job(account_id)
        if record is None:
            raise NotFoundError("The account was removed.")
        roles = await self.labels.role_ids(record.user_id)
        message = parse_message(raw, account_id=account_id, received_at=datetime.now(UTC),
                                label_ids=(roles[LabelRole.DRAFTS],), is_draft=True, flags=(DRAFT_FLAG,), seen=True,
                                source_ref="restored-draft")
        result = await self.pipeline.ingest([message])
        if not result.messages:
            raise InvalidMessageError("The unsent message could not be stored as a draft again.")
        restored = result.messages[0].id
        await self.versions.add(restored, restored, account_id)
        await self._push_composition(restored)
        return restored

    # -- the lifecycle's other steps, taken by the outbox ----------------------------------------------------------

    async def submitted(self, message: WrittenMessage) -> None:
        """A send of the draft waits (its undo window or scheduled time): another window can no longer save it."""
        await self.versions.adopt(message.id, message.account_id)
        await self.versions.set_state(message.id, SUBMITTED)

    async def reopened(self, message_id: int) -> None:
        """Undone, canceled or failed: the message is the composition's draft again."""
        if await self.versions.state_of(message_id) is not None:
            await self.versions.set_state(message_id, CURRENT)

    async def became_sent(self, message: WrittenMessage, *, drafts_label: int, sent_label: int,
                          sent_as: ProviderRef | None) -> None:
        """The message went (inside the caller's transaction): Drafts → Sent, and its provider draft is removed by
        the push job, unless the provider sent that draft itself (`sent_as`, Graph), which is its Sent copy now."""
        ref = await self.repo.become_sent(message.id, drafts_label=drafts_label, sent_label=sent_label)
        if ref is not None and (ref.identity() is None or (sent_as is not None
                                                           and sent_as.identity() == ref.identity())):
            ref = None
        await self.versions.retire(message.id, message.account_id, SENT, ref)

    async def settle(self, message_id: int) -> None:
        """After a lifecycle step: the provider's Drafts follow the composition."""
        await self._push_composition(await self.versions.lineage_of(message_id) or message_id)

    async def size_limit(self, account_id: int) -> int:
        record = await self.accounts.for_job(account_id)
        if record is None:
            return DEFAULT_SIZE_LIMIT
        value = record.settings.get("size_limit") if isinstance(record.settings, dict) else None
        return int(value) if isinstance(value, int) and value > 0 else DEFAULT_SIZE_LIMIT

    # -- the provider's side (jobs on ingest) -----------------------------------------------------------------

    async def push(self, account_id: int, message_id: int, replaces: ProviderRef | None = None) -> None:
        """The push job: the provider's Drafts made to hold exactly the composition's draft now. `message_id` is
        the composition (or any version of it); `replaces`, a copy named by a job queued before versions were
        kept, goes too."""
        lineage = await self.versions.lineage_of(message_id)
        if lineage is None:
            draft = await self.repo.get(message_id)
            if draft is not None and is_draft(draft, None):
                lineage = await self.versions.adopt(draft.id, draft.account_id)
        if replaces is not None and replaces.identity() is not None:
            await self.discard_remote(account_id, replaces)
        if lineage is not None:
            await self.reconcile(account_id, lineage)

    async def reconcile(self, account_id: int, lineage: int) -> None:
        """Store the composition's live version at the provider (replacing the version before it, as a Gmail
        draft keeps its id) and delete every copy of a version that is no longer a draft: superseded, sent or
        discarded. A failure is raised for the job to try again (and the sweep after it), until it holds. Runs
        under the account's sync lock, so a sync never sees half of it and two runs never store one version
        twice; saves and sends go on meanwhile (a version retired while its copy was on the way is found by
        `set_ref` and its copy deleted in the next round)."""
        record = await self.accounts.for_job(account_id)
        store = self.stores.get(record.provider_kind) if record is not None else None
        if record is None or store is None:
            return
        async with self.accounts.session_lock(SYNC_LOCK, account_id, wait=60.0) as lock:
            if not lock.taken:
                raise TimeoutError("the account is busy syncing; its Drafts are brought in step later")
            pushed = False
            for _ in range(8):  # until a round finds nothing left to do
                worked = False
                retired = await self.versions.to_remove(account_id, lineage)
                live = await self.versions.live(lineage)
                draft = await self.repo.get(live.message_id) if live is not None else None
                if (not pushed and draft is not None and draft.account_id == account_id and is_draft(draft, None)
                        and draft.ref.identity() is None and draft.raw_path is not None):
                    pushed = True
                    replaced = next((v for v in reversed(retired) if v.state == SUPERSEDED), None) \
                        if store.updates_in_place else None
                    ref = await store.save_draft(record.account, await self.blobs.get(draft.raw_path),
                                                 replaces=replaced.ref if replaced is not None else None)
                    if ref is not None:
                        worked = True
                        if replaced is not None:  # the store replaced it (or updated it in place)
                            await self.versions.removed(replaced.message_id)
                            retired = [v for v in retired if v.message_id != replaced.message_id]
                        if await self.repo.set_ref(draft.id, ref, only_draft=True):
                            await self.submissions.set_draft_ref(draft.id, ref)
                        elif await self.versions.state_of(draft.id) in (None, CURRENT, SUBMITTED):
                            await store.discard_draft(record.account, ref)  # deleted or moved out meanwhile
                        else:
                            await self.versions.remember_copy(draft.id, ref)  # sent or replaced meanwhile
                for version in retired:
                    try:
                        await store.discard_draft(record.account, version.ref)
                    except Exception as exc:
                        await self.versions.failed(version.message_id, f"{type(exc).__name__}: {exc}")
                        raise
                    await self.versions.removed(version.message_id)
                    worked = True
                if not worked:
                    return

    async def sweep(self) -> int:
        """Every minute: compositions whose provider copies are still to delete, or whose draft has not reached
        the provider, get their push job again (a job that ran out of tries, or a change its last round missed)."""
        pending = await self.versions.pending()
        for account_id, lineage in pending:
            await self._enqueue_push(account_id, lineage)
        return len(pending)

    async def discard_remote(self, account_id: int, ref: ProviderRef) -> None:
        record = await self.accounts.for_job(account_id)
        store = self.stores.get(record.provider_kind) if record is not None else None
        if record is None or store is None:
            return
        async with self.accounts.session_lock(SYNC_LOCK, account_id, wait=60.0) as lock:
            if not lock.taken:
                raise TimeoutError("the account is busy syncing; the draft is removed at the provider later")
            await store.discard_draft(record.account, ref)

    # -- helpers ----------------------------------------------------------------------------------------------

    async def _push_composition(self, lineage: int) -> None:
        for account_id in await self.versions.accounts_of(lineage):
            await self._enqueue_push(account_id, lineage)

    async def _enqueue_push(self, account_id: int, lineage: int) -> None:
        """One push job per composition and account, however many saves come while it waits (autosave), and one
        more behind it. A key is refused while its job runs, and for the rest of the second it finished in (the
        queue keeps whole seconds): a send landing just after the running job's last look would otherwise leave
        the provider's copy to the minute's sweep. The second job runs a second later, after the lock is free."""
        if self.queues is None:
            return
        if await self.queues.enqueue(PUSH_DRAFT, unique_key=f"push_draft:{account_id}:{lineage}",
                                     account_id=account_id, message_id=lineage) is None:
            await self.queues.enqueue(PUSH_DRAFT, unique_key=f"push_draft:{account_id}:{lineage}:again",
                                      delay_seconds=1, account_id=account_id, message_id=lineage)

    async def _lineage(self, user_id: int, message_id: int) -> int:
        lineage = await self.versions.lineage_of(message_id)
        if lineage is None:
            draft = await self._own_draft(user_id, message_id)
            return await self.versions.adopt(draft.id, draft.account_id)
        latest = await self.versions.latest(lineage)
        record = await self.accounts.for_job(latest.account_id) if latest is not None else None
        if record is None or record.user_id != user_id:
            raise NotFoundError("No such draft.")
        return lineage

    async def _live_draft(self, user_id: int, lineage: int) -> WrittenMessage:
        live = await self.versions.live(lineage)
        if live is None:
            raise ConflictError("This message was sent or discarded in another window, so this version was not "
                                "saved. Copy what you still need into a new message.", reason="draftFinished")
        if live.state == SUBMITTED:
            raise ConflictError("This message is on its way (Undo it first to change it), so this version was not "
                                "saved.", reason="draftSubmitted")
        return await self._own_draft(user_id, live.message_id)

    @contextlib.asynccontextmanager
    async def _composition(self, lineage: int | None) -> AsyncIterator[None]:
        """Saves, discards and sends of one composition one after another, across processes. Taken again by the
        task that holds it (a send's save and submit), it is already held."""
        if lineage is None or lineage in _HELD.get():
            yield
            return
        async with self.accounts.session_lock(DRAFT_LOCK, lineage & 0x7FFFFFFF, wait=30.0) as lock:
            if not lock.taken:
                raise TimeoutError("another window is saving this draft; try again")
            token = _HELD.set(_HELD.get() | {lineage})
            try:
                yield
            finally:
                _HELD.reset(token)

    async def _retire(self, draft: WrittenMessage, state: str) -> None:
        """The version is no longer the draft (inside a transaction): gone here, its provider copy to delete."""
        await self.submissions.detach_message(draft.id)
        deleted = await self.repo.delete_with_ref(draft.id)
        ref = deleted[2] if deleted is not None else draft.ref
        await self.versions.retire(draft.id, draft.account_id, state, ref if ref.identity() is not None else None)
        if deleted is not None:
            thread_id, labels, _ = deleted
            await settle_deleted(self.db, draft.account_id, {draft.id: thread_id}, labels)

    async def _own_draft(self, user_id: int, message_id: int) -> WrittenMessage:
        found = await self.repo.owned(user_id, message_id)
        if found is None:
            raise NotFoundError("No such draft.")
        roles = await self.labels.role_ids(user_id)
        if not is_draft(found, roles.get(LabelRole.DRAFTS)):
            raise ForbiddenError("Only drafts can be changed or discarded this way.")
        return found
