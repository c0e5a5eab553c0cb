"""Drafts and Sent on an IMAP server: APPEND a draft to Drafts with \\Draft (and remove the version it
replaces: \\Deleted then UID EXPUNGE), and after a send APPEND the copy to Sent with \\Seen — unless the
server files its own copy — and remove the draft.

The UID the server gives an appended message (UIDPLUS, RFC 4315) is recorded on the stored message, so the
next sync finds it already stored instead of storing it twice; a server without UIDPLUS is asked for the
message by its Message-ID.
"""

from __future__ import annotations

import email
import email.policy
import logging
from datetime import UTC, datetime

from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.domain.enums import LabelRole, ProviderKind
from plmail.domain.ingest import ProviderRef
from plmail.domain.models import Account
from plmail.domain.outgoing import ProvidedIdentity, SendReceipt
from plmail.providers.imap.client import ImapClient
from plmail.providers.imap.errors import ImapError
from plmail.providers.imap.refs import imap_place, imap_ref
from plmail.providers.imap.repos.mailboxes import MailboxRepository, MailboxRow
from plmail.providers.imap.session import ImapConnector

log = logging.getLogger(__name__)


class ImapDraftStore:
    kind = ProviderKind.IMAP
    updates_in_place = False
    files_sent_copies = True

    def __init__(self, accounts: AccountAdminRepository, mailboxes: MailboxRepository,
                 connector: ImapConnector) -> None:
        self.accounts = accounts
        self.mailboxes = mailboxes
        self.connector = connector

    async def save_draft(self, account: Account, raw: bytes, *, replaces: ProviderRef | None) -> ProviderRef | None:
        folder = await self.mailboxes.by_role(account.id, LabelRole.DRAFTS.value)
        record = await self.accounts.for_job(account.id)
        if folder is None or record is None:
            return None  # the server has no Drafts folder plmail knows of: the draft lives in plmail alone
        async with self.connector.session(record) as client:
            ref = await self._append(client, folder, raw, ["\\Draft", "\\Seen"])
            if replaces is not None:
                await self._remove(client, replaces)
        return ref

    async def discard_draft(self, account: Account, ref: ProviderRef) -> None:
        record = await self.accounts.for_job(account.id)
        if record is None:
            return
        async with self.connector.session(record) as client:
            await self._remove(client, ref)

    async def file_sent(self, account: Account, copy: bytes, *, draft: ProviderRef | None,
                        receipt: SendReceipt) -> ProviderRef | None:
        record = await self.accounts.for_job(account.id)
        if record is None:
            return None
        sent = None if receipt.provider_files_copy else await self.mailboxes.by_role(account.id, LabelRole.SENT.value)
        async with self.connector.session(record) as client:
            ref = await self._append(client, sent, copy, ["\\Seen"]) if sent is not None else None
            if draft is not None:
                await self._remove(client, draft)
        return ref

    async def _append(self, client: ImapClient, folder: MailboxRow, raw: bytes, flags: list[str]) -> ProviderRef:
        result = await client.append(folder.full_path, raw, flags=flags, date=datetime.now(UTC))
        uid = result.uid
        if uid is None:
            uid = await self._find(client, folder, raw)
        return imap_ref(folder.id, uid)

    async def _find(self, client: ImapClient, folder: MailboxRow, raw: bytes) -> int | None:
        """Without UIDPLUS: the newest message of the folder carrying this Message-ID."""
        parsed = email.message_from_bytes(raw, policy=email.policy.compat32)
        message_id = (parsed.get("Message-ID") or "").strip()
        if not message_id or '"' in message_id or "\\" in message_id:
            return None
        await client.select(folder.full_path)
        found = await client.uid_search(f'HEADER Message-ID "{message_id}"')
        return max(found) if found else None

    async def _remove(self, client: ImapClient, ref: ProviderRef) -> None:
        place = imap_place(ref)
        if place is None:
            return
        mailbox_id, uid = place
        folder = await self.mailboxes.get(mailbox_id)
        if folder is None:
            return
        try:
            await client.select(folder.full_path)
            await client.store_flags([uid], add=["\\Deleted"])
            await client.expunge([uid])
        except ImapError as exc:
            if exc.retryable:
                raise
            log.warning("could not remove message %s from %r: %s", uid, folder.full_path, exc)


class ImapIdentitySource:
    """An IMAP account sends as its own address and any alias the user adds (SMTP lets a user send under an
    address they have the right to); the server itself lists nothing."""

    kind = ProviderKind.IMAP
    user_aliases = True

    async def identities(self, account: Account) -> list[ProvidedIdentity]:
        return []
