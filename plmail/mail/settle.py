"""What every writer of stored mail tells JMAP clients after it changed or deleted messages."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from plmail.db.database import Database
from plmail.db.repos.changes import ChangeLogRepository
from plmail.db.repos.ingest import IngestRepository
from plmail.db.repos.threads import ThreadRepository
from plmail.mail.changes import MailChangeRecorder, StateManager


async def announce(db: Database, account_id: int, message_ids: Mapping[int, int | None], label_ids: Sequence[int],
                   *, destroyed: bool = False, threads_destroyed: Iterable[int] = ()) -> None:
    """Record changed (or deleted) messages, destroyed threads, and the mailboxes of `label_ids` in the JMAP
    change log, on the caller's transaction. A deleted message changes its thread; a changed one (its flags,
    its folder) leaves the thread's membership alone."""
    state = StateManager(ChangeLogRepository(db))
    recorder = MailChangeRecorder(state)
    for message_id, thread_id in sorted(message_ids.items()):
        recorder.email_changed(account_id, message_id, destroyed=destroyed, thread_id=thread_id if destroyed else None)
    for thread_id in sorted(set(threads_destroyed)):
        recorder.thread_destroyed(account_id, thread_id)
    if label_ids:
        recorder.mailboxes_changed(account_id, await IngestRepository(db).bindings_for(account_id, list(label_ids)),
                                   labels=label_ids)
    await state.write()
    await state.announce()


async def settle_deleted(db: Database, account_id: int, thread_of: Mapping[int, int | None],
                         label_ids: Iterable[int]) -> set[int]:
    """After messages (id -> thread) were deleted: drop the threads they emptied, recompute the others and
    tell clients about all of it. Returns the emptied threads."""
    if not thread_of:
        return set()
    threads = ThreadRepository(db)
    touched = sorted({t for t in thread_of.values() if t is not None})
    emptied = await threads.delete_empty(touched)
    await threads.recompute([t for t in touched if t not in emptied])
    await announce(db, account_id, {m: (t if t not in emptied else None) for m, t in thread_of.items()},
                   sorted(set(label_ids)), destroyed=True, threads_destroyed=emptied)
    return emptied
