"""Per-folder message sync: deletions and flag changes first (`check`), then new mail (`new_mail`).

A sync makes new mail visible and stops; history below a folder's import floor is the importer's, so the
first sync of a folder only notes where "new" begins and returns at once.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from plmail.db.database import Database
from plmail.db.repos.account_admin import AccountRecord
from plmail.db.repos.imap_messages import ImapMessageRepository, MessageRef, ServerFlags
from plmail.db.repos.threads import ThreadRepository
from plmail.mail.settle import announce
from plmail.providers.imap.batches import batches
from plmail.providers.imap.client import ImapClient
from plmail.providers.imap.ingest import FolderIngest
from plmail.providers.imap.models import FlagState, MailboxState
from plmail.providers.imap.repos.mailboxes import MailboxRepository, MailboxRow

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class CheckResult:
    touched: bool
    vanished: int = 0
    flags_changed: int = 0
    renumbered: bool = False


def _top(state: MailboxState, uids: list[int]) -> int:
    """The highest UID in use: UIDNEXT - 1 when the server says it, else the highest one listed."""
    if state.uidnext is not None:
        return max(state.uidnext - 1, 0)
    return max(uids, default=0)


class MessageSyncer:
    def __init__(self, db: Database, mailboxes: MailboxRepository, ingest: FolderIngest) -> None:
        self.db = db
        self.mailboxes = mailboxes
        self.messages = ImapMessageRepository(db)
        self.threads = ThreadRepository(db)
        self.ingest = ingest

    async def check(self, client: ImapClient, account: AccountRecord, folder: MailboxRow) -> CheckResult:
        """Open the folder; note first contact or a renumbering; mark what vanished; take the server's flags."""
        state = await client.select(folder.full_path, readonly=True)
        if not folder.contacted:
            # A first sync ends here: one job reading a whole folder would hold the ingest queue for as long as
            # it took, with an empty inbox meanwhile and every other account's new mail queued behind it.
            uids = [] if state.uidnext is not None else await client.uid_search("ALL")
            await self.mailboxes.first_contact(folder.id, uid_validity=state.uidvalidity, top=_top(state, uids),
                                               modseq=state.highestmodseq, total=state.exists)
            return CheckResult(touched=False)
        if state.uidvalidity != folder.uid_validity:
            await self.renumbered(client, account, folder, state)
            return CheckResult(touched=True, renumbered=True)
        listed_at = await self.messages.now()
        on_server = set(await client.uid_search("ALL"))
        stored = await self.messages.live_uids(folder.id)
        gone = sorted(stored - on_server)
        flags = await self._server_flags(client, folder, state, stored & on_server)
        async with self.db.transaction():
            vanished = await self.messages.mark_vanished(folder.id, gone)
            changed = await self.messages.apply_flags(folder.id, flags, listed_at)
            await self._announce(account.id, folder, changed)
        await self.mailboxes.set_modseq(folder.id, state.highestmodseq)
        await self.mailboxes.swept(folder.id, total=state.exists)
        return CheckResult(touched=bool(vanished or changed), vanished=len(vanished), flags_changed=len(changed))

    async def _server_flags(self, client: ImapClient, folder: MailboxRow, state: MailboxState, uids: set[int]
                            ) -> list[ServerFlags]:
        """With CONDSTORE only what changed since the last sync; without it, the whole listing each time."""
        if not uids:
            return []
        states: list[FlagState]
        since = folder.highest_modseq
        if client.condstore and state.highestmodseq is not None and since is not None:
            if state.highestmodseq == since:
                return []
            states = await client.fetch_flags(f"1:{max(uids)}", changedsince=since)
        else:
            states = await client.fetch_flags(sorted(uids))
        return [ServerFlags(s.uid, tuple(sorted(s.flags))) for s in states if s.uid in uids]

    async def _announce(self, account_id: int, folder: MailboxRow, changed: list[MessageRef]) -> None:
        if not changed:
            return
        threads = sorted({m.thread_id for m in changed if m.thread_id is not None})
        await self.threads.recompute(threads)
        labels = [folder.label_id] if folder.label_id is not None else []
        await announce(self.db, account_id, {m.id: m.thread_id for m in changed}, labels)

    async def renumbered(self, client: ImapClient, account: AccountRecord, folder: MailboxRow,
                         state: MailboxState) -> None:
        """UIDVALIDITY changed: the stored UIDs mean nothing now. The folder is imported again from the top,
        and the import matches each message to the row it already had (by content, then Message-ID) before
        storing anything, so no mail is duplicated and none loses its labels."""
        log.info("folder %r of account %s was renumbered (UIDVALIDITY %s -> %s); importing it again",
                 folder.full_path, account.id, folder.uid_validity, state.uidvalidity)
        uids = [] if state.uidnext is not None else await client.uid_search("ALL")
        async with self.db.transaction():
            await self.messages.orphan_folder(folder.id)
            await self.messages.forget_folder_skips(account.id, folder.full_path)
            await self.mailboxes.first_contact(folder.id, uid_validity=state.uidvalidity, top=_top(state, uids),
                                               modseq=state.highestmodseq, total=state.exists)

    async def new_mail(self, client: ImapClient, account: AccountRecord, folder: MailboxRow) -> int:
        """Fetch what arrived above `last_seen_uid` into the pipeline, a bounded batch of raw messages at a time.
        Returns how many messages were stored."""
        last = folder.last_seen_uid
        if last is None:
            return 0
        state = await client.select(folder.full_path, readonly=True)
        if state.uidvalidity != folder.uid_validity:
            return 0  # renumbered since the check: the next sync starts the folder over
        if state.uidnext is not None and state.uidnext <= last + 1:
            return 0
        sizes = await client.sizes_above(last)
        uids = list(sizes)
        if not uids:
            return 0
        skip = (await self.messages.stored_uids_between(folder.id, last + 1, max(uids))
                | await self.messages.given_up_uids(account.id, folder.full_path))
        todo = [u for u in uids if u not in skip]
        failed: set[int] = set()
        stored = 0
        listed_at = await self.messages.now()
        for batch in batches(todo, sizes):
            fetched = await client.fetch_raw(batch)
            outcome = await self.ingest.store(account.id, folder, fetched, listed_at=listed_at)
            stored += outcome.stored + outcome.adopted
            failed |= outcome.failed
            if not failed:
                await self.mailboxes.set_last_seen(folder.id, batch[-1])
        # A message that failed keeps "new" from moving past it, so the next sync tries it again; what stored
        # above it is left out of that fetch as already stored.
        await self.mailboxes.set_last_seen(folder.id, (min(failed) - 1) if failed else max(uids))
        return stored
