"""Deleting destroyed mail for good at an IMAP server: \\Deleted, then UID EXPUNGE of exactly those messages in
the folder holding them (RFC 4315); without UIDPLUS a plain EXPUNGE, which the client runs only while no other
message of the folder is marked \\Deleted (it would take another client's marked mail with it)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from plmail.db.repos.account_admin import SYNC_LOCK, AccountAdminRepository
from plmail.domain.enums import AccountStatus, ProviderKind
from plmail.domain.providers import PropagationOutcome, Tombstone
from plmail.mail.propagation import PropagationError
from plmail.providers.imap.errors import ImapError
from plmail.providers.imap.refs import imap_place
from plmail.providers.imap.repos.mailboxes import MailboxRepository
from plmail.providers.imap.session import ImapConnector

log = logging.getLogger(__name__)

_SYNC_WAIT_SECONDS = 60.0


class ImapDestroyer:
    kind = ProviderKind.IMAP

    def __init__(self, accounts: AccountAdminRepository, mailboxes: MailboxRepository,
                 connector: ImapConnector) -> None:
        self.accounts = accounts
        self.mailboxes = mailboxes
        self.connector = connector

    async def refusal(self, account_id: int) -> str | None:
        return None  # an IMAP account that may change flags may expunge

    async def destroy(self, account_id: int, doomed: Sequence[Tombstone]) -> PropagationOutcome:
        record = await self.accounts.for_job(account_id)
        if record is None or not record.is_active or record.status is not AccountStatus.OK:
            return PropagationOutcome()  # waits until the account can be reached again
        done: list[int] = []
        failed: dict[int, str] = {}
        by_folder: dict[int, list[tuple[Tombstone, int]]] = {}
        for tombstone in doomed:
            place = imap_place(tombstone.ref)
            if place is None:
                done.append(tombstone.id)  # never reached the server
            else:
                by_folder.setdefault(place[0], []).append((tombstone, place[1]))
        # Never while the account syncs: the folder being read must not change under the syncer.
        async with self.accounts.session_lock(SYNC_LOCK, account_id, wait=_SYNC_WAIT_SECONDS) as lock:
            if not lock.taken:
                raise PropagationError("The account is syncing; the deletions are made after it.")
            try:
                async with self.connector.session(record) as client:
                    for mailbox_id, placed in sorted(by_folder.items()):
                        tombstones = [t for t, _ in placed]
                        row = await self.mailboxes.get(mailbox_id)
                        if row is None:
                            done.extend(t.id for t in tombstones)  # the folder is gone, and the mail with it
                            continue
                        uids = sorted({uid for _, uid in placed})
                        try:
                            await client.select(row.full_path)
                            await client.store_flags(uids, add=["\\Deleted"])
                            expunged = await client.expunge(uids)
                        except ImapError as exc:
                            if exc.retryable:
                                raise
                            failed |= {t.id: str(exc) for t in tombstones}
                            continue
                        if expunged:
                            done.extend(t.id for t in tombstones)
                        else:
                            reason = ("marked \\Deleted; the server has no UIDPLUS and other messages of the folder "
                                      "are marked too, so a plain EXPUNGE would remove those as well")
                            failed |= {t.id: reason for t in tombstones}
            except ImapError as exc:
                if exc.retryable:
                    raise PropagationError(str(exc)) from exc
                log.warning("deletions for account %s wait for the user: %s", account_id, exc)
        return PropagationOutcome(done=tuple(done), failed=failed)
