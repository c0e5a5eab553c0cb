"""Who a user sends as: per account its own address (primary at first), aliases the user adds (where the
provider lets mail go out under any address the user proves, IMAP/SMTP), and the addresses a provider
lists (Gmail's send-as list), refreshed on every sync. Sending from anything else is refused.

An alias sends only once verified (issue 39), as Gmail's send-as does it: a confirmation link goes to the address
from the account's own, and whoever reads that mailbox opens it. An address the provider lists is verified when
the provider says it is confirmed. Another plmail user's address is never taken as an alias.

Changes are recorded in the JMAP change log (Identity), so phones see a new signature or alias.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Final

from plmail.db.database import Database
from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.db.repos.changes import ChangeLogRepository
from plmail.db.repos.identities import IdentityRepository
from plmail.domain.enums import ChangeType, JmapObjectType
from plmail.domain.errors import ForbiddenError, NotFoundError, RateLimitedError, ValidationError
from plmail.domain.mailstore import MailScope
from plmail.domain.messages import Address
from plmail.domain.outgoing import DraftContent, Identity, IdentityOrigin, OutgoingMessage, SendError
from plmail.domain.registry import ProviderRegistry
from plmail.mail.changes import Change, StateManager
from plmail.mail.compose import check_address, check_header, compose, wire_bytes
from plmail.mail.sanitizer import sanitize_outgoing

log = logging.getLogger(__name__)

MAX_SIGNATURE = 20_000
CONFIRMATION_SECONDS: Final = 7 * 24 * 3600  # a confirmation link works for a week
RESEND_SECONDS: Final = 60  # at most one confirmation mail a minute per alias
CONFIRM_PATH: Final = "/identities/confirm/"


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


def _confirmation_text(alias: str, account: str, link: str) -> str:
    """The mail to the alias, in English and German: it is read by whoever holds that mailbox, whose language the
    sender's settings do not tell."""
    return (
        f"{account} asks to send mail as {alias} from plmail.\n\n"
        f"If that is you, or you allow it, open this link and confirm:\n{link}\n\n"
        "If you did not expect this, ignore this message: nothing is sent as your address without the "
        "confirmation. The link works for seven days.\n\n"
        "-- \n\n"
        f"{account} möchte mit plmail Mail als {alias} senden.\n\n"
        f"Wenn du das bist oder es erlaubst, öffne diesen Link und bestätige:\n{link}\n\n"
        "Wenn du das nicht erwartet hast, ignoriere diese Nachricht: ohne die Bestätigung wird nichts unter "
        "deiner Adresse gesendet. Der Link gilt sieben Tage.\n"
    )


