"""Labels are the one mechanism: LabelResolver maps provider folders and labels onto them, and
LabelManager is what the user does to them.

A label belongs to the user, not to an account; where it lives at a provider is a LabelBinding per
(label, account). Two accounts syncing a folder "Receipts" meet in one label with two bindings, so the
unified view falls out of the model instead of being rebuilt by matching names when rendering.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from plmail.db.database import Database
from plmail.db.repos.changes import ChangeLogRepository
from plmail.db.repos.labels import LabelRepository
from plmail.domain.enums import ChangeType, LabelRole
from plmail.domain.errors import NotFoundError, ValidationError
from plmail.domain.models import LabelInfo, SidebarLabel
from plmail.mail.changes import MailChangeRecorder, StateManager
from plmail.mail.repos.label_admin import LabelAdminRepository

COLOURS = ("gray", "red", "orange", "amber", "green", "teal", "blue", "violet", "pink")
MAX_NAME = 255


@dataclass(frozen=True, slots=True)
class BindingHandle:
    """Where a label lives at one account's provider: a folder row of ours (`mailbox_id`), the provider's own id
    for a label or folder it keeps (`provider_key`), or the name it tags messages with where it keeps the label
    only as a name on them (`provider_tag`). The provider decides which of these its labels are."""

    mailbox_id: int | None = None
    provider_key: str | None = None
    provider_tag: str | None = None


@dataclass(frozen=True, slots=True)
class ResolvedLabel:
    label_id: int
    binding_id: int


class LabelResolver:
    """The one find-or-create: the user's label first, then its binding for the account being synced.

    Caches ids, never rows, so a long-running sync job can keep using it across transactions.
    """

    def __init__(self, db: Database) -> None:
        self.labels = LabelRepository(db)
        self.admin = LabelAdminRepository(db)
        self.change_log = ChangeLogRepository(db)
        self._label_ids: dict[tuple[int, int | None, str], int] = {}
        self._role_ids: dict[tuple[int, LabelRole], int] = {}
        self._binding_ids: dict[tuple[int, int, BindingHandle], int] = {}

    async def label(self, user_id: int, path: Sequence[str], role: LabelRole | None = None) -> int:
        if role is not None:
            key = (user_id, role)
            if key not in self._role_ids:
                roles = await self.labels.role_ids(user_id)
                if role not in roles:
                    raise NotFoundError(f"The {role.value} label is missing.")
                self._role_ids[key] = roles[role]
            return self._role_ids[key]
        segments = [s.strip()[:MAX_NAME] for s in path if s and s.strip()]
        if not segments:
            raise ValidationError("A label needs a name.")
        parent: int | None = None
        for segment in segments:
            cache_key = (user_id, parent, segment)
            found = self._label_ids.get(cache_key)
            if found is None:
                found, created = await self.labels.find_or_create_noting(user_id, segment, parent)
                self._label_ids[cache_key] = found
                if created:  # a new folder at a provider is a new Mailbox of the unified account
                    await _record_labels(self.change_log, user_id, [found], ChangeType.CREATED)
            parent = found
        assert parent is not None
        return parent

    async def resolve(
        self, *, user_id: int, account_id: int, path: Sequence[str], role: LabelRole | None = None,
        handle: BindingHandle = BindingHandle(),
    ) -> ResolvedLabel:
        label_id = await self.label(user_id, path, role)
        return ResolvedLabel(label_id, await self.bind(label_id, account_id, handle))

    async def bind(self, label_id: int, account_id: int, handle: BindingHandle = BindingHandle()) -> int:
        key = (label_id, account_id, handle)
        cached = self._binding_ids.get(key)
        if cached is None:
            cached = await self.admin.upsert_binding(label_id, account_id, handle.mailbox_id, handle.provider_key,
                                                     handle.provider_tag)
            self._binding_ids[key] = cached
        return cached


class LabelManager:
    """The user's labels: listing them (the sidebar, the labels page), and creating, renaming, colouring,
    nesting, hiding and deleting the user's own."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.repo = LabelAdminRepository(db)
        self.labels = LabelRepository(db)
        self.change_log = ChangeLogRepository(db)

    async def sidebar(self, user_id: int) -> list[SidebarLabel]:
        return await self.labels.sidebar(user_id)

    async def all_for_user(self, user_id: int) -> list[LabelInfo]:
        return await self.labels.all_for_user(user_id)

    async def owned(self, user_id: int, label_id: int) -> SidebarLabel | None:
        return await self.labels.owned(user_id, label_id)

    async def role_ids(self, user_id: int) -> dict[LabelRole, int]:
        """The system labels' ids by role (Inbox, Sent, Trash, ...)."""
        return await self.labels.role_ids(user_id)

    async def find_path(self, user_id: int, path: str) -> int | None:
        return await self.labels.find_path(user_id, path)

    async def find_or_create(self, user_id: int, name: str, parent_id: int | None = None) -> int:
        return await self.labels.find_or_create(user_id, name, parent_id)

    async def create(self, user_id: int, name: str, *, parent_id: int | None = None, color: str | None = None) -> int:
        clean = _clean_name(name)
        if parent_id is not None and await self.labels.owned(user_id, parent_id) is None:
            raise NotFoundError("No such parent label.")
        if await self.repo.exists(user_id, parent_id, clean):
            raise ValidationError(f"A label named {clean!r} already exists there.")
        async with self.db.transaction():
            label_id = await self.repo.create(user_id, clean, parent_id, _clean_colour(color))
            await _record_labels(self.change_log, user_id, [label_id], ChangeType.CREATED)
        return label_id

    async def update(
        self, user_id: int, label_id: int, *, name: str | None = None, color: str | None = None,
        parent_id: int | None = None, move: bool = False, visible: bool | None = None, sort_order: int | None = None,
    ) -> None:
        label = await self.labels.owned(user_id, label_id)
        if label is None:
            raise NotFoundError("No such label.")
        if label.role is not None and (name is not None or move):
            raise ValidationError("System labels cannot be renamed or moved.")
        if move and parent_id is not None:
            if await self.labels.owned(user_id, parent_id) is None:
                raise NotFoundError("No such parent label.")
            if label_id in await self.repo.ancestry(parent_id):
                raise ValidationError("A label cannot be nested inside itself.")
        new_name = _clean_name(name) if name is not None else None
        target_parent = parent_id if move else label.parent_id
        renamed_or_moved = new_name is not None or move
        if renamed_or_moved and await self.repo.exists(user_id, target_parent, new_name or label.name,
                                                       exclude=label_id):
            raise ValidationError("A label with that name already exists there.")
        async with self.db.transaction():
            await self.repo.update(label_id, name=new_name, color=_clean_colour(color) if color is not None else None,
                                   parent_id=target_parent, visible=visible, sort_order=sort_order)
            await self._announce(user_id, label_id)

    async def delete(self, user_id: int, label_id: int) -> int:
        """Delete a label; the mail keeps every other label, and mail left with none moves to Archive."""
        label = await self.labels.owned(user_id, label_id)
        if label is None:
            raise NotFoundError("No such label.")
        if label.role is not None:
            raise ValidationError("System labels cannot be deleted.")
        async with self.db.transaction():
            state = StateManager(self.change_log)
            recorder = MailChangeRecorder(state)
            # Phones hold the label as a Mailbox per account: they must hear that it is gone.
            for account_id, binding_id in await self.repo.bindings_of_tree(user_id, label_id):
                recorder.mailboxes_destroyed(account_id, [binding_id])
            recorder.labels_changed(user_id, await self.repo.tree_ids(user_id, label_id), ChangeType.DESTROYED)
            affected = await self.repo.delete_keeping_mail(user_id, label_id)
            for account_id, message_id, _ in affected:
                recorder.email_changed(account_id, message_id)
            if affected:  # mail left with no label went to Archive, whose counts moved
                recorder.labels_changed(user_id, [(await self.labels.role_ids(user_id))[LabelRole.ARCHIVE]])
            await state.write()
            await state.announce()
        return len(affected)

    async def _announce(self, user_id: int, label_id: int) -> None:
        state = StateManager(self.change_log)
        recorder = MailChangeRecorder(state)
        for account_id, binding_id in await self.repo.bindings_of(label_id):
            recorder.mailboxes_changed(account_id, [binding_id])
        recorder.labels_changed(user_id, [label_id])
        await state.write()
        await state.announce()


async def _record_labels(change_log: ChangeLogRepository, user_id: int, label_ids: Sequence[int],
                         change: ChangeType) -> None:
    state = StateManager(change_log)
    MailChangeRecorder(state).labels_changed(user_id, label_ids, change)
    await state.write()
    await state.announce()


def _clean_name(name: str | None) -> str:
    clean = " ".join((name or "").split())
    if not clean:
        raise ValidationError("A label needs a name.")
    if "/" in clean:
        raise ValidationError("Use nesting instead of '/' in label names.")
    return clean[:MAX_NAME]


def _clean_colour(color: str | None) -> str | None:
    if not color:
        return None
    if color not in COLOURS:
        raise ValidationError(f"Unknown colour {color!r}.")
    return color
