"""The Graph side of label propagation: a folder move replaces the location, read and star are PATCHed,
and the user's own labels without a folder become Outlook categories.

A message lives in exactly one Graph folder. A change that puts a folder's label on a message moves it
there (Trash and Spam first); one that takes off the label of the folder it is in moves it to another
folder label it still carries (Inbox, then the most recently added own folder, then Sent, Drafts, Archive)
or else to the Archive. Afterwards the local labels agree: the message carries its new folder's label and
no other folder's. A move may give the message a new id (private outlook.com), which is recorded at once
so the next delta recognises it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from plmail.db.database import Database
from plmail.db.repos.account_admin import SYNC_LOCK, AccountAdminRepository, AccountRecord
from plmail.db.repos.operations import OperationRepository
from plmail.db.repos.threads import ThreadRepository
from plmail.domain.enums import AccountStatus, LabelRole, ProviderKind
from plmail.domain.providers import PendingChange, PropagationOutcome
from plmail.mail.labels import BindingHandle, LabelResolver
from plmail.mail.propagation import PropagationError
from plmail.mail.settle import announce
from plmail.providers.graph.client import GraphClient
from plmail.providers.graph.errors import GraphAuthError, GraphError, GraphNotFound, GraphThrottled
from plmail.providers.graph.repos.messages import FolderLabel, GraphMessageRepository, PlacedMessage
from plmail.providers.graph.repos.state import GraphStateRepository

log = logging.getLogger(__name__)

_SYNC_WAIT_SECONDS = 60.0
# Where a message goes when the label of its folder is taken off, in this order after Trash and Spam.
_FALLBACK_ROLES = (LabelRole.SENT, LabelRole.DRAFTS, LabelRole.ARCHIVE)

Later = Callable[[int, float], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Folders:
    by_label: dict[int, FolderLabel]
    by_folder: dict[str, FolderLabel]

    def role(self, role: LabelRole) -> FolderLabel | None:
        return next((f for f in self.by_label.values() if f.role is role), None)


@dataclass(slots=True)
class _Plan:
    message: PlacedMessage
    change_ids: list[int] = field(default_factory=list)
    target: FolderLabel | None = None
    categories_touched: bool = False


def choose_folder(message: PlacedMessage, pending: Sequence[PendingChange], folders: Folders,
                  added_order: dict[tuple[int, int], int]) -> FolderLabel | None:
    """Where the message should be given its labels now and the changes that led there (None: where it is).
    Snoozed has no provider folder and never counts as one."""
    labels = message.labels
    current = folders.by_folder.get(message.folder_id) if message.folder_id else None
    added = [label for change in pending for label in change.added
             if label in labels and label in folders.by_label]
    for role in (LabelRole.TRASH, LabelRole.SPAM):
        folder = folders.role(role)
        if folder is not None and folder.label_id in added:
            return folder
    if added:
        return folders.by_label[added[-1]]  # the folder label put on last
    if current is not None and current.label_id in labels:
        return current
    for role in (LabelRole.TRASH, LabelRole.SPAM, LabelRole.INBOX):
        folder = folders.role(role)
        if folder is not None and folder.label_id in labels:
            return folder
    own = [folders.by_label[label] for label in labels if label in folders.by_label
           and folders.by_label[label].role is None]
    if own:
        return max(own, key=lambda f: (added_order.get((message.id, f.label_id), 0), f.label_id))
    for role in _FALLBACK_ROLES:
        folder = folders.role(role)
        if folder is not None and folder.label_id in labels:
            return folder
    return folders.role(LabelRole.ARCHIVE)  # None without an Archive folder: it stays where it is


class GraphLabelPropagator:
    kind = ProviderKind.GRAPH

    def __init__(self, db: Database, accounts: AccountAdminRepository, client: GraphClient, *,
                 later: Later | None = None) -> None:
        self.db = db
        self.accounts = accounts
        self.client = client
        self.later = later
        self.repo = GraphMessageRepository(db)
        self.state = GraphStateRepository(db)
        self.operations = OperationRepository(db)
        self.threads = ThreadRepository(db)
        self.resolver = LabelResolver(db)

    async def propagate(self, account_id: int, changes: Sequence[PendingChange]) -> PropagationOutcome:
        record = await self.accounts.for_job(account_id)
        if record is None or not record.is_active or record.status is not AccountStatus.OK:
            return PropagationOutcome()  # the changes wait until the account can be reached again
        state = await self.state.load(account_id)
        now = datetime.now(UTC)
        if state.throttled_until is not None and state.throttled_until > now and self.later is not None:
            # Graph asked this mailbox for a pause (in a sync, an import page or here): go on when it ends
            await self.later(account_id, (state.throttled_until - now).total_seconds())
            return PropagationOutcome()
        # Never while this account syncs: a move half-recorded while the sync reads the target folder would
        # look like a new message there.
        async with self.accounts.session_lock(SYNC_LOCK, account_id, wait=_SYNC_WAIT_SECONDS) as lock:
            if not lock.taken:
                raise PropagationError("The account is syncing; the changes will be made after it.")
            done: list[int] = []
            failed: dict[int, str] = {}
            try:
                await self._propagate(record, changes, done, failed)
            except GraphThrottled as exc:
                # Not a failure: what is done stays done, the rest waits for the time Graph named.
                log.info("Graph throttled propagation for account %s; going on in %.0f s", account_id,
                         exc.retry_after)
                if self.later is None:
                    raise PropagationError(str(exc)) from exc
                await self.state.throttled(account_id, datetime.now(UTC) + timedelta(seconds=exc.retry_after))
                await self.later(account_id, exc.retry_after)
            except GraphAuthError as exc:
                await self.accounts.set_status(account_id, AccountStatus.RECONNECT, str(exc))
                log.warning("propagation for account %s waits for the user: %s", account_id, exc)
            except GraphError as exc:
                if exc.retryable:
                    raise PropagationError(str(exc)) from exc
                raise
            return PropagationOutcome(done=tuple(done), failed=failed)

    async def _propagate(self, record: AccountRecord, changes: Sequence[PendingChange], done: list[int],
                         failed: dict[int, str]) -> None:
        placed = await self.repo.placed(record.id, sorted({c.message_id for c in changes}))
        gone = [c.id for c in changes if c.message_id not in placed or placed[c.message_id].graph_id is None]
        done.extend(gone)  # not at Graph (deleted, or never there): nothing to make agree
        changes = [c for c in changes if c.id not in gone]
        await self._labels(record, [c for c in changes if c.kind == "labels"], placed, done, failed)
        await self._flags(record, [c for c in changes if c.kind in ("seen", "starred")], placed, done, failed)
        # Keywords beyond read and flagged ($answered, $forwarded, custom ones) have no Graph property: they are
        # kept in plmail only.
        done.extend(c.id for c in changes if c.kind.startswith("keyword:"))

    # -- labels: moves and categories ------------------------------------------------------------------

    async def _labels(self, record: AccountRecord, changes: Sequence[PendingChange],
                      placed: dict[int, PlacedMessage], done: list[int], failed: dict[int, str]) -> None:
        if not changes:
            return
        folder_list = await self.repo.folder_labels(record.id)
        folders = Folders({f.label_id: f for f in folder_list}, {f.folder_id: f for f in folder_list})
        by_message: dict[int, list[PendingChange]] = {}
        for change in changes:
            by_message.setdefault(change.message_id, []).append(change)
        order = await self.operations.added_order(record.id, sorted(by_message))
        others = {label for c in changes for label in (*c.added, *c.removed) if label not in folders.by_label}
        own = {label for label, (_, role) in (await self.repo.label_paths(record.user_id, sorted(others))).items()
               if role is None}
        for message_id, pending in sorted(by_message.items()):
            message = placed[message_id]
            target = choose_folder(message, pending, folders, order)
            categories_touched = any(label in own for c in pending for label in (*c.added, *c.removed))
            try:
                if target is not None and target.folder_id != message.folder_id:
                    message = await self._move(record, message, target)
                    placed[message_id] = message
                if target is not None:
                    await self._agree(record.id, message, target, folders)
                if categories_touched:
                    await self._categories(record, message, folders)
            except GraphNotFound as exc:
                # gone at Graph (deleted, or moved under a new id by another client): the next sync settles it
                log.info("message %s of account %s is not at Graph any more: %s", message_id, record.id, exc)
            except GraphError as exc:
                if exc.retryable or isinstance(exc, GraphAuthError):
                    raise
                for change in pending:
                    failed[change.id] = str(exc)
                continue
            done.extend(c.id for c in pending)

    async def _move(self, record: AccountRecord, message: PlacedMessage, target: FolderLabel) -> PlacedMessage:
        assert message.graph_id is not None
        moved = await self.client.move(record.account, message.graph_id, target.folder_id)
        await self.repo.moved(message.id, moved.id, target.folder_id)
        return PlacedMessage(message.id, moved.id, target.folder_id, message.thread_id, message.labels)

    async def _agree(self, account_id: int, message: PlacedMessage, target: FolderLabel, folders: Folders) -> None:
        """One folder, one location label: the target's on, every other folder label of this account off."""
        stale = [label for label in message.labels if label in folders.by_label and label != target.label_id]
        missing = target.label_id not in message.labels
        if not stale and not missing:
            return
        await self.repo.remove_labels([(message.id, label) for label in stale])
        if missing:
            await self.repo.add_labels([(message.id, target.label_id)])
        if message.thread_id is not None:
            await self.threads.sync_labels([message.thread_id])
        await announce(self.db, account_id, {message.id: message.thread_id},
                       sorted({*stale, target.label_id}))

    async def _categories(self, record: AccountRecord, message: PlacedMessage, folders: Folders) -> None:
        """The message's own labels without a folder at this account, as Outlook categories."""
        assert message.graph_id is not None
        current = (await self.repo.placed(record.id, [message.id]))[message.id].labels
        paths = await self.repo.label_paths(record.user_id, sorted(current))
        known = await self.repo.category_labels(record.id)
        names: list[str] = []
        for label_id in sorted(current):
            path, role = paths.get(label_id, ((), None))
            if role is not None or label_id in folders.by_label or not path:
                continue
            name = known.get(label_id) or "/".join(path)
            if label_id not in known:
                await self.resolver.bind(label_id, record.id, BindingHandle(provider_tag=name))
            names.append(name)
        await self.client.update(record.account, message.graph_id, {"categories": sorted(set(names))})

    # -- read and star ---------------------------------------------------------------------------------------

    async def _flags(self, record: AccountRecord, changes: Sequence[PendingChange],
                     placed: dict[int, PlacedMessage], done: list[int], failed: dict[int, str]) -> None:
        latest: dict[tuple[int, str], PendingChange] = {}
        for change in changes:  # only the last requested state of each (message, flag) matters
            latest[(change.message_id, change.kind)] = change
        fields: dict[int, dict[str, object]] = {}
        for (message_id, kind), change in latest.items():
            value = bool(change.flag_value)
            fields.setdefault(message_id, {}).update(
                {"isRead": value} if kind == "seen" else {"flag": {"flagStatus": "flagged" if value else "notFlagged"}})
        for message_id, update in sorted(fields.items()):
            graph_id = placed[message_id].graph_id
            assert graph_id is not None
            ids = [c.id for c in changes if c.message_id == message_id]
            try:
                await self.client.update(record.account, graph_id, update)
            except GraphNotFound as exc:
                log.info("message %s of account %s is not at Graph any more: %s", message_id, record.id, exc)
            except GraphError as exc:
                if exc.retryable or isinstance(exc, GraphAuthError):
                    raise
                for change_id in ids:
                    failed[change_id] = str(exc)
                continue
            done.extend(ids)
