"""Folder discovery: Graph's mail folders become label bindings, the well-known folders become the role
labels, and the hierarchy becomes label chains through the one LabelResolver.

Discovery runs before any message is read, so a folder created in Outlook exists, with its label, before
a message tries to land in it. A folder keeps the label it was first bound to: the user may have renamed
or moved that label since, and a second discovery must not undo it.
"""

from __future__ import annotations

from dataclasses import dataclass

from plmail.db.database import Database
from plmail.db.repos.account_admin import AccountRecord
from plmail.db.repos.labels import SYSTEM_LABELS
from plmail.domain.enums import LabelRole
from plmail.mail.labels import BindingHandle, LabelResolver
from plmail.mail.settle import announce
from plmail.providers.graph.client import GraphClient
from plmail.providers.graph.models import RemoteFolder
from plmail.providers.graph.repos.messages import GraphMessageRepository
from plmail.providers.graph.repos.state import FolderInfo, GraphState, GraphStateRepository

# Graph's well-known folder names and the roles they stand for.
WELL_KNOWN: dict[str, LabelRole] = {
    "inbox": LabelRole.INBOX,
    "sentitems": LabelRole.SENT,
    "drafts": LabelRole.DRAFTS,
    "deleteditems": LabelRole.TRASH,
    "junkemail": LabelRole.SPAM,
    "archive": LabelRole.ARCHIVE,
}
NAME_OF_ROLE = {role: name for name, role in WELL_KNOWN.items()}
# Mail waiting to be sent is not mail anyone has; syncing it would show drafts twice.
SKIPPED_WELL_KNOWN = ("outbox",)
# The order a person wants their history in: Inbox, Sent, Drafts, own folders, Archive, Spam, Trash.
_RANK: dict[LabelRole | None, int] = {
    LabelRole.INBOX: 0, LabelRole.SENT: 1, LabelRole.DRAFTS: 2, None: 3, LabelRole.ARCHIVE: 4,
    LabelRole.SPAM: 5, LabelRole.TRASH: 6,
}
_ROLE_LABEL_NAME = {role: name for role, name, _, _ in SYSTEM_LABELS}


@dataclass(frozen=True, slots=True)
class Folder:
    """A synced folder: Graph's id and where it lands in the user's labels."""

    id: str
    path: tuple[str, ...]
    role: LabelRole | None
    label_id: int | None
    total: int

    @property
    def name(self) -> str:
        return "/".join(self.path)


def import_rank(folder: Folder | FolderInfo) -> tuple[int, str]:
    return _RANK.get(folder.role, _RANK[None]), "/".join(folder.path).lower()


@dataclass(frozen=True, slots=True)
class Discovery:
    folders: list[Folder]  # what the account syncs now, in import order
    gone: list[str]  # ids of folders seen before that Graph no longer lists


class GraphFolderSyncer:
    def __init__(self, db: Database, client: GraphClient, resolver: LabelResolver) -> None:
        self.db = db
        self.client = client
        self.resolver = resolver
        self.state = GraphStateRepository(db)
        self.messages = GraphMessageRepository(db)

    async def discover(self, record: AccountRecord, state: GraphState) -> Discovery:
        account = record.account
        listed = await self.client.folders(account)
        roles = await self._roles(record, state, listed)
        skipped = {folder_id for name, folder_id in roles.items() if name in SKIPPED_WELL_KNOWN}
        by_id = {f.id: f for f in listed}
        bound = {f.folder_id: f.label_id for f in await self.messages.folder_labels(record.id)}
        role_of = {folder_id: WELL_KNOWN[name] for name, folder_id in roles.items() if name in WELL_KNOWN}
        folders: list[Folder] = []
        new_bindings: list[int] = []
        for remote in listed:
            if self._skipped(remote, by_id, skipped):
                continue
            role = role_of.get(remote.id)
            path = self._path(remote, by_id, role_of)
            label_id = bound.get(remote.id)
            if label_id is None:
                handle = BindingHandle(provider_key=remote.id)
                if role is not None:
                    resolved = await self.resolver.resolve(user_id=record.user_id, account_id=record.id, path=(),
                                                           role=role, handle=handle)
                else:
                    resolved = await self.resolver.resolve(user_id=record.user_id, account_id=record.id,
                                                           path=path, handle=handle)
                label_id = resolved.label_id
                new_bindings.append(resolved.label_id)
            folders.append(Folder(remote.id, path, role, label_id, remote.total))
        if new_bindings:
            await announce(self.db, record.id, {}, new_bindings)  # phones learn of the new mailboxes
        await self.state.set_folders(record.id, [FolderInfo(f.id, f.path, f.role, f.total) for f in folders])
        seen = {f.id for f in folders}
        gone = sorted((set(state.folders) | set(state.links) | set(state.imports)) - seen)
        return Discovery(sorted(folders, key=import_rank), gone)

    async def _roles(self, record: AccountRecord, state: GraphState, listed: list[RemoteFolder]) -> dict[str, str]:
        """well-known name -> folder id. v1.0 does not say which listed folder is which, so Graph is asked by
        name; the answers are kept, and asked again only for names still unknown while the listing shows a
        folder not placed before."""
        listed_ids = {f.id for f in listed}
        roles = {name: folder_id for name, folder_id in state.roles.items() if folder_id in listed_ids}
        unexplained = listed_ids - set(state.folders) - set(roles.values())
        if state.roles and not unexplained:
            return roles
        for name in (*WELL_KNOWN, *SKIPPED_WELL_KNOWN):
            if name not in roles:
                found = await self.client.well_known(record.account, name)
                if found is not None and found.id in listed_ids:
                    roles[name] = found.id
        if roles != state.roles:
            await self.state.set_roles(record.id, roles)
        return roles

    @staticmethod
    def _skipped(remote: RemoteFolder, by_id: dict[str, RemoteFolder], skipped: set[str]) -> bool:
        current: RemoteFolder | None = remote
        hops = 0
        while current is not None and hops < 64:
            if current.id in skipped:
                return True
            current = by_id.get(current.parent_id) if current.parent_id else None
            hops += 1
        return False

    @staticmethod
    def _path(remote: RemoteFolder, by_id: dict[str, RemoteFolder], role_of: dict[str, LabelRole]
              ) -> tuple[str, ...]:
        """Names from the top; a folder inside a well-known one nests under that role's label, so "Inbox/Team"
        lands inside the Inbox label whatever Outlook calls the inbox in the mailbox's language."""
        segments: list[str] = []
        current: RemoteFolder | None = remote
        hops = 0
        while current is not None and hops < 64:
            role = role_of.get(current.id)
            if role is not None:
                segments.append(_ROLE_LABEL_NAME.get(role, current.name))
                break
            segments.append(current.name)
            current = by_id.get(current.parent_id) if current.parent_id else None
            hops += 1
        return tuple(reversed([s for s in segments if s.strip()])) or (remote.name or remote.id,)