class IdentityService:
    def __init__(self, db: Database, providers: ProviderRegistry) -> None:
        self.db = db
        self.repo = IdentityRepository(db)
        self.accounts = AccountAdminRepository(db)
        self.change_log = ChangeLogRepository(db)
        self.sources = providers.identity_sources
        self.transports = providers.transports

    # -- reading ----------------------------------------------------------------------------------------

    async def for_user(self, user_id: int) -> list[Identity]:
        await self._ensure(user_id)
        return await self.repo.for_user(user_id)

    async def for_account(self, user_id: int, account_id: int) -> list[Identity]:
        await self._ensure(user_id)
        record = await self.accounts.owned(user_id, account_id)
        if record is None:
            raise NotFoundError("No such account.")
        return await self.repo.for_account(account_id)

    async def for_scope(self, scope: MailScope) -> list[Identity]:
        """The identities of one account, or in the unified account one per address the user can send from."""
        if scope.unified:
            return await self.sending_identities(scope.user_id)
        return await self.for_account(scope.user_id, scope.account_id)

    async def sending_accounts(self, user_id: int, account_ids: Sequence[int]) -> set[int]:
        """Those of the accounts whose provider has a transport (a local archive keeps mail but sends none)."""
        sending: set[int] = set()
        for account_id in set(account_ids):
            record = await self.accounts.owned(user_id, account_id)
            if record is not None and record.is_active and self.transports.get(record.provider_kind) is not None:
                sending.add(account_id)
        return sending

    async def sending_identities(self, user_id: int) -> list[Identity]:
        """One identity per address the user can send from: of the accounts that can send, the first in the user's
        order of accounts that has the address verified (its id, and so the Identity's, stays while the accounts do);
        an alias still waiting for its confirmation link cannot send, so it is not offered."""
        identities = await self.for_user(user_id)
        sending = await self.sending_accounts(user_id, [i.account_id for i in identities])
        chosen: dict[str, Identity] = {}
        for identity in identities:
            if identity.account_id in sending and identity.verified:
                chosen.setdefault(identity.email.lower(), identity)
        return list(chosen.values())

    async def account_for_new(self, scope: MailScope, email: str) -> int:
        """The account a new identity of `scope` belongs to: its own, or (unified) the user's only account, or the
        one whose address shares the new address's domain."""
        if not scope.unified:
            return scope.account_id
        if len(scope.account_ids) == 1:
            return scope.account_ids[0]
        domain = email.rpartition("@")[2].lower()
        for account_id in scope.account_ids:
            record = await self.accounts.owned(scope.user_id, account_id)
            if record is not None and record.email.lower().endswith("@" + domain):
                return account_id
        raise ValidationError("Several accounts could send as this address: create it in its account's JMAP "
                              "account.", field="email")

    async def owned(self, user_id: int, identity_id: int) -> Identity:
        await self._ensure(user_id)
        identity = await self.repo.owned(user_id, identity_id)
        if identity is None:
            raise NotFoundError("No such identity.")
        return identity

    async def sendable(self, user_id: int, identity_id: int) -> Identity:
        """The identity, if the user may send as it; refused (forbiddenFrom) otherwise."""
        identity = await self.repo.owned(user_id, identity_id)
        if identity is None:
            raise ForbiddenError("You cannot send from that address: it is not one of your identities.")
        record = await self.accounts.owned(user_id, identity.account_id)
        if record is None or not record.is_active:
            raise ForbiddenError("The account of that identity is switched off.")
        return identity

    @staticmethod
    def check_verified(identity: Identity) -> None:
        """Before a message goes out as this identity: refused while the address is not verified."""
        if not identity.verified:
            raise ForbiddenError("You cannot send as this address yet: it is not verified. Open the confirmation "
                                 "link that was sent to it (Settings → Sending can send it again).")

    async def refusal_to_send(self, user_id: int, identity: Identity) -> str | None:
        """Why nothing sent as this identity could ever go (its account has no transport), or None."""
        if identity.account_id in await self.sending_accounts(user_id, [identity.account_id]):
            return None
        return (f"{identity.email} is an address of a local archive, which keeps mail but cannot send it; send from "
                "an account that has a mail server.")

    async def for_address(self, user_id: int, email: str) -> Identity | None:
        """The user's identity with this address (its account's primary first), if there is one."""
        await self._ensure(user_id)
        found = await self.repo.by_address(user_id, email)
        sending = await self.sending_accounts(user_id, [i.account_id for i in found])
        # an account that can send it first: the one a unified account's submission goes through
        found.sort(key=lambda i: i.account_id not in sending)
        return found[0] if found else None

    async def primary(self, user_id: int, account_id: int) -> Identity | None:
        identities = await self.for_account(user_id, account_id)
        return next((i for i in identities if i.is_primary), identities[0] if identities else None)

    async def takes_aliases(self, user_id: int, account_id: int) -> bool:
        """Whether the user may add addresses to this account (IMAP/SMTP), or its provider lists them (Gmail)."""
        record = await self.accounts.owned(user_id, account_id)
        if record is None:
            raise NotFoundError("No such account.")
        source = self.sources.get(record.provider_kind)
        return source is None or source.user_aliases

    # -- writing ----------------------------------------------------------------------------------------

    async def add_alias(self, user_id: int, account_id: int, email: str, *, name: str = "", confirm_base: str
                        ) -> Identity:
        """A new alias, not verified: its confirmation link goes to the address at once (`confirm_base` is this
        server's URL, which the link starts with). It sends once someone with that mailbox opened the link."""
        # The account's own address first: the confirmation goes out from it, and an alias made before anyone listed
        # the account's identities would otherwise stand in for the primary one that `_ensure` makes.
        await self._ensure(user_id)
        record = await self.accounts.owned(user_id, account_id)
        if record is None:
            raise NotFoundError("No such account.")
        source = self.sources.get(record.provider_kind)
        if source is not None and not source.user_aliases:
            raise ForbiddenError("This provider decides which addresses the account sends as; add the address "
                                 "there, and it appears here after the next sync.")
        address = check_address(Address(name, email), "email")
        if await self.repo.belongs_to_another_user(user_id, address.address):
            raise ForbiddenError("This address belongs to another plmail user: you cannot send as it.")
        async with self.db.transaction():
            identity_id = await self.repo.create(account_id, address.address.lower(), name=address.name,
                                                 origin=IdentityOrigin.ALIAS,
                                                 verified=address.address.lower() == record.email.lower())
            if identity_id is None:
                raise ValidationError(f"{address.address} is an identity of this account already.", field="email")
            created: int = identity_id
            await self.repo.mirror_aliases(account_id)
            await self._record(account_id, [created], ChangeType.CREATED)
        identity = await self.owned(user_id, created)
        if not identity.verified:
            try:
                await self.send_confirmation(user_id, created, confirm_base=confirm_base)
            except (SendError, ValidationError) as exc:  # the alias stays, unverified; "send again" retries
                log.warning("the confirmation for identity %s could not be sent: %s", created, exc)
            identity = await self.owned(user_id, created)
        return identity

    async def send_confirmation(self, user_id: int, identity_id: int, *, confirm_base: str) -> None:
        """Mail a new confirmation link to an unverified alias, from its account's own address (an older link
        stops working). Raises SendError when the account's server refused it."""
        identity = await self.owned(user_id, identity_id)
        if identity.verified:
            raise ValidationError("This address is verified already.")
        sent = identity.verification_sent_at
        if sent is not None and datetime.now(UTC) - sent < timedelta(seconds=RESEND_SECONDS):
            raise RateLimitedError("A confirmation went to this address a moment ago; wait a minute before sending "
                                   "another.", retry_after=RESEND_SECONDS)
        record = await self.accounts.owned(user_id, identity.account_id)
        transport = self.transports.get(record.provider_kind) if record is not None else None
        sender = next((i for i in await self.repo.for_account(identity.account_id)
                       if i.verified and i.email.lower() == (record.email.lower() if record else "")), None)
        if record is None or transport is None or sender is None:
            raise ValidationError("This account cannot send mail, so it cannot send the confirmation either.")
        token = secrets.token_urlsafe(32)
        link = confirm_base.rstrip("/") + CONFIRM_PATH + token
        content = DraftContent(identity_id=sender.id, to=(Address("", identity.email),),
                               subject=f"Confirm sending as {identity.email} / Senden als {identity.email} "
                                       f"bestätigen",
                               text_body=_confirmation_text(identity.email, record.email, link),
                               extra_headers=(("Auto-Submitted", "auto-generated"),))
        composed = compose(sender, content)
        await self.repo.confirmation_sent(identity.id, _token_hash(token))
        await transport.send(record.account, OutgoingMessage(message_id=composed.message_id,
                                                             envelope=composed.envelope, wire=wire_bytes(composed.raw),
                                                             copy=composed.raw), draft=None)

    async def awaiting_confirmation(self, token: str) -> tuple[str, str] | None:
        """(the alias, the account's address) a live confirmation link names, for the page that asks."""
        found = await self.repo.awaiting_confirmation(_token_hash(token), max_age_seconds=CONFIRMATION_SECONDS)
        return (found[2], found[3]) if found else None

    async def confirm(self, token: str) -> str:
        """Whoever opened the link (holding the alias's mailbox) confirms: the alias may send from now on. Returns
        the address."""
        async with self.db.transaction():
            found = await self.repo.awaiting_confirmation(_token_hash(token), max_age_seconds=CONFIRMATION_SECONDS)
            confirmed = await self.repo.confirm(_token_hash(token), max_age_seconds=CONFIRMATION_SECONDS)
            if found is None or confirmed is None:
                raise NotFoundError("This confirmation link is not valid any more: send a new one from Settings → "
                                    "Sending.")
            await self._record(confirmed[1], [confirmed[0]], ChangeType.UPDATED)
            address: str = found[2]
        return address

    async def update(self, user_id: int, identity_id: int, *, name: str | None = None,
                     reply_to: Sequence[Address] | None = None, bcc: Sequence[Address] | None = None,
                     text_signature: str | None = None, html_signature: str | None = None) -> Identity:
        identity = await self.owned(user_id, identity_id)
        if name is not None:
            check_header(name, "name")
        for field, value in (("textSignature", text_signature), ("htmlSignature", html_signature)):
            if value is not None and len(value) > MAX_SIGNATURE:
                raise ValidationError(f"A signature may have at most {MAX_SIGNATURE} characters.", field=field)
        clean_reply = tuple(check_address(a, "replyTo") for a in reply_to) if reply_to is not None else None
        clean_bcc = tuple(check_address(a, "bcc") for a in bcc) if bcc is not None else None
        async with self.db.transaction():
            await self.repo.update(identity.id, name=name.strip() if name is not None else None,
                                   reply_to=clean_reply, bcc=clean_bcc, text_signature=text_signature,
                                   html_signature=sanitize_outgoing(html_signature, remote_images=True)
                                   if html_signature else html_signature)
            await self._record(identity.account_id, [identity.id], ChangeType.UPDATED)
        return await self.owned(user_id, identity_id)

    async def make_primary(self, user_id: int, identity_id: int) -> None:
        identity = await self.owned(user_id, identity_id)
        before = [i.id for i in await self.repo.for_account(identity.account_id) if i.is_primary]
        async with self.db.transaction():
            await self.repo.make_primary(identity.account_id, identity.id)
            await self._record(identity.account_id, sorted({identity.id, *before}), ChangeType.UPDATED)

    async def remove(self, user_id: int, identity_id: int) -> None:
        identity = await self.owned(user_id, identity_id)
        if not identity.may_delete:
            raise ForbiddenError("Only aliases you added can be removed; this address comes from the account.")
        async with self.db.transaction():
            await self.repo.delete(identity.id)
            await self.repo.ensure_primary(identity.account_id)
            await self.repo.mirror_aliases(identity.account_id)
            await self._record(identity.account_id, [identity.id], ChangeType.DESTROYED)

    async def refresh(self, account_id: int) -> None:
        """Bring the provider-listed identities in step (after a sync); a provider that cannot answer now
        leaves them as they were."""
        record = await self.accounts.for_job(account_id)
        if record is None:
            return
        await self._ensure(record.user_id)
        source = self.sources.get(record.provider_kind)
        if source is None:
            return
        try:
            provided = await source.identities(record.account)
        except Exception as exc:  # the identities are a nicety of the sync; never its failure
            log.warning("could not refresh the identities of account %s: %s", account_id, exc)
            return
        async with self.db.transaction():
            touched = await self.repo.replace_provided(account_id, provided)
            if touched:
                await self.repo.mirror_aliases(account_id)
                await self._record(account_id, touched, ChangeType.UPDATED)

    async def _ensure(self, user_id: int) -> None:
        """Every account has its own address as an identity (and keeps the aliases it had before identities
        existed); created the first time anyone asks."""
        for account_id, email, display_name in await self.repo.accounts_without_identities(user_id):
            async with self.db.transaction():
                created = await self.repo.create(account_id, email, name=display_name, origin=IdentityOrigin.ACCOUNT,
                                                 is_primary=True, verified=True)
                ids = [created] if created is not None else []
                for alias in await self.repo.legacy_aliases(account_id):
                    added = await self.repo.create(account_id, alias.lower(), name=display_name,
                                                   origin=IdentityOrigin.ALIAS, verified=False)
                    if added is not None:
                        ids.append(added)
                await self._record(account_id, ids, ChangeType.CREATED)

    async def _record(self, account_id: int, identity_ids: Sequence[int], change: ChangeType) -> None:
        """In the caller's transaction: the announcement leaves only with the change it describes."""
        if not identity_ids:
            return
        state = StateManager(self.change_log)
        for identity_id in identity_ids:
            state.record(Change(account_id, JmapObjectType.IDENTITY, str(identity_id), change))
        await state.write()
        await state.announce()
