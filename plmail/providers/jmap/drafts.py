"""Drafts and "Delete forever" at the upstream (RFC 8621 §4.6, §4.8): a draft is imported into the upstream's
Drafts mailbox with `$draft`, a newer version replaces it (JMAP Emails are immutable, so the old one is
destroyed), a discarded or sent draft is destroyed; a message deleted for good here is destroyed there.

An Email's id is its reference: unique in the account, so the container stays empty."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from plmail.domain.enums import AccountStatus
from plmail.domain.ingest import ProviderRef
from plmail.domain.models import Account
from plmail.domain.outgoing import SendReceipt
from plmail.domain.providers import PropagationOutcome, Tombstone
from plmail.providers.jmap.connection import JMAP, Upstream
from plmail.providers.jmap.sync import JmapMail

log = logging.getLogger(__name__)


def email_ref(email_id: str) -> ProviderRef:
    return ProviderRef(key=email_id)


def email_id_of(ref: ProviderRef | None) -> str | None:
    """The upstream Email id of a reference this provider made; None for one without a key."""
    return ref.key if ref is not None and ref.key and not ref.container else None


async def destroy_emails(mail: JmapMail, upstream: Upstream, email_ids: Sequence[str]) -> dict[str, str]:
    """Email/set destroy; returns the ids the upstream refused, with why. One already gone is destroyed."""
    if not email_ids:
        return {}
    answer = await mail.call(upstream, "Email/set", {"destroy": list(email_ids)})
    refused: dict[str, str] = {}
    for email_id, error in (answer.get("notDestroyed") or {}).items():
        if error.get("type") != "notFound":
            refused[str(email_id)] = f"{error.get('type')}: {error.get('description') or ''}".strip(": ")
    await mail.store.forget(upstream.record.id, [e for e in email_ids if e not in refused])
    return refused


class JmapDraftStore:
    kind = JMAP
    updates_in_place = False  # an Email cannot change: a new version is a new Email
    files_sent_copies = False  # the upstream files the Sent copy itself (EmailSubmission's onSuccessUpdateEmail)

    def __init__(self, mail: JmapMail) -> None:
        self.mail = mail

    async def _upstream(self, account: Account) -> Upstream | None:
        record = await self.mail.accounts.for_job(account.id)
        if record is None:
            return None
        return await self.mail.connector.open(record)

    async def save_draft(self, account: Account, raw: bytes, *, replaces: ProviderRef | None) -> ProviderRef | None:
        drafts = next((m.mailbox_id for m in await self.mail.store.mailboxes(account.id) if m.role == "drafts"), None)
        upstream = await self._upstream(account)
        if drafts is None or upstream is None:
            return None  # the upstream has no Drafts mailbox: the draft lives in plmail alone
        blob = await self.mail.client.upload(upstream.session, upstream.credentials, raw)
        answer = await self.mail.call(upstream, "Email/import", {"emails": {"draft": {
            "blobId": blob, "mailboxIds": {drafts: True}, "keywords": {"$draft": True, "$seen": True}}}})
        created = (answer.get("created") or {}).get("draft")
        if not created:
            error = (answer.get("notCreated") or {}).get("draft") or {}
            log.warning("the JMAP server of account %s kept no draft: %s", account.id, error.get("type"))
            return None
        old = email_id_of(replaces)
        if old is not None:
            await destroy_emails(self.mail, upstream, [old])
        return email_ref(str(created["id"]))

    async def discard_draft(self, account: Account, ref: ProviderRef) -> None:
        email_id = email_id_of(ref)
        upstream = await self._upstream(account)
        if email_id is not None and upstream is not None:
            await destroy_emails(self.mail, upstream, [email_id])

    async def file_sent(self, account: Account, copy: bytes, *, draft: ProviderRef | None,
                        receipt: SendReceipt) -> ProviderRef | None:
        """The transport sent its own copy and the upstream filed it in Sent: the draft is removed."""
        if email_id_of(draft) is not None and draft is not None:
            await self.discard_draft(account, draft)
        return None


class JmapDestroyer:
    """"Delete forever" (the user's choice, after Trash) as `Email/set destroy` at the upstream."""

    kind = JMAP

    def __init__(self, mail: JmapMail) -> None:
        self.mail = mail

    async def refusal(self, account_id: int) -> str | None:
        return None  # an account that may change its mail may destroy it

    async def destroy(self, account_id: int, doomed: Sequence[Tombstone]) -> PropagationOutcome:
        record = await self.mail.accounts.for_job(account_id)
        if record is None or not record.is_active or record.status is not AccountStatus.OK:
            return PropagationOutcome()  # waits until the account can be reached again
        upstream = await self.mail.connector.open(record)
        by_email: dict[str, list[int]] = {}
        done: list[int] = []
        for tombstone in doomed:
            email_id = email_id_of(tombstone.ref)
            if email_id is None:
                done.append(tombstone.id)  # never reached the upstream
            else:
                by_email.setdefault(email_id, []).append(tombstone.id)
        refused = await destroy_emails(self.mail, upstream, sorted(by_email))
        failed = {t: why for email_id, why in refused.items() for t in by_email[email_id]}
        done += [t for email_id, ids in by_email.items() if email_id not in refused for t in ids]
        return PropagationOutcome(done=tuple(done), failed=failed)
