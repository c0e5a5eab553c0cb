"""Mailboxes: the user's labels as one account sees them, and what Mailbox/set does to them.

A Mailbox id is a label binding id, one per (label, account). The label itself belongs to the user,
so creating, renaming or destroying a Mailbox is the LabelManager's operation on that label (the
web UI's code path); the binding is only where JMAP finds it in one account. In the unified account
a Mailbox is the label itself (its id the label id), counted over every account of the user.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from plmail.db.database import Database
from plmail.db.repos.changes import ChangeLogRepository
from plmail.domain.enums import ChangeType, JmapObjectType
from plmail.domain.errors import ConflictError, ForbiddenError, NotFoundError, ValidationError
from plmail.domain.mailstore import MailboxCounts, MailboxRow, MailScope
from plmail.mail.changes import Change, StateManager
from plmail.mail.destroy import MailDestroyer
from plmail.mail.labels import LabelManager, LabelResolver
from plmail.mail.repos.jmap_mailboxes import JmapMailboxRepository

USER_LABEL_SORT_ORDER = 100  # after the system mailboxes, which use 0-50
_COUNT_ENTRIES = 64


@dataclass(frozen=True, slots=True)
class MailboxView:
    row: MailboxRow
    counts: MailboxCounts | None


class MailboxService:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.repo = JmapMailboxRepository(db)
        self.manager = LabelManager(db)
        self.change_log = ChangeLogRepository(db)
        self._counts: OrderedDict[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]],
                                  dict[int, MailboxCounts]] = OrderedDict()

    async def bind_labels(self, user_id: int, scope: MailScope) -> bool:
        """Every label of the user is a Mailbox in every account; a label created since (in the web UI)
        gets its binding now, announced as created so connected clients learn of it. Whether any was bound."""
        bound = False
        for account_id in await self.repo.unbound(user_id, scope.account_ids) if scope.account_ids else []:
            async with self.db.transaction():
                created = await self.repo.bind_missing(user_id, account_id)
                if created:
                    await self._record(account_id, created, ChangeType.CREATED)
                    bound = True
        return bound

    async def _rows(self, user_id: int, scope: MailScope) -> list[MailboxRow]:
        return await (self.repo.labels(user_id) if scope.unified else self.repo.mailboxes(user_id, scope.account_id))

    async def views(self, user_id: int, scope: MailScope, *, counts_at: tuple[int, ...] | None = None,
                    only: set[str] | None = None) -> list[MailboxView]:
        """With `counts_at` (the Email and Mailbox states read first), the counts too, for the mailboxes
        in `only` (or all): a scan of the account's mail, so it is remembered until either state moves."""
        rows = await self._rows(user_id, scope)
        if counts_at is None:
            return [MailboxView(r, None) for r in rows]
        labels = tuple(sorted(r.label_id for r in rows if only is None or str(r.binding_id) in only))
        key = (scope.account_ids, labels, counts_at)
        totals = self._counts.get(key)
        if totals is None:
            totals = self._counts[key] = await self.repo.counts(scope.account_ids, labels) if scope.account_ids \
                else {}
            while len(self._counts) > _COUNT_ENTRIES:
                self._counts.popitem(last=False)
        return [MailboxView(r, totals.get(r.label_id, MailboxCounts())) for r in rows]

    async def by_binding(self, user_id: int, scope: MailScope, binding_id: int) -> MailboxRow | None:
        return next((r for r in await self._rows(user_id, scope) if r.binding_id == binding_id), None)

    async def create(self, user_id: int, scope: MailScope, name: str, parent: MailboxRow | None,
                     visible: bool, sort_order: int | None = None) -> int:
        """A new label; its Mailbox id in `scope` (the binding of a single account, the label in the unified one)."""
        async with self.db.transaction():
            try:
                label_id = await self.manager.create(user_id, name, parent_id=parent.label_id if parent else None)
                if not visible or sort_order is not None:
                    await self.manager.update(user_id, label_id, visible=visible, sort_order=sort_order)
            except NotFoundError as exc:
                raise ValidationError(str(exc), field="parentId") from None
            except ValidationError as exc:
                raise ValidationError(str(exc), field="name") from None
            resolver = LabelResolver(self.db)
            for account_id in scope.account_ids:
                binding_id = await resolver.bind(label_id, account_id)
                await self._record(account_id, [binding_id], ChangeType.CREATED)
        return label_id if scope.unified else binding_id

    async def update(self, user_id: int, mailbox: MailboxRow, *, name: str | None, move: bool,
                     parent: MailboxRow | None, visible: bool | None, sort_order: int | None = None) -> None:
        if mailbox.role is not None and ((name is not None and name != mailbox.name) or move):
            raise ForbiddenError("System mailboxes cannot be renamed or moved.")
        try:
            await self.manager.update(user_id, mailbox.label_id, name=name, visible=visible, move=move,
                                      parent_id=parent.label_id if parent else None, sort_order=sort_order)
        except ValidationError as exc:
            raise ValidationError(str(exc), field="parentId" if move else "name") from None

    async def destroy(self, user_id: int, mailbox: MailboxRow, *, remove_emails: bool,
                      destroyer: MailDestroyer | None = None) -> None:
        """With `remove_emails` and a destroyer, the emails in no other mailbox are destroyed first (RFC 8621 §2.5:
        "if in no other Mailboxes, they will be destroyed"); one a provider refuses to delete is kept in Archive."""
        if mailbox.role is not None:
            raise ForbiddenError("System mailboxes cannot be destroyed.")
        if await self.repo.has_children(user_id, mailbox.label_id):
            raise ConflictError("Destroy or move the mailboxes inside it first.", reason="mailboxHasChild")
        if not remove_emails and await self.repo.has_mail(user_id, mailbox.label_id):
            raise ConflictError("The mailbox still holds email; set onDestroyRemoveEmails to remove it.",
                                reason="mailboxHasEmail")
        if remove_emails and destroyer is not None:
            only_here = await self.repo.mail_only_in_tree(user_id, mailbox.label_id)
            if only_here:
                await destroyer.destroy(user_id, only_here)
        async with self.db.transaction():
            bindings = await self.repo.bindings_of_tree(user_id, mailbox.label_id)
            # Mail left with no label moves to Archive (never deleted): the LabelManager's rule.
            await self.manager.delete(user_id, mailbox.label_id)
            by_account: dict[int, list[int]] = {}
            for account_id, binding_id in bindings:
                by_account.setdefault(account_id, []).append(binding_id)
            for account_id, binding_ids in by_account.items():
                await self._record(account_id, binding_ids, ChangeType.DESTROYED)

    async def _record(self, account_id: int, binding_ids: list[int], change: ChangeType) -> None:
        """Written in the caller's transaction: an announcement leaves only with the change it describes."""
        state = StateManager(self.change_log)
        for binding_id in binding_ids:
            state.record(Change(account_id, JmapObjectType.MAILBOX, str(binding_id), change))
        await state.write()
        await state.announce()
