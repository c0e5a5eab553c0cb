"""The IMAP side of label propagation: star and read become flags; archive, trash, spam and delete become
moves. A custom label added stays in the database, because the folder stays put while its location label
is there; removing the label that is the message's location moves it, since mail must live somewhere.

The source folder is the one captured in the pending change, before the local change was made: the
labels have moved by the time this runs, and only the captured folder says where the message was.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

from plmail.db.database import Database
from plmail.db.repos.account_admin import SYNC_LOCK, AccountAdminRepository, AccountRecord
from plmail.db.repos.operations import OperationRepository
from plmail.domain.enums import AccountStatus, LabelRole, ProviderKind
from plmail.domain.providers import PendingChange, PropagationOutcome
from plmail.mail.labels import BindingHandle, LabelResolver
from plmail.mail.propagation import PropagationError
from plmail.providers.imap.client import ImapClient
from plmail.providers.imap.errors import ImapError
from plmail.providers.imap.folders import FLAG_OF_ROLE
from plmail.providers.imap.repos.mailboxes import MailboxRepository
from plmail.providers.imap.repos.propagation import FolderLabel, ImapPropagationRepository, PlacedMessage
from plmail.providers.imap.session import ImapConnector

log = logging.getLogger(__name__)

ARCHIVE_FOLDER = "Archive"
_SYNC_WAIT_SECONDS = 60.0
_FLAG_OF_KIND = {"seen": "\\Seen", "starred": "\\Flagged"}
# RFC 8621 §4.1.1's keywords as IMAP system flags; any other keyword is an IMAP keyword of the same name.
_SYSTEM_FLAG_OF_KEYWORD = {"$answered": "\\Answered", "$draft": "\\Draft", "$seen": "\\Seen",
                           "$flagged": "\\Flagged"}


def imap_flag(kind: str) -> str | None:
    """The IMAP flag a change kind sets ("seen", "starred", "keyword:$answered"); None for other kinds."""
    if kind.startswith("keyword:"):
        keyword = kind.removeprefix("keyword:")
        return _SYSTEM_FLAG_OF_KEYWORD.get(keyword.lower(), "$Forwarded" if keyword.lower() == "$forwarded"
                                           else keyword)
    return _FLAG_OF_KIND.get(kind)


def keeps_flag(permanent_flags: frozenset[str], flag: str) -> bool:
    """Whether a folder keeps `flag` (RFC 3501 PERMANENTFLAGS): system flags always, a keyword when it is listed
    or the server lets clients create keywords (\\*). A server that sent no PERMANENTFLAGS keeps them all."""
    if flag.startswith("\\") or not permanent_flags:
        return True
    listed = {f.lower() for f in permanent_flags}
    return "\\*" in listed or flag.lower() in listed


@dataclass(frozen=True, slots=True)
class Folders:
    by_label: dict[int, FolderLabel]
    by_mailbox: dict[int, FolderLabel]

    def role(self, role: LabelRole) -> FolderLabel | None:
        return next((f for f in self.by_label.values() if f.role is role), None)


def choose_location(message: PlacedMessage, location_label: int | None, folders: Folders,
                    added_order: dict[tuple[int, int], int]) -> FolderLabel | None:
    """Where the message should live given its labels now: a Trash or Spam label with a folder; else where it
    is, while that location label remains; else the Inbox when it carries that; else the most recently added
    own label with a folder; else another role folder it carries; else the Archive (None: there is none yet).
    Snoozed has no provider folder and never counts as a place: treated as one, a push could only look for an
    id nobody set, and the message would seem to live in two places at once."""
    labels = message.labels
    for role in (LabelRole.TRASH, LabelRole.SPAM):
        folder = folders.role(role)
        if folder is not None and folder.label_id in labels:
            return folder
    if location_label is not None and location_label in labels and location_label in folders.by_label:
        return folders.by_label[location_label]
    inbox = folders.role(LabelRole.INBOX)
    if inbox is not None and inbox.label_id in labels:
        return inbox
    own = [folders.by_label[label] for label in labels
           if label in folders.by_label and folders.by_label[label].role is None]
    if own:
        return max(own, key=lambda f: (added_order.get((message.id, f.label_id), 0), f.label_id))
    for role in (LabelRole.SENT, LabelRole.DRAFTS, LabelRole.ARCHIVE):
        folder = folders.role(role)
        if folder is not None and folder.label_id in labels and role.has_provider_folder():
            return folder
    return folders.role(LabelRole.ARCHIVE)


class ImapLabelPropagator:
    kind = ProviderKind.IMAP

    def __init__(self, db: Database, accounts: AccountAdminRepository, connector: ImapConnector) -> None:
        self.accounts = accounts
        self.connector = connector
        self.repo = ImapPropagationRepository(db)
        self.operations = OperationRepository(db)
        self.mailboxes = MailboxRepository(db)
        self.resolver = LabelResolver(db)

    async def propagate(self, account_id: int, changes: Sequence[PendingChange]) -> PropagationOutcome:
        record = await self.accounts.for_job(account_id)
        if record is None or not record.is_active or record.status is not AccountStatus.OK:
            return PropagationOutcome()  # the changes wait until the account can be reached again
        # Never while this account syncs: a move half-recorded while the sync reads the target folder would
        # look like new mail there.
        async with self.accounts.session_lock(SYNC_LOCK, account_id, wait=_SYNC_WAIT_SECONDS) as lock:
            if not lock.taken:
                raise PropagationError("The account is syncing; the changes will be made after it.")
            return await self._propagate(record, changes)

    async def _propagate(self, record: AccountRecord, changes: Sequence[PendingChange]) -> PropagationOutcome:
        placed = await self.repo.placed(record.id, sorted({c.message_id for c in changes}))
        done: list[int] = []
        failed: dict[int, str] = {}
        try:
            async with self.connector.session(record) as client:
                placed = await self._moves(client, record.user_id, record.id, changes, placed, done, failed)
                await self._flags(client, changes, placed, done, failed)
        except ImapError as exc:
            if exc.retryable:
                raise PropagationError(str(exc)) from exc
            log.warning("propagation for account %s waits for the user: %s", record.id, exc)
        return PropagationOutcome(done=tuple(done), failed=failed)

    async def _moves(
        self, client: ImapClient, user_id: int, account_id: int, changes: Sequence[PendingChange],
        placed: dict[int, PlacedMessage], done: list[int], failed: dict[int, str],
    ) -> dict[int, PlacedMessage]:
        by_message: dict[int, list[PendingChange]] = {}
        for change in changes:
            if change.kind == "labels":
                by_message.setdefault(change.message_id, []).append(change)
        if not by_message:
            return placed
        folder_list = await self.repo.folder_labels(account_id)
        folders = Folders({f.label_id: f for f in folder_list}, {f.mailbox_id: f for f in folder_list})
        order = await self.operations.added_order(account_id, sorted(by_message))
        plan: dict[tuple[int, int], list[int]] = {}
        targets: dict[int, FolderLabel] = {}
        for message_id, pending in by_message.items():
            message = placed.get(message_id)
            if message is None or message.mailbox_id is None or message.imap_uid is None:
                done.extend(c.id for c in pending)  # not on the server (yet): nothing to move
                continue
            # The folder captured before the local change: the labels have moved on, only it says where the
            # message was; the UID to move is the one we know now (a move since then re-pointed it).
            source = pending[0].source_mailbox_id or message.mailbox_id
            location = folders.by_mailbox.get(source)
            target = choose_location(message, location.label_id if location else None, folders, order)
            if target is None:
                target = await self._archive_folder(client, user_id, account_id)
                folders = Folders({**folders.by_label, target.label_id: target},
                                  {**folders.by_mailbox, target.mailbox_id: target})
            if target.mailbox_id == message.mailbox_id:
                done.extend(c.id for c in pending)
                continue
            plan.setdefault((message.mailbox_id, target.mailbox_id), []).append(message_id)
            targets[target.mailbox_id] = target
        for (source_id, target_id), message_ids in sorted(plan.items()):
            source_folder = folders.by_mailbox.get(source_id)
            source_path = source_folder.path if source_folder else None
            if source_path is None:
                row = await self.mailboxes.get(source_id)
                source_path = row.full_path if row else None
            ids = [c.id for m in message_ids for c in by_message[m]]
            if source_path is None:
                done.extend(ids)
                continue
            try:
                await client.select(source_path)
                uids = {placed[m].imap_uid: m for m in message_ids if placed[m].imap_uid is not None}
                result = await client.move(sorted(u for u in uids if u is not None), targets[target_id].path)
            except ImapError as exc:
                if exc.retryable:
                    raise
                for change_id in ids:
                    failed[change_id] = str(exc)
                continue
            for uid, message_id in uids.items():
                assert uid is not None
                new_uid = result.uid_map.get(uid)
                await self.repo.moved(message_id, target_id, new_uid)
                placed[message_id] = replace(placed[message_id], mailbox_id=target_id, imap_uid=new_uid)
            done.extend(ids)
        return placed

    async def _archive_folder(self, client: ImapClient, user_id: int, account_id: int) -> FolderLabel:
        """Mail must live somewhere: a server without an archive folder gets one, bound to the Archive label."""
        await client.create_mailbox(ARCHIVE_FOLDER, exist_ok=True)
        mailbox_id = await self.mailboxes.upsert(account_id, path=ARCHIVE_FOLDER, name=ARCHIVE_FOLDER, delimiter=None,
                                                 special_use=FLAG_OF_ROLE[LabelRole.ARCHIVE], sync_enabled=True,
                                                 idle_enabled=False)
        resolved = await self.resolver.resolve(user_id=user_id, account_id=account_id, path=(),
                                               role=LabelRole.ARCHIVE, handle=BindingHandle(mailbox_id=mailbox_id))
        return FolderLabel(resolved.label_id, LabelRole.ARCHIVE, mailbox_id, ARCHIVE_FOLDER)

    async def _flags(self, client: ImapClient, changes: Sequence[PendingChange], placed: dict[int, PlacedMessage],
                     done: list[int], failed: dict[int, str]) -> None:
        # Only the last requested state of each (message, flag) matters.
        latest: dict[tuple[int, str], PendingChange] = {}
        for change in changes:
            if imap_flag(change.kind) is not None:
                latest[(change.message_id, change.kind)] = change
        if not latest:
            return
        groups: dict[tuple[int, str, bool], list[int]] = {}
        for (message_id, kind), change in latest.items():
            message = placed.get(message_id)
            if message is None or message.mailbox_id is None or message.imap_uid is None:
                continue
            groups.setdefault((message.mailbox_id, kind, bool(change.flag_value)), []).append(message.imap_uid)
        for (mailbox_id, kind, value), uids in sorted(groups.items()):
            row = await self.mailboxes.get(mailbox_id)
            if row is None:
                continue
            flag = imap_flag(kind)
            assert flag is not None
            try:
                state = await client.select(row.full_path)
                if not keeps_flag(state.permanent_flags, flag):
                    # The folder cannot keep this keyword (no \* in PERMANENTFLAGS): it stays in plmail only.
                    log.info("%s cannot keep the keyword %s; kept in plmail only", row.full_path, flag)
                    continue
                await client.store_flags(uids, add=[flag] if value else [], remove=[] if value else [flag])
            except ImapError as exc:
                if exc.retryable:
                    raise
                for change in changes:
                    if change.kind == kind and placed.get(change.message_id) is not None \
                            and placed[change.message_id].mailbox_id == mailbox_id:
                        failed[change.id] = str(exc)
        flagged = [c for c in changes if imap_flag(c.kind) is not None]
        done.extend(c.id for c in flagged if c.id not in failed)
        await self.repo.flags_confirmed(sorted({c.message_id for c in flagged}))
