"""Writing mail through Gmail: the send-as addresses as identities, drafts kept with drafts.create, update and
delete, and mail sent with users.messages.send.

Gmail decides itself which addresses an account sends as (its send-as list, read again on every sync); a
From it does not know it would silently replace with the account's own, which the outbox prevents by sending
only from listed identities. A draft's own id differs from its message's id and survives an update, which
gives the draft a new message: the pair is kept in gmail_draft. messages.send files the message under SENT
and returns its id, which is recorded on the stored message at once, so the next sync finds it stored already.
A copy of mail sent elsewhere (JMAP's Email/import into Sent) goes in with messages.insert under SENT, the same way.
"""

from __future__ import annotations

import contextlib
import email
import email.policy
import email.utils
import logging

from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.db.repos.drafts import DraftRepository
from plmail.domain.enums import AccountStatus, ProviderKind
from plmail.domain.errors import OAuthError
from plmail.domain.ingest import ProviderRef
from plmail.domain.messages import Address
from plmail.domain.models import Account
from plmail.domain.outgoing import OutgoingMessage, ProvidedIdentity, SendError, SendFailure, SendReceipt
from plmail.mail.mime import html_to_text, message_ids
from plmail.providers.api_sending import require_header_envelope, unanswered
from plmail.providers.gmail.client import GmailApi, GmailApiError, GmailDraft, GmailNotFound, GmailSession
from plmail.providers.gmail.pacer import GmailQuotaDeferred
from plmail.providers.gmail.repos.drafts import GmailDraftRepository

log = logging.getLogger(__name__)

# Google's reasons for a token that lacks the scope a method needs.
_SCOPE_REASONS = {"insufficientPermissions", "ACCESS_TOKEN_SCOPE_INSUFFICIENT"}
RECONNECT_TO_SEND = ("Gmail did not let plmail send from this account ({detail}). Connect the account again and "
                     "allow plmail to read, write and send mail.")

GmailFailure = GmailApiError | GmailQuotaDeferred | OAuthError


def _needs_consent(exc: GmailApiError) -> bool:
    scope = exc.status == 403 and (exc.reason in _SCOPE_REASONS or "insufficient authentication scopes"
                                   in str(exc).lower())
    return scope or exc.status == 401


def _referenced(raw: bytes) -> list[str]:
    """The Message-IDs a message answers, the one it replies to first, then its references newest first."""
    parsed = email.message_from_bytes(raw.split(b"\r\n\r\n", 1)[0] + b"\r\n\r\n", policy=email.policy.compat32)
    replied = message_ids(str(parsed.get("In-Reply-To") or ""))
    referenced = message_ids(str(parsed.get("References") or ""))
    return list(dict.fromkeys([*replied, *reversed(referenced)]))


class GmailWrites:
    """What the three writing roles share: the API, the draft ids, and what a refusal means for the account."""

    def __init__(self, accounts: AccountAdminRepository, api: GmailApi) -> None:
        self.accounts = accounts
        self.api = api
        self.drafts = GmailDraftRepository(accounts.db)
        self.messages = DraftRepository(accounts.db)

    async def send_error(self, account: Account, exc: GmailFailure) -> SendError:
        """The outbox's view of a Gmail refusal: quota and passing trouble are tried again, the rest is final."""
        if isinstance(exc, GmailQuotaDeferred):
            return SendError(f"Gmail's quota for this account is used up until {exc.until:%H:%M:%S} UTC; plmail "
                             f"tries again then.", failure=SendFailure.TEMPORARY)
        if isinstance(exc, OAuthError):
            failure = SendFailure.TEMPORARY if exc.retryable else SendFailure.PERMANENT
            return SendError(str(exc), failure=failure, reason=None if exc.retryable else "forbiddenToSend")
        if exc.status == 0:
            return SendError(str(exc), failure=unanswered(exc))
        if exc.retryable:
            return SendError(f"{exc}; plmail tries again.", failure=SendFailure.TEMPORARY)
        if _needs_consent(exc):
            return SendError(await self.needs_consent(account, exc), failure=SendFailure.PERMANENT,
                             reason="forbiddenToSend")
        if exc.status == 413:
            return SendError(f"The message is too large for Gmail: {exc}", failure=SendFailure.PERMANENT,
                             reason="tooLarge")
        return SendError(f"Gmail refused the message: {exc}", failure=SendFailure.PERMANENT)

    async def needs_consent(self, account: Account, exc: GmailApiError) -> str:
        """Flag the account for a new consent, as a withdrawn grant is flagged; returns the reason."""
        text = RECONNECT_TO_SEND.format(detail=exc)
        await self.accounts.set_status(account.id, AccountStatus.RECONNECT, text)
        return text

    async def refused_write(self, account: Account, exc: GmailFailure, what: str) -> None:
        """A draft write Gmail refused: passing trouble is raised for the job to try again; a final refusal is
        logged, and the draft lives in plmail alone."""
        if exc.retryable:
            raise exc
        if isinstance(exc, GmailApiError) and _needs_consent(exc):
            await self.needs_consent(account, exc)
        log.warning("Gmail account %s: %s failed: %s", account.id, what, exc)

    async def draft_id(self, session: GmailSession, account: Account, gmail_message_id: str) -> str | None:
        """The draft holding this message: from gmail_draft, or (a draft another client wrote) Gmail's list."""
        known = await self.drafts.draft_id(account.id, gmail_message_id)
        if known is not None:
            return known
        token: str | None = None
        while True:
            page, token = await session.drafts_page(token)
            found = next((d for d in page if d.message.id == gmail_message_id), None)
            if found is not None:
                await self.drafts.remember(account.id, found.id, found.message.id)
                return found.id
            if token is None:
                return None


