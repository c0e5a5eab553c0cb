"""Writing mail through Microsoft Graph: the mailbox's address as its identity, drafts created from MIME in
Drafts, and mail sent as the draft Graph holds (`/messages/{id}/send`) or, when it holds none, as MIME
(`sendMail`). Both file the Sent copy themselves.

Sending needs the Mail.Send permission, which plmail asks for since it sends; an account connected before
keeps syncing, but is asked to connect again before its first send (its grant is checked before anything
goes, so the user learns why instead of reading Microsoft's 403). Ids are immutable ones, so a sent draft
keeps its id in Sent Items and the next sync finds it stored already.

A copy of mail sent elsewhere (JMAP's Email/import into Sent) is created as JSON in Sent Items with
PR_MESSAGE_FLAGS read and not unsent, so Microsoft holds a read sent item, not a draft (`sent_items.py`); its id
is recorded on the stored message, so the next delta finds it stored already.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

from plmail.db.database import Database
from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.domain.enums import AccountStatus, ProviderKind
from plmail.domain.errors import InvalidMessageError, OAuthError
from plmail.domain.ingest import ProviderRef
from plmail.domain.models import Account
from plmail.domain.outgoing import OutgoingMessage, ProvidedIdentity, SendError, SendFailure, SendReceipt
from plmail.providers.api_sending import require_header_envelope, unanswered
from plmail.providers.graph.client import GraphClient
from plmail.providers.graph.errors import (
    GraphAuthError,
    GraphConnectionError,
    GraphError,
    GraphNotFound,
    GraphThrottled,
)
from plmail.providers.graph.repos.state import GraphStateRepository
from plmail.providers.graph.sent_items import NotFileable, sent_item

log = logging.getLogger(__name__)

MAX_INLINE_WAIT = 15.0  # seconds a send waits in place for Graph's Retry-After; longer, and it is tried later
SendPermission = Callable[[Account], Awaitable[bool]]
_DENIED = {"ErrorAccessDenied", "Authorization_RequestDenied", "ErrorInsufficientPermissions", "AccessDenied"}
CONSENT_TO_SEND = ("Microsoft has not allowed plmail to send from this account: it was connected before plmail "
                   "could send mail. Connect the account again (on its page: Connect again) and allow sending.")
RECONNECT_TO_SEND = ("Microsoft refused to let plmail send from this account ({detail}). Connect the account "
                     "again and allow plmail to send mail.")


async def _always(account: Account) -> bool:
    return True


class GraphIdentitySource:
    """The mailbox's addresses as Graph lists them: its own (`mail`, else the sign-in name) and the others of its
    `proxyAddresses`, with the user's name; Exchange reports them, so they are verified. Asked after every sync,
    but not while Graph asked plmail to pause (the identities stay as they are)."""

    kind = ProviderKind.GRAPH
    user_aliases = False

    def __init__(self, db: Database, client: GraphClient) -> None:
        self.client = client
        self.state = GraphStateRepository(db)

    async def identities(self, account: Account) -> list[ProvidedIdentity]:
        until = (await self.state.load(account.id)).throttled_until
        if until is not None and until > datetime.now(UTC):
            raise GraphThrottled("Microsoft asked plmail to pause; the identities are read after the pause.",
                                 retry_after=(until - datetime.now(UTC)).total_seconds())
        address, name, aliases = await self.client.me(account)
        return [ProvidedIdentity(email=address or account.email, name=name, is_primary=True),
                *(ProvidedIdentity(email=alias, name=name) for alias in aliases)]


class GraphDraftStore:
    """A draft is created from MIME; a new version is created first and the old one deleted after (a message
    at Graph cannot be replaced from MIME). Graph files Sent Items itself, the sent draft included; a copy of
    mail sent elsewhere is created there as a sent item."""

    kind = ProviderKind.GRAPH
    updates_in_place = False
    files_sent_copies = True

    def __init__(self, client: GraphClient) -> None:
        self.client = client

    async def save_draft(self, account: Account, raw: bytes, *, replaces: ProviderRef | None) -> ProviderRef | None:
        try:
            created = await self.client.create_mime_draft(account, raw)
        except (GraphError, OAuthError) as exc:
            if exc.retryable:
                raise
            log.warning("Graph account %s: saving a draft failed: %s", account.id, exc)
            return None
        if replaces is not None and replaces.key:
            await self.discard_draft(account, replaces)
        return ProviderRef(key=created)

    async def discard_draft(self, account: Account, ref: ProviderRef) -> None:
        if not ref.key:
            return
        try:
            with contextlib.suppress(GraphNotFound):  # gone already
                await self.client.delete_message(account, ref.key)
        except (GraphError, OAuthError) as exc:
            if exc.retryable:
                raise
            log.warning("Graph account %s: removing a draft failed: %s", account.id, exc)

    async def file_sent(self, account: Account, copy: bytes, *, draft: ProviderRef | None,
                        receipt: SendReceipt) -> ProviderRef | None:
        if receipt.sent_elsewhere:
            return await self._file_copy(account, copy)
        return None  # the draft went as it was and is the Sent copy now; sendMail filed its own

    async def _file_copy(self, account: Account, copy: bytes) -> ProviderRef:
        """Mail sent elsewhere created in Sent Items as a read sent item, then its attachments added one by one;
        a sent item with its Message-ID there already is recorded instead of filing a second one.
        A failure removes the half-made item before it is raised, so the next try files the message once; a
        message Microsoft cannot take this way is refused for good (InvalidMessageError, not tried again)."""
        try:
            item = sent_item(copy)
        except NotFileable as exc:
            raise InvalidMessageError(f"Microsoft's Sent Items cannot take this message. {exc}") from exc
        message_id = item.message.get("internetMessageId")
        if message_id:  # there already: filed by the client that sent it, or by a try whose answer was lost
            found = [m for m in await self.client.sent_items_with(account, message_id) if not m.is_draft]
            if found:
                return ProviderRef(key=found[0].id)
        created = await self.client.create_in_folder(account, "sentitems", item.message)
        try:
            for attachment in item.attachments:
                if attachment.posted:
                    await self.client.add_attachment(account, created, attachment.as_json())
                else:
                    await self.client.upload_attachment(account, created, attachment.upload_item(), attachment.content)
        except (GraphError, OAuthError):
            try:
                with contextlib.suppress(GraphNotFound):
                    await self.client.delete_message(account, created)
            except (GraphError, OAuthError) as exc:
                log.warning("Graph account %s: removing a half-filed copy failed: %s", account.id, exc)
            raise
        return ProviderRef(key=created)


class GraphTransport:
    kind = ProviderKind.GRAPH

    def __init__(self, db: Database, accounts: AccountAdminRepository, client: GraphClient,
                 may_send: SendPermission = _always) -> None:
        self.accounts = accounts
        self.client = client
        self.may_send = may_send
        self.state = GraphStateRepository(db)

    async def send(self, account: Account, message: OutgoingMessage, *, draft: ProviderRef | None) -> SendReceipt:
        require_header_envelope(message, "Microsoft")
        try:
            if not await self.may_send(account):
                raise SendError(CONSENT_TO_SEND, failure=SendFailure.PERMANENT, reason="forbiddenToSend")
            await self._wait_for_throttle(account)
            if draft is not None and draft.key:
                try:
                    await self.client.send_draft(account, draft.key)
                    return SendReceipt(ref=ProviderRef(key=draft.key), provider_files_copy=True)
                except GraphNotFound:
                    log.info("Graph account %s: the draft is gone at Microsoft; sending the message as MIME",
                             account.id)
            await self.client.send_mime(account, message.copy)
            return SendReceipt(provider_files_copy=True)
        except (GraphError, OAuthError) as exc:
            raise await self._send_error(account, exc) from exc

    async def _wait_for_throttle(self, account: Account) -> None:
        """Graph said when to come back (to a sync, a propagation or a send): a short wait is waited here."""
        until = (await self.state.load(account.id)).throttled_until
        wait = (until - datetime.now(UTC)).total_seconds() if until is not None else 0.0
        if wait > MAX_INLINE_WAIT:
            raise SendError(f"Microsoft asked plmail to wait until {until:%H:%M:%S} UTC; plmail tries again then.",
                            failure=SendFailure.TEMPORARY)
        if wait > 0:
            await asyncio.sleep(wait)

    async def _send_error(self, account: Account, exc: GraphError | OAuthError) -> SendError:
        if isinstance(exc, OAuthError):
            failure = SendFailure.TEMPORARY if exc.retryable else SendFailure.PERMANENT
            return SendError(str(exc), failure=failure, reason=None if exc.retryable else "forbiddenToSend")
        if isinstance(exc, GraphThrottled):
            await self.state.throttled(account.id, datetime.now(UTC) + timedelta(seconds=exc.retry_after))
            return SendError(f"Microsoft is throttling this mailbox; plmail tries again in {exc.retry_after:.0f} s.",
                             failure=SendFailure.TEMPORARY)
        if isinstance(exc, GraphConnectionError):
            failure = unanswered(exc) if exc.status is None else SendFailure.TEMPORARY
            return SendError(str(exc), failure=failure)
        if isinstance(exc, GraphAuthError) or (exc.status == 403 and exc.code in _DENIED):
            text = RECONNECT_TO_SEND.format(detail=exc)
            await self.accounts.set_status(account.id, AccountStatus.RECONNECT, text)
            return SendError(text, failure=SendFailure.PERMANENT, reason="forbiddenToSend")
        if exc.status == 413 or exc.code == "ErrorMessageSizeExceeded":
            return SendError(f"The message is too large for Microsoft: {exc}", failure=SendFailure.PERMANENT,
                             reason="tooLarge")
        return SendError(f"Microsoft refused the message: {exc}", failure=SendFailure.PERMANENT)
