"""Gmail's labels onto the user's labels: system labels to roles, `Work/Invoices` into a parent chain.

Gmail has no folders and no mailbox rows: a message's place is its labels. The ones that are states rather
than places (UNREAD, STARRED) become read and star; IMPORTANT, CHAT and the CATEGORY_* tabs are kept on the
message as Gmail's label ids, where the categoriser reads the tabs. A message with no place-label at all is
archived, and carries the Archive label as location bookkeeping.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from plmail.db.database import Database
from plmail.db.repos.account_admin import AccountRecord
from plmail.db.repos.gmail_messages import GmailMessageRepository
from plmail.domain.enums import LabelRole
from plmail.mail.labels import BindingHandle, LabelResolver
from plmail.providers.gmail.client import GmailSession

ROLE_OF_SYSTEM = {
    "INBOX": LabelRole.INBOX, "SENT": LabelRole.SENT, "DRAFT": LabelRole.DRAFTS, "TRASH": LabelRole.TRASH,
    "SPAM": LabelRole.SPAM,
}
SYSTEM_OF_ROLE = {role: label for label, role in ROLE_OF_SYSTEM.items()}
# Gmail system labels that are a state or a view, not a place.
NOT_PLACES = frozenset({"UNREAD", "STARRED", "IMPORTANT", "CHAT", "CATEGORY_PERSONAL", "CATEGORY_SOCIAL",
                        "CATEGORY_PROMOTIONS", "CATEGORY_UPDATES", "CATEGORY_FORUMS", "YELLOW_STAR"})
# Labels Gmail does not let anyone add or remove.
NOT_SETTABLE = frozenset({"SENT", "DRAFT", "CHAT"})


@dataclass(frozen=True, slots=True)
class LabelMap:
    by_gmail: dict[str, int]  # Gmail label id -> the user's label id
    archive: int

    def knows(self, gmail_ids: Iterable[str]) -> bool:
        return all(g in self.by_gmail or g in NOT_PLACES or g.startswith("CATEGORY_") for g in gmail_ids)

    def labels_for(self, gmail_ids: Sequence[str]) -> tuple[int, ...]:
        mapped = tuple(dict.fromkeys(self.by_gmail[g] for g in gmail_ids if g in self.by_gmail))
        return mapped or (self.archive,)


class GmailLabelSyncer:
    def __init__(self, db: Database) -> None:
        self.resolver = LabelResolver(db)
        self.repo = GmailMessageRepository(db)

    async def sync(self, session: GmailSession, record: AccountRecord) -> LabelMap:
        """Read Gmail's label list and give every label the user's label and this account's binding."""
        by_gmail: dict[str, int] = {}
        for label in await session.labels():
            role = ROLE_OF_SYSTEM.get(label.id)
            if role is not None:
                resolved = await self.resolver.resolve(user_id=record.user_id, account_id=record.id, path=(),
                                                       role=role, handle=BindingHandle(provider_key=label.id))
            elif label.type == "user":
                path = [segment for segment in label.name.split("/") if segment.strip()]
                if not path:
                    continue
                resolved = await self.resolver.resolve(user_id=record.user_id, account_id=record.id, path=path,
                                                       handle=BindingHandle(provider_key=label.id))
            else:
                continue
            by_gmail[label.id] = resolved.label_id
        archive = await self.resolver.resolve(user_id=record.user_id, account_id=record.id, path=(),
                                              role=LabelRole.ARCHIVE)
        return LabelMap(by_gmail, archive.label_id)

    async def current(self, record: AccountRecord) -> LabelMap | None:
        """The bindings made by the last label sync, without asking Gmail; None before the first one."""
        by_gmail: dict[str, int] = {}
        archive: int | None = None
        for binding in await self.repo.bindings(record.id):
            if binding.gmail_label_id:
                by_gmail[binding.gmail_label_id] = binding.label_id
            if binding.role is LabelRole.ARCHIVE:
                archive = binding.label_id
        if archive is None:
            return None
        return LabelMap(by_gmail, archive)
