"""Drafts are mail: a message row in Drafts carrying `$draft`, built from structured fields into real MIME,
stored through the same pipeline as arriving mail (so a reply joins its conversation at once), and kept in
step with the provider's Drafts by the provider's draft store.

Saving again writes a new message and removes the previous version, here and at the provider, as every
mail client does over IMAP (a message cannot change; a draft is replaced). The provider is told by a job on
`ingest` under the account's sync lock, so a sync never sees a half-written draft and stores it twice.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from plmail.db.database import Database
from plmail.db.repos.account_admin import SYNC_LOCK, AccountAdminRepository
from plmail.db.repos.drafts import DraftRepository, WrittenMessage
from plmail.db.repos.labels import LabelRepository
from plmail.db.repos.submissions import SubmissionRepository
from plmail.domain.enums import LabelRole
from plmail.domain.errors import ForbiddenError, InvalidMessageError, NotFoundError
from plmail.domain.ingest import IngestedMessage, ProviderRef
from plmail.domain.jobs import DISCARD_DRAFT, PUSH_DRAFT
from plmail.domain.outgoing import DraftContent, Identity
from plmail.domain.ports import Enqueuer
from plmail.domain.registry import ProviderRegistry
from plmail.mail.blobs import BlobStore
from plmail.mail.compose import DEFAULT_SIZE_LIMIT, ComposedMessage, compose
from plmail.mail.identities import IdentityService
from plmail.mail.ingest import parse_message
from plmail.mail.pipeline import PostIngestPipeline
from plmail.mail.settle import settle_deleted

log = logging.getLogger(__name__)

DRAFT_FLAG = "$draft"


@dataclass(frozen=True, slots=True)
class SavedDraft:
    message_id: int
    thread_id: int | None
    rfc_message_id: str
    account_id: int


def ref_json(ref: ProviderRef | None) -> dict[str, Any] | None:
    """A provider reference as a job argument."""
    if ref is None or ref.identity() is None:
        return None
    return {"mailbox_id": ref.mailbox_id, "imap_uid": ref.imap_uid, "gmail_id": ref.gmail_id,
            "graph_id": ref.graph_id}


def ref_from_json(value: Any) -> ProviderRef | None:
    if not isinstance(value, dict):
        return None
    ref = ProviderRef(mailbox_id=value.get("mailbox_id"), imap_uid=value.get("imap_uid"),
                      gmail_id=value.get("gmail_id"), graph_id=value.get("graph_id"))
    return ref if ref.identity() is not None else None


def is_draft(message: WrittenMessage, drafts_label: int | None) -> bool:
    return DRAFT_FLAG in message.flags or "\\Draft" in message.flags or (
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

    async def save(self, user_id: int, content: DraftContent, *, replaces: int | None = None,
                   now: datetime | None = None, keywords: frozenset[str] = frozenset()) -> SavedDraft:
        """Store the draft (a new version of `replaces`, which goes) and have the provider's Drafts follow."""
        identity = await self.identities.sendable(user_id, content.identity_id)
        previous = await self._own_draft(user_id, replaces) if replaces is not None else None
        composed = compose(identity, content, now=now, size_limit=await self.size_limit(identity.account_id))
        saved = await self.store(user_id, identity, composed, keywords=keywords)
        if previous is not None:
            await self._delete_local(previous)
        await self._push(saved.account_id, saved.message_id, previous.ref if previous is not None else None)
        return saved

    async def store(self, user_id: int, identity: Identity, composed: ComposedMessage, *,
                    keywords: frozenset[str] = frozenset(), label_ids: tuple[int, ...] | None = None) -> SavedDraft:
        """A composed message stored as a draft of the identity's account (Drafts unless labels are given)."""
        roles = await self.labels.role_ids(user_id)
        labels = label_ids if label_ids is not None else (roles[LabelRole.DRAFTS],)
        flags = tuple(dict.fromkeys([DRAFT_FLAG, *(k for k in keywords if k not in ("$seen", "$flagged"))]))
        message: IngestedMessage = parse_message(
            composed.raw, account_id=identity.account_id, received_at=datetime.now(UTC), label_ids=labels,
            is_draft=DRAFT_FLAG in flags, flags=flags, seen=True, starred="$flagged" in keywords,
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
        return SavedDraft(stored.id, stored.thread_id, composed.message_id, identity.account_id)

    async def discard(self, user_id: int, message_id: int) -> None:
        """Delete the draft here and at the provider."""
        draft = await self._own_draft(user_id, message_id)
        await self._delete_local(draft)
        ref = ref_json(draft.ref)
        if ref is not None and self.queues is not None:
            await self.queues.enqueue(DISCARD_DRAFT, account_id=draft.account_id, ref=ref)

    async def size_limit(self, account_id: int) -> int:
        record = await self.accounts.for_job(account_id)
        if record is None:
            return DEFAULT_SIZE_LIMIT
        value = record.settings.get("size_limit") if isinstance(record.settings, dict) else None
        return int(value) if isinstance(value, int) and value > 0 else DEFAULT_SIZE_LIMIT

    # -- the provider's side (jobs on ingest) -----------------------------------------------------------------

    async def push(self, account_id: int, message_id: int, replaces: ProviderRef | None) -> None:
        """Store the draft at its provider, removing the version it replaces. A draft deleted or sent meanwhile
        is not left behind at the provider: whatever was just stored for it is removed again."""
        draft = await self.repo.get(message_id)
        if draft is None or not is_draft(draft, None):  # deleted, or sent before its draft got there
            if replaces is not None:
                await self.discard_remote(account_id, replaces)
            return
        record = await self.accounts.for_job(draft.account_id)
        store = self.stores.get(record.provider_kind) if record is not None else None
        if record is None or store is None or draft.raw_path is None:
            return
        raw = await self.blobs.get(draft.raw_path)
        async with self.accounts.session_lock(SYNC_LOCK, draft.account_id, wait=60.0) as lock:
            if not lock.taken:
                raise TimeoutError("the account is busy syncing; the draft is saved at the provider later")
            ref = await store.save_draft(record.account, raw, replaces=replaces)
            if ref is None:
                return
            if not await self.repo.set_ref(message_id, ref, only_draft=True):
                await store.discard_draft(record.account, ref)

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

    async def _push(self, account_id: int, message_id: int, replaces: ProviderRef | None) -> None:
        if self.queues is not None:
            await self.queues.enqueue(PUSH_DRAFT, account_id=account_id, message_id=message_id,
                                      replaces=ref_json(replaces))

    async def _own_draft(self, user_id: int, message_id: int) -> WrittenMessage:
        found = await self.repo.owned(user_id, message_id)
        if found is None:
            raise NotFoundError("No such draft.")
        roles = await self.labels.role_ids(user_id)
        if not is_draft(found, roles.get(LabelRole.DRAFTS)):
            raise ForbiddenError("Only drafts can be changed or discarded this way.")
        return found

    async def _delete_local(self, draft: WrittenMessage) -> None:
        async with self.db.transaction():
            await self.submissions.detach_message(draft.id)
            deleted = await self.repo.delete(draft.id)
            if deleted is not None:
                thread_id, labels = deleted
                await settle_deleted(self.db, draft.account_id, {draft.id: thread_id}, labels)
