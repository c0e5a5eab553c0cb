"""Folder discovery: IMAP folders become mailbox rows, special-use roles become the role labels, and the
hierarchy becomes label chains through the one LabelResolver.

Discovery runs before any message is synced, so a folder another client created exists, with its label
chain, before a message tries to resolve into it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from plmail.db.database import Database
from plmail.db.repos.account_admin import AccountRecord
from plmail.domain.enums import LabelRole
from plmail.mail.labels import BindingHandle, LabelResolver
from plmail.mail.settle import announce
from plmail.providers.imap.client import ImapClient
from plmail.providers.imap.models import Mailbox
from plmail.providers.imap.repos.mailboxes import MailboxRepository, MailboxRow

ROLE_OF_FLAG: dict[str, LabelRole] = {
    "\\Inbox": LabelRole.INBOX,
    "\\Sent": LabelRole.SENT,
    "\\Drafts": LabelRole.DRAFTS,
    "\\Trash": LabelRole.TRASH,
    "\\Junk": LabelRole.SPAM,
    "\\Archive": LabelRole.ARCHIVE,
}
FLAG_OF_ROLE = {role: flag for flag, role in ROLE_OF_FLAG.items()}
# Views of mail that lives elsewhere (Gmail's All Mail, a flagged view): syncing them would store it twice.
VIRTUAL_FLAGS = frozenset({"\\All", "\\Flagged"})
# Servers without SPECIAL-USE: the names clients usually give these folders, lower-cased.
_ROLE_NAMES: dict[LabelRole, frozenset[str]] = {
    LabelRole.SENT: frozenset({"sent", "sent items", "sent messages", "sent mail", "gesendet",
                               "gesendete objekte", "gesendete elemente"}),
    LabelRole.DRAFTS: frozenset({"drafts", "draft", "entwürfe", "entwurf"}),
    LabelRole.TRASH: frozenset({"trash", "deleted items", "deleted messages", "papierkorb", "gelöschte elemente",
                                "gelöschte objekte", "bin"}),
    LabelRole.SPAM: frozenset({"junk", "spam", "junk e-mail", "junk email", "bulk mail", "spamverdacht"}),
    LabelRole.ARCHIVE: frozenset({"archive", "archiv", "archives"}),
}
# The order a person would want their history in: Inbox, Sent, Drafts, own folders, Archive, Spam, Trash.
_RANK: dict[LabelRole | None, int] = {
    LabelRole.INBOX: 0, LabelRole.SENT: 1, LabelRole.DRAFTS: 2, None: 3, LabelRole.ARCHIVE: 4,
    LabelRole.SPAM: 5, LabelRole.TRASH: 6,
}
IDLE_ROLES = frozenset({LabelRole.INBOX, LabelRole.SPAM})


def role_of(special_use: str | None) -> LabelRole | None:
    return ROLE_OF_FLAG.get(special_use) if special_use else None


def import_rank(row: MailboxRow) -> tuple[int, str]:
    return _RANK[role_of(row.special_use)], row.full_path.lower()  # every role has a rank


def assign_roles(mailboxes: Sequence[Mailbox]) -> dict[str, str]:
    """path -> special-use flag: the server's flags first (one folder per role), then well-known names for
    roles the server left unassigned."""
    assigned: dict[str, str] = {}
    taken: set[str] = set()
    for box in mailboxes:
        flag = "\\Inbox" if box.path.upper() == "INBOX" else box.special_use
        if flag is None or flag in taken:
            continue
        if flag in ROLE_OF_FLAG or flag in VIRTUAL_FLAGS:
            assigned[box.path] = flag
            if flag in ROLE_OF_FLAG:
                taken.add(flag)
    for box in mailboxes:
        if box.path in assigned or len(box.segments) != 1:
            continue
        name = box.path.strip().lower()
        for role, names in _ROLE_NAMES.items():
            flag = FLAG_OF_ROLE[role]
            if flag not in taken and name in names:
                assigned[box.path] = flag
                taken.add(flag)
                break
    return assigned


@dataclass(frozen=True, slots=True)
class Discovery:
    listed: list[MailboxRow]  # selectable folders on the server now
    gone: list[MailboxRow]  # rows of folders the server no longer lists


class MailboxSyncer:
    def __init__(self, db: Database, mailboxes: MailboxRepository, resolver: LabelResolver) -> None:
        self.db = db
        self.mailboxes = mailboxes
        self.resolver = resolver

    async def discover(self, client: ImapClient, account: AccountRecord) -> Discovery:
        listed = [box for box in await client.list_mailboxes() if box.selectable]
        flags = assign_roles(listed)
        before = {row.full_path: row for row in await self.mailboxes.for_account(account.id)}
        bound: list[int] = []
        for box in listed:
            flag = flags.get(box.path)
            role = role_of(flag)
            virtual = flag in VIRTUAL_FLAGS
            known = before.get(box.path)
            mailbox_id = await self.mailboxes.upsert(
                account.id, path=box.path, name=box.segments[-1], delimiter=box.delimiter,
                special_use=flag, sync_enabled=not virtual, idle_enabled=role in IDLE_ROLES,
            )
            if known is not None and known.label_id is not None and known.special_use == flag:
                continue  # bound already; the user may have renamed or moved its label since
            handle = BindingHandle(mailbox_id=mailbox_id)
            if role is not None:
                resolved = await self.resolver.resolve(user_id=account.user_id, account_id=account.id, path=(),
                                                       role=role, handle=handle)
            else:
                resolved = await self.resolver.resolve(user_id=account.user_id, account_id=account.id,
                                                       path=_label_path(box), handle=handle)
            bound.append(resolved.label_id)
        if bound:
            await announce(self.db, account.id, {}, bound)  # phones learn of the new mailboxes
        rows = {row.full_path: row for row in await self.mailboxes.for_account(account.id)}
        paths = {box.path for box in listed}
        return Discovery(
            listed=[rows[box.path] for box in listed if box.path in rows],
            gone=[row for path, row in rows.items() if path not in paths],
        )


def _label_path(box: Mailbox) -> tuple[str, ...]:
    """"Projects/2026" is the label 2026 inside Projects; a folder inside INBOX nests under the Inbox label."""
    segments = list(box.segments)
    if segments and segments[0].upper() == "INBOX" and len(segments) > 1:
        segments[0] = "Inbox"  # the role label's name, so find-or-create lands on it
    return tuple(segments)