class GmailIdentitySource:
    """users.settings.sendAs.list: every address Gmail lets the account send as, with its name, reply-to and
    HTML signature. An address still waiting for its owner's confirmation (verificationStatus "pending") is
    listed unverified: shown as such, and refused for sending until Gmail reports it accepted."""

    kind = ProviderKind.GMAIL
    user_aliases = False

    def __init__(self, api: GmailApi) -> None:
        self.api = api

    async def identities(self, account: Account) -> list[ProvidedIdentity]:
        listed = await (await self.api.session(account)).send_as()
        default = next((s.email for s in listed if s.is_default and s.verified), None) or next(
            (s.email for s in listed if s.is_primary), None)
        return [ProvidedIdentity(
            email=s.email, name=s.display_name,
            reply_to=tuple(Address(name, address) for name, address in email.utils.getaddresses([s.reply_to])
                           if address),
            text_signature=html_to_text(s.signature) if s.signature else "", html_signature=s.signature,
            is_primary=s.email == default, verified=s.verified,
        ) for s in listed]


class GmailDraftStore:
    """Drafts with drafts.create and drafts.update (a reply's draft in its Gmail thread), removed with
    drafts.delete. Gmail files what messages.send sent under SENT itself; only the draft is removed after."""

    kind = ProviderKind.GMAIL
    updates_in_place = True
    files_sent_copies = True

    def __init__(self, writes: GmailWrites) -> None:
        self.writes = writes

    async def save_draft(self, account: Account, raw: bytes, *, replaces: ProviderRef | None) -> ProviderRef | None:
        writes = self.writes
        try:
            session = await writes.api.session(account)
            thread_id = await writes.messages.provider_thread_of(account.id, _referenced(raw))
            previous = await writes.draft_id(session, account, replaces.key) if (
                replaces is not None and replaces.key) else None
            saved = await self._save(session, account, raw, previous, thread_id)
        except (GmailApiError, GmailQuotaDeferred, OAuthError) as exc:
            await writes.refused_write(account, exc, "saving a draft")
            return None
        await writes.drafts.remember(account.id, saved.id, saved.message.id)
        return ProviderRef(key=saved.message.id)

    async def _save(self, session: GmailSession, account: Account, raw: bytes, previous: str | None,
                    thread_id: str | None) -> GmailDraft:
        if previous is not None:
            try:
                return await session.update_draft(previous, raw, thread_id=thread_id)
            except GmailNotFound:  # deleted at Gmail meanwhile (or its thread): the new version is a new draft
                await self.writes.drafts.forget(account.id, previous)
        try:
            return await session.create_draft(raw, thread_id=thread_id)
        except GmailNotFound:
            if thread_id is None:
                raise
            return await session.create_draft(raw, thread_id=None)  # the thread is gone at Gmail

    async def discard_draft(self, account: Account, ref: ProviderRef) -> None:
        if not ref.key:
            return
        writes = self.writes
        try:
            session = await writes.api.session(account)
            draft_id = await writes.draft_id(session, account, ref.key)
            if draft_id is None:
                return  # not a draft at Gmail (any more)
            with contextlib.suppress(GmailNotFound):  # gone already
                await session.delete_draft(draft_id)
        except (GmailApiError, GmailQuotaDeferred, OAuthError) as exc:
            await writes.refused_write(account, exc, "removing a draft")
            return
        await writes.drafts.forget(account.id, draft_id)

    async def file_sent(self, account: Account, copy: bytes, *, draft: ProviderRef | None,
                        receipt: SendReceipt) -> ProviderRef | None:
        if receipt.sent_elsewhere:
            return await self._insert_sent(account, copy)
        sent = receipt.ref.key if receipt.ref is not None else None
        if draft is not None and draft.key and draft.key != sent:
            await self.discard_draft(account, draft)
        return None  # the sent message's id was recorded when it went


    async def _insert_sent(self, account: Account, copy: bytes) -> ProviderRef:
        """Mail sent elsewhere filed under SENT with messages.insert (in the Gmail thread of what it answers).
        Every refusal is raised: the copy stays in plmail and the job tries again."""
        writes = self.writes
        try:
            session = await writes.api.session(account)
            thread_id = await writes.messages.provider_thread_of(account.id, _referenced(copy))
            inserted = await session.insert(copy, label_ids=("SENT",), thread_id=thread_id)
        except GmailApiError as exc:
            if _needs_consent(exc):
                await writes.needs_consent(account, exc)
            raise
        return ProviderRef(key=inserted.id)


class GmailTransport:
    """users.messages.send with the kept copy (Bcc included: Gmail sends to Bcc and removes the header from
    what the recipients get) and, for a reply, the thread of the mail it answers."""

    kind = ProviderKind.GMAIL

    def __init__(self, writes: GmailWrites) -> None:
        self.writes = writes

    async def send(self, account: Account, message: OutgoingMessage, *, draft: ProviderRef | None) -> SendReceipt:
        require_header_envelope(message, "Gmail")
        # Gmail threads a message only when its headers answer the thread too: the id alone would not join it.
        thread_id = message.thread_key if _referenced(message.copy) else None
        try:
            session = await self.writes.api.session(account)
            try:
                sent = await session.send(message.copy, thread_id=thread_id)
            except GmailNotFound:
                if thread_id is None:
                    raise
                # The thread was deleted at Gmail since the last sync (a 404 sends nothing): a thread of its own.
                sent = await session.send(message.copy, thread_id=None)
        except (GmailApiError, GmailQuotaDeferred, OAuthError) as exc:
            raise await self.writes.send_error(account, exc) from exc
        return SendReceipt(ref=ProviderRef(key=sent.id))
