"""Email/set and Email/import: what a phone may change, handed to the services the web UI uses.

Keywords and mailboxes become ThreadOperations calls (which record the change log and queue
provider propagation); destroying an Email moves it to Trash and never deletes it; an import goes
through the ingest pipeline like any other arriving mail.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from plmail.db.database import Database
from plmail.db.repos.jmap_mailboxes import JmapMailboxRepository
from plmail.db.repos.operations import OperationRepository, OwnedMessage
from plmail.domain.enums import ProviderKind
from plmail.jmap.args import parse_id
from plmail.jmap.errors import SetError, invalid_properties
from plmail.mail.ingest import parse_message
from plmail.mail.operations import ThreadOperations
from plmail.mail.pipeline import PostIngestPipeline

SETTABLE_KEYWORDS = ("$seen", "$flagged")
_FLAG_KEYWORDS = {"\\draft": "$draft", "$draft": "$draft", "\\answered": "$answered", "$answered": "$answered"}
_KEYWORD = re.compile(r"^[\x21-\x7e]{1,255}$")
_FORBIDDEN_KEYWORD_CHARS = set('()"{]%*\\')


@dataclass(slots=True)
class EmailChange:
    """The validated effect of one update: what to switch and which labels to move."""

    email_id: int
    seen: bool | None = None
    starred: bool | None = None
    add: frozenset[int] = frozenset()
    remove: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class Imported:
    id: int
    thread_id: int | None
    size: int


@dataclass(slots=True)
class _Patch:
    keywords: dict[str, bool] | None = None
    keyword_edits: dict[str, bool] = field(default_factory=dict)
    mailboxes: list[str] | None = None
    mailbox_edits: dict[str, bool] = field(default_factory=dict)


def _keyword(value: str) -> str:
    lowered = value.lower()
    if not _KEYWORD.match(lowered) or _FORBIDDEN_KEYWORD_CHARS & set(lowered):
        raise invalid_properties(f"{value!r} is not a keyword.", "keywords")
    return lowered


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def parse_patch(patch: Mapping[str, Any]) -> _Patch:
    result = _Patch()
    for path, value in patch.items():
        head, _, rest = path.partition("/")
        if head == "keywords" and not rest:
            if not isinstance(value, dict) or not all(v is True for v in value.values()):
                raise invalid_properties("'keywords' maps keywords to true.", "keywords")
            result.keywords = {_keyword(k): True for k in value}
        elif head == "keywords" and "/" not in rest:
            if value not in (True, None):
                raise invalid_properties("A keyword patch is true or null.", path)
            result.keyword_edits[_keyword(_unescape(rest))] = value is True
        elif head == "mailboxIds" and not rest:
            if not isinstance(value, dict) or not all(v is True for v in value.values()):
                raise invalid_properties("'mailboxIds' maps mailbox ids to true.", "mailboxIds")
            result.mailboxes = list(value)
        elif head == "mailboxIds" and "/" not in rest:
            if value not in (True, None):
                raise invalid_properties("A mailbox patch is true or null.", path)
            result.mailbox_edits[_unescape(rest)] = value is True
        else:
            raise invalid_properties("Only keywords and mailboxIds can be changed.", path)
    if (result.keywords is not None and result.keyword_edits) or (result.mailboxes is not None
                                                                   and result.mailbox_edits):
        raise SetError("invalidPatch", "A property and a path inside it cannot both be patched.")
    return result


def current_keywords(message: OwnedMessage, flags: Sequence[str]) -> set[str]:
    found = {_FLAG_KEYWORDS[f.lower()] for f in flags if f.lower() in _FLAG_KEYWORDS}
    return found | ({"$seen"} if message.seen else set()) | ({"$flagged"} if message.starred else set())


class EmailWriter:
    def __init__(self, db: Database, operations: ThreadOperations, pipeline: PostIngestPipeline) -> None:
        self.owned = OperationRepository(db)
        self.mailboxes = JmapMailboxRepository(db)
        self.operations = operations
        self.pipeline = pipeline

    async def messages(self, user_id: int, account_id: int, ids: Sequence[int]) -> dict[int, OwnedMessage]:
        return {m.id: m for m in await self.owned.messages(user_id, ids) if m.account_id == account_id}

    async def resolve_mailboxes(self, user_id: int, account_id: int, mailbox_ids: Sequence[str]) -> dict[str, int]:
        """Mailbox id (already free of creation ids) -> label id; unknown ids are left out."""
        numeric = {m: parse_id(m) for m in mailbox_ids}
        labels = await self.mailboxes.labels_of_bindings(user_id, account_id,
                                                         [n for n in numeric.values() if n is not None])
        return {m: labels[n] for m, n in numeric.items() if n is not None and n in labels}

    def plan(self, message: OwnedMessage, flags: Sequence[str], patch: _Patch, labels: Mapping[str, int]
             ) -> EmailChange:
        change = EmailChange(message.id)
        have = current_keywords(message, flags)
        if patch.keywords is not None:
            want = set(patch.keywords)
        else:
            want = {k for k in have if patch.keyword_edits.get(k, True)} | {k for k, on in patch.keyword_edits.items()
                                                                            if on}
        if (want ^ have) - set(SETTABLE_KEYWORDS):
            raise invalid_properties("Only $seen and $flagged can be changed here.", "keywords")
        if ("$seen" in want) != message.seen:
            change.seen = "$seen" in want
        if ("$flagged" in want) != message.starred:
            change.starred = "$flagged" in want
        if patch.mailboxes is not None or patch.mailbox_edits:
            requested = patch.mailboxes if patch.mailboxes is not None else list(patch.mailbox_edits)
            unknown = [m for m in requested if m not in labels]
            if unknown and (patch.mailboxes is not None or any(patch.mailbox_edits[m] for m in unknown)):
                raise invalid_properties(f"No such mailbox: {', '.join(unknown)}.", "mailboxIds")
            if patch.mailboxes is not None:
                target = {labels[m] for m in patch.mailboxes}
            else:
                target = set(message.labels)
                for mailbox, on in patch.mailbox_edits.items():
                    if mailbox in labels:
                        (target.add if on else target.discard)(labels[mailbox])
            if not target:
                raise invalid_properties("An email must stay in at least one mailbox.", "mailboxIds")
            change.add = frozenset(target - message.labels)
            change.remove = frozenset(message.labels - target)
        return change

    async def apply(self, user_id: int, changes: Sequence[EmailChange]) -> None:
        """Grouped by effect, so marking fifty emails read is one operation, not fifty."""
        seen: dict[bool, list[int]] = defaultdict(list)
        starred: dict[bool, list[int]] = defaultdict(list)
        moves: dict[tuple[frozenset[int], frozenset[int]], list[int]] = defaultdict(list)
        for change in changes:
            if change.seen is not None:
                seen[change.seen].append(change.email_id)
            if change.starred is not None:
                starred[change.starred].append(change.email_id)
            if change.add or change.remove:
                moves[(change.add, change.remove)].append(change.email_id)
        for (add, remove), ids in moves.items():
            await self.operations.change_labels(user_id, ids, add=add, remove=remove)
        for value, ids in seen.items():
            await self.operations.set_seen(user_id, value, message_ids=ids)
        for value, ids in starred.items():
            await self.operations.set_starred(user_id, value, message_ids=ids)

    async def trash(self, user_id: int, ids: Sequence[int]) -> None:
        """Email/set destroy is a move to Trash (Trash on, Inbox off); nothing is ever deleted."""
        if ids:
            await self.operations.trash(user_id, message_ids=ids)

    async def import_email(self, account_id: int, provider: ProviderKind, raw: bytes, labels: Sequence[int],
                           keywords: set[str], received_at: datetime | None) -> Imported:
        if provider is not ProviderKind.LOCAL:
            raise SetError("forbidden", "Only local archive accounts take imports: a provider account's server "
                                        "would never see the message.")
        flags = tuple(k for k in ("$draft", "$answered") if k in keywords)
        message = parse_message(raw, account_id=account_id, label_ids=tuple(labels), seen="$seen" in keywords,
                                starred="$flagged" in keywords, flags=flags, is_draft="$draft" in keywords,
                                received_at=received_at or datetime.now(UTC), source_ref="jmap-import")
        result = await self.pipeline.ingest([message])
        if not result.messages:
            reason = result.skipped[0].reason if result.skipped else "it is already stored"
            raise SetError("invalidEmail", f"The message could not be stored: {reason}.")
        stored = result.messages[0]
        return Imported(stored.id, stored.thread_id, len(raw))
