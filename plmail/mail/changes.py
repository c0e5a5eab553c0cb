"""The JMAP change log: what moved, written in the same transaction as the move itself.

Records are collected in memory and written by the caller inside its own transaction, never on
their own: a change that is rolled back takes its announcement with it, and a record can only be
written after the insert that gave its object an id (announcing id 0 to every client was the bug).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from plmail.db.repos.changes import ChangeLogRepository
from plmail.domain.enums import ChangeType, JmapObjectType
from plmail.domain.mailstore import PUSH_CHANNEL, PUSH_EVERYONE, PUSH_PAYLOAD_MAX, unified_key

__all__ = ["PUSH_CHANNEL", "PUSH_EVERYONE", "Change", "MailChangeRecorder", "StateManager"]


@dataclass(frozen=True, slots=True)
class Change:
    account_id: int
    object_type: JmapObjectType
    entity_id: str
    change_type: ChangeType
    # The row belongs to the unified account of account_id's user (a label as its Mailbox there); storage finds
    # the user, so a writer that knows only the account need not look it up.
    for_unified: bool = False


@dataclass(slots=True)
class StateManager:
    """Per unit of work: pending rows plus the (account, type) pairs they dirty, for one push."""

    repo: ChangeLogRepository
    pending: list[Change] = field(default_factory=list)
    dirty: set[tuple[int, JmapObjectType]] = field(default_factory=set)

    def record(self, change: Change) -> None:
        self.pending.append(change)
        self.dirty.add((change.account_id, change.object_type))

    async def write(self) -> None:
        """Insert pending rows on the caller's transaction; ids must exist by now."""
        if not self.pending:
            return
        await self.repo.insert([(c.account_id, c.object_type.value, c.entity_id, c.change_type.value, c.for_unified)
                                for c in self.pending])
        self.pending.clear()

    async def announce(self) -> None:
        """One notification for everything this unit of work dirtied, delivered only if it commits."""
        if not self.dirty:
            return
        payload = json.dumps(sorted([account, kind.value] for account, kind in self.dirty))
        if len(payload.encode()) > PUSH_PAYLOAD_MAX:  # a batch touching hundreds of accounts: all read again
            payload = json.dumps(PUSH_EVERYONE)
        await self.repo.notify(PUSH_CHANNEL, payload)
        self.dirty.clear()


@dataclass(slots=True)
class MailChangeRecorder:
    """Knows which object type a mail change belongs to, and that an Email that moved also moved
    the Thread it lives in — callers do not have to remember either."""

    state: StateManager

    def email_changed(
        self, account_id: int, message_id: int, *, created: bool = False, destroyed: bool = False,
        thread_id: int | None = None,
    ) -> None:
        """Pass `thread_id` only when the thread's membership changed (a message arrived, left or moved): a
        keyword or a label is the Email's and its Mailboxes' change, not the Thread's."""
        kind = ChangeType.CREATED if created else ChangeType.DESTROYED if destroyed else ChangeType.UPDATED
        self.state.record(Change(account_id, JmapObjectType.EMAIL, str(message_id), kind))
        if thread_id is not None:
            self.threads_touched(account_id, [thread_id])

    def threads_touched(self, account_id: int, thread_ids: Iterable[int], *, created: Iterable[int] = ()) -> None:
        """Threads that grew are updated; those in `created` (made by this batch, as the threader knows) are
        created: RFC 8620 §5.2 lists "ids for records that have been created since the old state"."""
        new = set(created)
        for thread_id in sorted(set(thread_ids)):
            kind = ChangeType.CREATED if thread_id in new else ChangeType.UPDATED
            self.state.record(Change(account_id, JmapObjectType.THREAD, str(thread_id), kind))

    def thread_destroyed(self, account_id: int, thread_id: int) -> None:
        self.state.record(Change(account_id, JmapObjectType.THREAD, str(thread_id), ChangeType.DESTROYED))

    def mailboxes_changed(self, account_id: int, binding_ids: Iterable[int], *, labels: Iterable[int] = ()) -> None:
        """The account's Mailboxes (bindings) and, as the unified account's Mailboxes, the labels behind them:
        a label counts there even where this account never bound it."""
        for binding_id in sorted(set(binding_ids)):
            self.state.record(Change(account_id, JmapObjectType.MAILBOX, str(binding_id), ChangeType.UPDATED))
        for label_id in sorted(set(labels)):
            self.state.record(Change(account_id, JmapObjectType.MAILBOX, str(label_id), ChangeType.UPDATED,
                                     for_unified=True))

    def labels_changed(self, user_id: int, label_ids: Iterable[int], change: ChangeType = ChangeType.UPDATED
                       ) -> None:
        """Labels as the Mailboxes of the user's unified account (created, renamed, moved, deleted)."""
        for label_id in sorted(set(label_ids)):
            self.state.record(Change(unified_key(user_id), JmapObjectType.MAILBOX, str(label_id), change))

    def unified_destroyed(self, user_id: int, kind: JmapObjectType, entity_ids: Iterable[int]) -> None:
        """Objects gone from the unified account while their own account's log stops counting (it was removed)."""
        for entity_id in sorted(set(entity_ids)):
            self.state.record(Change(unified_key(user_id), kind, str(entity_id), ChangeType.DESTROYED))

    def mailboxes_destroyed(self, account_id: int, binding_ids: Iterable[int]) -> None:
        for binding_id in sorted(set(binding_ids)):
            self.state.record(Change(account_id, JmapObjectType.MAILBOX, str(binding_id), ChangeType.DESTROYED))
