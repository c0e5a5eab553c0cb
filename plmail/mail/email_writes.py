"""Changing and importing emails (JMAP's Email/set and Email/import), handed to the services the web UI uses.

Keywords and mailboxes become ThreadOperations calls (which record the change log and queue
provider propagation): every keyword is kept ($seen and $flagged in their columns, the rest as flags the
provider's propagator hands on where it can), and $junk / $notjunk are the web UI's Spam moves. Destroying
is MailDestroyer's; an import goes through the ingest pipeline like any other arriving mail.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from plmail.db.database import Database
from plmail.db.repos.operations import OperationRepository
from plmail.domain.enums import ProviderKind
from plmail.domain.errors import ForbiddenError, InvalidMessageError, ValidationError
from plmail.domain.mailstore import MailScope, OwnedMessage
from plmail.mail.ingest import parse_message
from plmail.mail.keywords import COLUMN_KEYWORDS, DRAFT, FLAGGED, JUNK, NOT_JUNK, SEEN, is_keyword, keywords_of
from plmail.mail.operations import ThreadOperations
from plmail.mail.pipeline import PostIngestPipeline
from plmail.mail.repos.jmap_mailboxes import JmapMailboxRepository


@dataclass(slots=True)
class EmailChange:
    """The validated effect of one update: what to switch and which labels to move."""

    email_id: int
    seen: bool | None = None
    starred: bool | None = None
    add: frozenset[int] = frozenset()
    remove: frozenset[int] = frozenset()
    keywords: dict[str, bool] = field(default_factory=dict)  # the others, set (True) or cleared


@dataclass(frozen=True, slots=True)
class Imported:
    id: int
    thread_id: int | None
    size: int


@dataclass(slots=True)
class EmailPatch:
    """A parsed Email/set update: the keywords or mailboxes as a whole, or edits to some of them."""

    keywords: dict[str, bool] | None = None
    keyword_edits: dict[str, bool] = field(default_factory=dict)
    mailboxes: list[str] | None = None
    mailbox_edits: dict[str, bool] = field(default_factory=dict)


def current_keywords(message: OwnedMessage, flags: Sequence[str]) -> set[str]:
    return keywords_of(flags, seen=message.seen, starred=message.starred)


class EmailWriter:
    def __init__(self, db: Database, operations: ThreadOperations, pipeline: PostIngestPipeline) -> None:
        self.owned = OperationRepository(db)
        self.mailboxes = JmapMailboxRepository(db)
        self.operations = operations
        self.pipeline = pipeline

    async def messages(self, user_id: int, scope: MailScope, ids: Sequence[int]) -> dict[int, OwnedMessage]:
        return {m.id: m for m in await self.owned.messages(user_id, ids) if m.account_id in scope.account_ids}

    async def resolve_mailboxes(self, user_id: int, scope: MailScope, mailbox_ids: Sequence[int]) -> dict[int, int]:
        """Mailbox id (a label binding, or in the unified account the label) -> label id; unknown ids are left out."""
        if scope.unified:
            return await self.mailboxes.owned_labels(user_id, list(mailbox_ids))
        return await self.mailboxes.labels_of_bindings(user_id, scope.account_id, list(mailbox_ids))

    async def mailbox_accounts(self, user_id: int, label_ids: Sequence[int]) -> list[int]:
        """The accounts whose provider keeps one of these labels (in the unified account, who owns a Mailbox)."""
        return await self.mailboxes.materialising_accounts(user_id, list(label_ids)) if label_ids else []

    def plan(self, message: OwnedMessage, flags: Sequence[str], patch: EmailPatch, labels: Mapping[str, int]
             ) -> EmailChange:
        change = EmailChange(message.id)
        have = current_keywords(message, flags)
        if patch.keywords is not None:
            want = set(patch.keywords)
        else:
            want = {k for k in have if patch.keyword_edits.get(k, True)} | {k for k, on in patch.keyword_edits.items()
                                                                            if on}
        bad = sorted(k for k in want if not is_keyword(k))
        if bad:
            raise ValidationError(f"Not a keyword: {', '.join(bad)}.", field="keywords")
        if JUNK in want and NOT_JUNK in want:
            raise ValidationError("An email cannot be $junk and $notjunk at once.", field="keywords")
        if (SEEN in want) != message.seen:
            change.seen = SEEN in want
        if (FLAGGED in want) != message.starred:
            change.starred = FLAGGED in want
        change.keywords = {k: k in want for k in sorted((want ^ have) - COLUMN_KEYWORDS)}
        if patch.mailboxes is not None or patch.mailbox_edits:
            requested = patch.mailboxes if patch.mailboxes is not None else list(patch.mailbox_edits)
            unknown = [m for m in requested if m not in labels]
            if unknown and (patch.mailboxes is not None or any(patch.mailbox_edits[m] for m in unknown)):
                raise ValidationError(f"No such mailbox: {', '.join(unknown)}.", field="mailboxIds")
            if patch.mailboxes is not None:
                target = {labels[m] for m in patch.mailboxes}
            else:
                target = set(message.labels)
                for mailbox, on in patch.mailbox_edits.items():
                    if mailbox in labels:
                        (target.add if on else target.discard)(labels[mailbox])
            if not target:
                raise ValidationError("An email must stay in at least one mailbox.", field="mailboxIds")
            change.add = frozenset(target - message.labels)
            change.remove = frozenset(message.labels - target)
        return change

    async def apply(self, user_id: int, changes: Sequence[EmailChange]) -> None:
        """Grouped by effect, so marking fifty emails read is one operation, not fifty."""
        seen: dict[bool, list[int]] = defaultdict(list)
        starred: dict[bool, list[int]] = defaultdict(list)
        moves: dict[tuple[frozenset[int], frozenset[int]], list[int]] = defaultdict(list)
        keywords: dict[tuple[str, bool], list[int]] = defaultdict(list)
        for change in changes:
            if change.seen is not None:
                seen[change.seen].append(change.email_id)
            if change.starred is not None:
                starred[change.starred].append(change.email_id)
            if change.add or change.remove:
                moves[(change.add, change.remove)].append(change.email_id)
            for keyword, on in change.keywords.items():
                keywords[(keyword, on)].append(change.email_id)
        for (add, remove), ids in moves.items():
            await self.operations.change_labels(user_id, ids, add=add, remove=remove)
        for value, ids in seen.items():
            await self.operations.set_seen(user_id, value, message_ids=ids)
        for value, ids in starred.items():
            await self.operations.set_starred(user_id, value, message_ids=ids)
        for (keyword, on), ids in sorted(keywords.items()):
            await self.operations.set_keyword(user_id, ids, keyword, on)
            if on and keyword == JUNK:
                await self.operations.spam(user_id, message_ids=ids)
            elif on and keyword == NOT_JUNK:
                await self.operations.not_spam(user_id, message_ids=ids)

    async def import_email(self, account_id: int, provider: ProviderKind, raw: bytes, labels: Sequence[int],
                           keywords: set[str], received_at: datetime | None) -> Imported:
        if provider is not ProviderKind.LOCAL:
            raise ForbiddenError("Only local archive accounts take imports: a provider account's server would never "
                                 "see the message.")
        bad = sorted(k for k in keywords if not is_keyword(k))
        if bad:
            raise ValidationError(f"Not a keyword: {', '.join(bad)}.", field="keywords")
        # Every keyword given is kept (RFC 8621 §4.8); $seen and $flagged live in their columns.
        flags = tuple(sorted(keywords - COLUMN_KEYWORDS))
        message = parse_message(raw, account_id=account_id, label_ids=tuple(labels), seen=SEEN in keywords,
                                starred=FLAGGED in keywords, flags=flags, is_draft=DRAFT in keywords,
                                received_at=received_at or datetime.now(UTC), source_ref="jmap-import")
        result = await self.pipeline.ingest([message])
        if not result.messages:
            reason = result.skipped[0].reason if result.skipped else "it is already stored"
            raise InvalidMessageError(f"The message could not be stored: {reason}.")
        stored = result.messages[0]
        return Imported(stored.id, stored.thread_id, len(raw))
