"""ThreadOperations: what starring, reading, archiving, trashing, labelling and snoozing mean.

Each operation is first a change in the database (the source of truth), recorded in the JMAP change
log in the same transaction — a change from the web UI that skipped the log would stay invisible to
connected phones until something else touched the thread — and then handed to the provider by a
propagation job. The web UI and JMAP both call this one service.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from plmail.db.database import Database
from plmail.db.repos.changes import ChangeLogRepository
from plmail.db.repos.operations import OperationRepository
from plmail.db.repos.threads import ThreadRepository
from plmail.domain.enums import LabelRole
from plmail.domain.errors import NotFoundError, ValidationError
from plmail.domain.jobs import PROPAGATE_PROVIDER_CHANGES
from plmail.domain.mailstore import OwnedMessage
from plmail.domain.ports import Enqueuer
from plmail.mail.changes import MailChangeRecorder, StateManager
from plmail.mail.keywords import flag_spellings

log = logging.getLogger(__name__)



@dataclass(frozen=True, slots=True)
class OperationResult:
    messages: tuple[int, ...]  # messages whose state changed
    threads: tuple[int, ...]
    accounts: tuple[int, ...]


_NOTHING = OperationResult((), (), ())

UNDO_WINDOW = timedelta(seconds=10)  # the toast: 10 s with Undo


@dataclass(slots=True)
class UndoTicket:
    """One undoable action: its changes carry `key` and wait at the provider side until `hold_until`.

    Undo strategy: propagation waits out the window, and Undo withdraws what still waits. Sending the reverse
    instead would move an IMAP message out of INBOX and back (a new UID, the phone seeing it vanish and return);
    waiting means the provider only ever sees the final state, for the price of 10 s of delay."""

    key: str
    hold_until: datetime
    window: timedelta
    used: bool = False
    accounts: set[int] = field(default_factory=set)


_TICKET: ContextVar[UndoTicket | None] = ContextVar("plmail_undo_ticket", default=None)


class ThreadOperations:
    def __init__(self, db: Database, queues: Enqueuer | None) -> None:
        self.db = db
        self.queues = queues
        self.repo = OperationRepository(db)
        self.threads = ThreadRepository(db)
        self.change_log = ChangeLogRepository(db)

    # -- message and thread selection -------------------------------------------------------------

    async def _targets(self, user_id: int, thread_ids: Iterable[int], message_ids: Iterable[int]) -> list[int]:
        threads, messages = sorted(set(thread_ids)), sorted(set(message_ids))
        found = set(messages)
        if threads:
            found |= set(await self.repo.thread_message_ids(user_id, threads))
        return sorted(found)

    # -- labels ---------------------------------------------------------------------------------

    async def change_labels(
        self, user_id: int, message_ids: Iterable[int], *, add: Collection[int] = (), remove: Collection[int] = ()
    ) -> OperationResult:
        ids = sorted(set(message_ids))
        if not ids:
            return _NOTHING
        wanted = set(add) | set(remove)
        if wanted - await self.repo.owned_labels(user_id, sorted(wanted)):
            raise NotFoundError("No such label.")
        async with self.db.transaction():
            messages = await self.repo.messages(user_id, ids)
            result = await self._relabel(user_id, messages, set(add), set(remove))
        await self.propagate(result.accounts)
        return result

    async def _relabel(
        self, user_id: int, messages: Sequence[OwnedMessage], add: set[int], remove: set[int], *,
        tell_provider: bool = True,
    ) -> OperationResult:
        state = StateManager(self.change_log)
        recorder = MailChangeRecorder(state)
        archive = await self.repo.role_label(user_id, LabelRole.ARCHIVE)
        adds: list[tuple[int, int]] = []
        removes: list[tuple[int, int]] = []
        provider: list[tuple[int, int, str, list[int], list[int], bool | None, int | None]] = []
        touched_bindings: set[tuple[int, int]] = set()
        changed: list[OwnedMessage] = []
        for message in messages:
            target: set[int] = (set(message.labels) | add) - remove
            if not target:
                target = {archive}  # a message always lives somewhere; Archive is location bookkeeping
            gained, lost = target - message.labels, message.labels - target
            if not gained and not lost:
                continue
            changed.append(message)
            adds += [(message.id, label) for label in sorted(gained)]
            removes += [(message.id, label) for label in sorted(lost)]
            # The folder the message is in now, before anything moves, so IMAP can still find it.
            provider.append((message.account_id, message.id, "labels", sorted(gained), sorted(lost), None,
                             message.mailbox_id))
            touched_bindings |= {(message.account_id, label) for label in gained | lost}
        if not changed:
            return _NOTHING
        await self.repo.remove_labels(removes)
        await self.repo.add_labels(adds)
        threads = sorted({m.thread_id for m in changed if m.thread_id is not None})
        await self.threads.sync_labels(threads)
        if tell_provider:
            ticket = _TICKET.get()
            if ticket is None:
                await self.repo.queue_provider_changes(provider)
            else:
                ticket.used = True
                ticket.accounts |= {m.account_id for m in changed}
                await self.repo.queue_provider_changes(provider, hold_until=ticket.hold_until, undo_key=ticket.key)
        await self._announce(recorder, changed, touched_bindings)
        await state.write()
        await state.announce()
        return OperationResult(tuple(m.id for m in changed), tuple(threads),
                               tuple(sorted({m.account_id for m in changed})))

    async def _announce(
        self, recorder: MailChangeRecorder, changed: Sequence[OwnedMessage], bindings: set[tuple[int, int]]
    ) -> None:
        # Labels and keywords are the Email's (and its Mailboxes' counts), never the Thread's: membership stays.
        for message in changed:
            recorder.email_changed(message.account_id, message.id)
        by_account: dict[int, list[int]] = {}
        for account_id, binding_id in await self.repo.bindings(sorted(bindings)):
            by_account.setdefault(account_id, []).append(binding_id)
        labels_of: dict[int, set[int]] = {}
        for account_id, label_id in bindings:
            labels_of.setdefault(account_id, set()).add(label_id)
        for account_id in sorted(set(by_account) | set(labels_of)):
            recorder.mailboxes_changed(account_id, by_account.get(account_id, []), labels=labels_of.get(account_id, ()))

    async def _role_change(
        self, user_id: int, thread_ids: Iterable[int], message_ids: Iterable[int], *,
        add: Sequence[LabelRole] = (), remove: Sequence[LabelRole] = (),
    ) -> OperationResult:
        ids = await self._targets(user_id, thread_ids, message_ids)
        added = {await self.repo.role_label(user_id, role) for role in add}
        removed = {await self.repo.role_label(user_id, role) for role in remove}
        return await self.change_labels(user_id, ids, add=added, remove=removed)

    async def archive(self, user_id: int, *, thread_ids: Iterable[int] = (), message_ids: Iterable[int] = ()
                      ) -> OperationResult:
        """Archiving is removing the Inbox label; nothing else."""
        return await self._role_change(user_id, thread_ids, message_ids, remove=[LabelRole.INBOX])

    async def trash(self, user_id: int, *, thread_ids: Iterable[int] = (), message_ids: Iterable[int] = ()
                    ) -> OperationResult:
        """Trash means: Trash on, Inbox off (and any other location: Archive, Spam, Snoozed: a binned thread
        must not wake up in the Inbox; its alarm stays asleep with it, so Undo brings the snooze back whole)."""
        return await self._role_change(user_id, thread_ids, message_ids, add=[LabelRole.TRASH],
                                       remove=[LabelRole.INBOX, LabelRole.ARCHIVE, LabelRole.SPAM,
                                               LabelRole.SNOOZED])

    async def untrash(self, user_id: int, *, thread_ids: Iterable[int] = (), message_ids: Iterable[int] = ()
                      ) -> OperationResult:
        return await self._role_change(user_id, thread_ids, message_ids, add=[LabelRole.INBOX],
                                       remove=[LabelRole.TRASH, LabelRole.ARCHIVE])

    async def spam(self, user_id: int, *, thread_ids: Iterable[int] = (), message_ids: Iterable[int] = ()
                   ) -> OperationResult:
        return await self._role_change(user_id, thread_ids, message_ids, add=[LabelRole.SPAM],
                                       remove=[LabelRole.INBOX, LabelRole.ARCHIVE, LabelRole.TRASH,
                                               LabelRole.SNOOZED])

    async def not_spam(self, user_id: int, *, thread_ids: Iterable[int] = (), message_ids: Iterable[int] = ()
                       ) -> OperationResult:
        return await self._role_change(user_id, thread_ids, message_ids, add=[LabelRole.INBOX],
                                       remove=[LabelRole.SPAM, LabelRole.ARCHIVE])

    async def move_to_inbox(self, user_id: int, *, thread_ids: Iterable[int] = (), message_ids: Iterable[int] = ()
                            ) -> OperationResult:
        return await self._role_change(user_id, thread_ids, message_ids, add=[LabelRole.INBOX],
                                       remove=[LabelRole.ARCHIVE])

    async def add_label(self, user_id: int, label_id: int, *, thread_ids: Iterable[int] = (),
                        message_ids: Iterable[int] = ()) -> OperationResult:
        ids = await self._targets(user_id, thread_ids, message_ids)
        return await self.change_labels(user_id, ids, add={label_id})

    async def remove_label(self, user_id: int, label_id: int, *, thread_ids: Iterable[int] = (),
                           message_ids: Iterable[int] = ()) -> OperationResult:
        ids = await self._targets(user_id, thread_ids, message_ids)
        return await self.change_labels(user_id, ids, remove={label_id})

    async def move_to_label(self, user_id: int, label_id: int, *, thread_ids: Iterable[int] = (),
                            message_ids: Iterable[int] = ()) -> OperationResult:
        """Out of the inbox and into a label, as one change (one move at an IMAP server)."""
        ids = await self._targets(user_id, thread_ids, message_ids)
        inbox = await self.repo.role_label(user_id, LabelRole.INBOX)
        archive = await self.repo.role_label(user_id, LabelRole.ARCHIVE)
        return await self.change_labels(user_id, ids, add={label_id}, remove={inbox, archive} - {label_id})

    async def set_labels(self, user_id: int, message_id: int, label_ids: Collection[int]) -> OperationResult:
        """Replace a message's labels (JMAP mailboxIds); an empty set is refused, mail must live somewhere."""
        if not label_ids:
            raise ValidationError("A message must keep at least one mailbox.")
        messages = await self.repo.messages(user_id, [message_id])
        if not messages:
            raise NotFoundError("No such message.")
        current = messages[0].labels
        return await self.change_labels(user_id, [message_id], add=set(label_ids) - current,
                                        remove=current - set(label_ids))

    # -- read and star state --------------------------------------------------------------------

    async def set_seen(self, user_id: int, seen: bool, *, thread_ids: Iterable[int] = (),
                       message_ids: Iterable[int] = ()) -> OperationResult:
        """Unread is `seen_at` being empty — never the provider's \\Seen flag read back as truth."""
        ids = await self._targets(user_id, thread_ids, message_ids)
        return await self._flag(user_id, ids, "seen", seen)

    async def set_starred(self, user_id: int, starred: bool, *, thread_ids: Iterable[int] = (),
                          message_ids: Iterable[int] = ()) -> OperationResult:
        """Starring a conversation stars its newest message; unstarring clears every star in it."""
        threads = sorted(set(thread_ids))
        ids = set(message_ids)
        if threads:
            ids |= set(await (self.repo.newest_message_ids(user_id, threads) if starred
                              else self.repo.thread_message_ids(user_id, threads)))
        return await self._flag(user_id, sorted(ids), "starred", starred)

    async def set_keyword(self, user_id: int, message_ids: Iterable[int], keyword: str, value: bool
                          ) -> OperationResult:
        """A keyword beyond read and starred ($answered, $forwarded): kept with the message's flags and handed to
        the provider as the change kind "keyword:<name>" (the provider's propagator knows what it can keep)."""
        return await self._flag(user_id, sorted(set(message_ids)), f"keyword:{keyword}", value)

    async def _flag(self, user_id: int, ids: Sequence[int], kind: str, value: bool) -> OperationResult:
        if not ids:
            return _NOTHING
        async with self.db.transaction():
            result = await self.flag_within(user_id, ids, kind, value)
        await self.propagate(result.accounts)
        return result

    async def flag_within(self, user_id: int, ids: Sequence[int], kind: str, value: bool) -> OperationResult:
        """Set seen, starred or a keyword inside the caller's transaction; the caller propagates after commit."""
        messages = {m.id: m for m in await self.repo.messages(user_id, ids)}
        owned = sorted(messages)
        if kind.startswith("keyword:"):
            keyword = kind.removeprefix("keyword:")
            changed_ids = await self.repo.set_flag(owned, keyword, value, flag_spellings(keyword))
        else:
            changed_ids = await (self.repo.set_seen(owned, value) if kind == "seen"
                                 else self.repo.set_starred(owned, value))
        if not changed_ids:
            return _NOTHING
        changed = [messages[i] for i in changed_ids]
        threads = sorted({m.thread_id for m in changed if m.thread_id is not None})
        await self.threads.recompute(threads)
        await self.repo.queue_provider_changes(
            [(m.account_id, m.id, kind, [], [], value, m.mailbox_id) for m in changed])
        state = StateManager(self.change_log)
        recorder = MailChangeRecorder(state)
        # Only $seen moves a Mailbox property (its unread counts); a star or another keyword changes the Email alone,
        # so its Mailboxes are not "updated" (RFC 8620 §5.2: a record whose properties did not change is not).
        bindings = {(m.account_id, label) for m in changed for label in m.labels} if kind == "seen" else set()
        await self._announce(recorder, changed, bindings)
        await state.write()
        await state.announce()
        return OperationResult(tuple(m.id for m in changed), tuple(threads),
                               tuple(sorted({m.account_id for m in changed})))

    async def relabel_within(
        self, user_id: int, message_ids: Sequence[int], add: Collection[int], remove: Collection[int]
    ) -> OperationResult:
        """Change labels inside the caller's transaction; the caller propagates after commit."""
        return await self._relabel(user_id, await self.repo.messages(user_id, message_ids), set(add), set(remove))

    # -- snooze -----------------------------------------------------------------------------------

    async def snooze(self, user_id: int, thread_ids: Iterable[int], until: datetime) -> OperationResult:
        """Snoozing is archiving with an alarm, written in labels: Inbox off, Snoozed on."""
        threads = sorted(set(thread_ids))
        ids = await self._targets(user_id, threads, ())
        if not ids:
            return _NOTHING
        inbox = await self.repo.role_label(user_id, LabelRole.INBOX)
        snoozed = await self.repo.role_label(user_id, LabelRole.SNOOZED)
        async with self.db.transaction():
            messages = await self.repo.messages(user_id, ids)
            result = await self._relabel(user_id, messages, {snoozed}, {inbox})
            await self.repo.set_snoozed_until(sorted({m.thread_id for m in messages if m.thread_id}), until)
        await self.propagate(result.accounts)
        return result

    async def wake(self, user_id: int, thread_ids: Iterable[int]) -> OperationResult:
        """Back in the Inbox and unread: the read state it had is deliberately lost, because a thread that
        returns as it was left is one the reader has already learnt to scroll past."""
        threads = sorted(set(thread_ids))
        ids = await self._targets(user_id, threads, ())
        if not ids:
            return _NOTHING
        inbox = await self.repo.role_label(user_id, LabelRole.INBOX)
        snoozed = await self.repo.role_label(user_id, LabelRole.SNOOZED)
        async with self.db.transaction():
            messages = await self.repo.messages(user_id, ids)
            moved = await self._relabel(user_id, messages, {inbox}, {snoozed})
            await self.repo.set_snoozed_until(threads, None)
        await self.propagate(moved.accounts)
        newest = await self.repo.newest_message_ids(user_id, threads)
        await self.set_seen(user_id, False, message_ids=newest)
        return moved

    async def wake_due(self, now: datetime, limit: int = 500) -> int:
        woken = 0
        by_user: dict[int, list[int]] = {}
        for user_id, thread_id in await self.repo.due_snoozes(now, limit):
            by_user.setdefault(user_id, []).append(thread_id)
        for user_id, threads in by_user.items():
            try:
                await self.wake(user_id, threads)
                woken += len(threads)
            except Exception:  # one user's failure must not keep everyone else's threads asleep
                log.exception("waking snoozed threads of user %s failed", user_id)
        return woken

    # -- propagation ------------------------------------------------------------------------------

    async def propagate(self, account_ids: Iterable[int]) -> None:
        """Enqueue provider propagation; call only after the change is committed."""
        if self.queues is None:
            return
        ticket = _TICKET.get()
        for account_id in account_ids:
            await self.queues.enqueue(PROPAGATE_PROVIDER_CHANGES, account_id=account_id)
            if ticket is not None and account_id in ticket.accounts:
                # the held changes: once more when the window has passed (the one above pushes the rest)
                await self.queues.enqueue(PROPAGATE_PROVIDER_CHANGES, account_id=account_id,
                                          delay_seconds=ticket.window.total_seconds() + 1)

    # -- undo -------------------------------------------------------------------------------------

    @contextmanager
    def undoable(self, window: timedelta = UNDO_WINDOW) -> Iterator[UndoTicket]:
        """Label changes made inside are held for `window` and can be undone with `undo(ticket.key)`."""
        ticket = UndoTicket(secrets.token_urlsafe(18), datetime.now(UTC) + window, window)
        token = _TICKET.set(ticket)
        try:
            yield ticket
        finally:
            _TICKET.reset(token)

    async def undo(self, user_id: int, undo_key: str) -> OperationResult:
        """Put the labels back as they were before the action. Changes still waiting are withdrawn, so the
        provider never hears of them; any already sent (undo after the window) are reversed at the provider."""
        async with self.db.transaction():
            changes = await self.repo.undoable_changes(user_id, undo_key)
            if not changes:
                raise NotFoundError("There is nothing to undo.")
            snoozed = await self.repo.role_label(user_id, LabelRole.SNOOZED)
            waiting = [c for c in changes if c[4]]
            await self.repo.drop_changes([c[0] for c in waiting])
            await self.repo.release_undo_key(undo_key)
            messages = {m.id: m for m in await self.repo.messages(user_id, sorted({c[1] for c in changes}))}
            moved: list[OperationResult] = []
            for _change_id, message_id, added, removed, still_waiting in reversed(changes):
                message = messages.get(message_id)
                if message is None:
                    continue
                moved.append(await self._relabel(user_id, [message], set(removed), set(added),
                                                 tell_provider=not still_waiting))
                messages.update({m.id: m for m in await self.repo.messages(user_id, [message_id])})
            unsnoozed = sorted({m.thread_id for c in changes if snoozed in c[2]
                                for m in [messages.get(c[1])] if m is not None and m.thread_id is not None})
            if unsnoozed:
                await self.repo.set_snoozed_until(unsnoozed, None)
        result = OperationResult(tuple(sorted({i for r in moved for i in r.messages})),
                                 tuple(sorted({i for r in moved for i in r.threads})),
                                 tuple(sorted({i for r in moved for i in r.accounts})))
        await self.propagate(result.accounts)
        return result

    async def propagate_stranded(self) -> int:
        """The safety net: a job that used up its retries (a provider down for an hour) leaves changes pending
        with nothing to push them; this queues every account that still owes its provider something."""
        accounts = await self.repo.accounts_with_pending_changes()
        await self.propagate(accounts)
        return len(accounts)
