"""Connecting Gmail and Microsoft 365 accounts by OAuth: the pieces of providers/oauth.py wired for one
process, and what a finished consent does to the user's accounts.

A consent for a mailbox the user has not connected creates the account; one for a mailbox already there
(typically waiting in "reconnect") gives it the new tokens and lets it sync again. Reconnecting is guarded
by identity: a consent for another mailbox than the account's is refused instead of silently swapping the
mailbox under the account's stored mail.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from plmail.config import Settings
from plmail.db.database import Database
from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.db.repos.settings import SettingsRepository
from plmail.domain.enums import AccountStatus
from plmail.domain.errors import NotFoundError
from plmail.keys import CredentialBox
from plmail.providers.oauth import (
    ConnectedIdentity,
    OAuthEndpointsConfig,
    OAuthError,
    OAuthFlow,
    OAuthHttp,
    OAuthProvider,
    OAuthTokens,
    kind_for,
    provider_for,
)
from plmail.providers.oauth_apps import OAuthAppStore
from plmail.providers.plugins import PluginHost
from plmail.providers.repos.oauth_accounts import OAuthAccountRepository


class OAuthIdentityMismatch(OAuthError):
    """A reconnect signed in as another mailbox than the account's."""

    def __init__(self, signed_in: str, expected: str) -> None:
        super().__init__(f"You signed in as {signed_in}, but this account is {expected}. Sign in as {expected} to "
                         f"reconnect it, or add {signed_in} as a new account.")
        self.signed_in = signed_in
        self.expected = expected


@dataclass(frozen=True, slots=True)
class ConnectOutcome:
    account_id: int
    created: bool


class OAuthAccountService:
    def __init__(self, accounts: AccountAdminRepository, tokens: OAuthTokens,
                 resume: Callable[[int], Awaitable[None]] | None = None) -> None:
        self.accounts = accounts
        self.repo = OAuthAccountRepository(accounts.db)
        self.tokens = tokens
        self.resume = resume

    async def connect(self, user_id: int, identity: ConnectedIdentity, *,
                      account_id: int | None = None) -> ConnectOutcome:
        """Store the consent's tokens: on `account_id` (a reconnect), on the user's account for that mailbox, or
        on a new account. Then the account is synced (and its waiting changes handed over)."""
        kind = kind_for(identity.provider)
        sealed = self.tokens.seal(identity.tokens)
        if account_id is not None:
            record = await self.accounts.owned(user_id, account_id)
            if record is None:
                raise NotFoundError("No such account.")
            if record.provider_kind is not kind or record.email.lower() != identity.email.lower():
                raise OAuthIdentityMismatch(identity.email, record.email)
            target: int | None = account_id
        else:
            target = await self.repo.find(user_id, kind, identity.email)
        if target is not None:
            await self.repo.reconnect(user_id, target, sealed)
            outcome = ConnectOutcome(target, created=False)
        else:
            new_id = await self.accounts.create(
                user_id=user_id, provider_kind=kind, name=identity.name or identity.email, email=identity.email,
                username=identity.email, credentials=sealed,
                settings={"oauth": {"provider": identity.provider.value, "subject": identity.subject}},
            )
            outcome = ConnectOutcome(new_id, created=True)
        if self.resume is not None:
            await self.resume(outcome.account_id)
        return outcome

    async def needs_reconnect(self, user_id: int, account_id: int) -> bool:
        record = await self.accounts.owned(user_id, account_id)
        return record is not None and record.status is AccountStatus.RECONNECT

    async def needs_consent_to_send(self, user_id: int, account_id: int) -> bool:
        """An OAuth account connected before plmail asked for the permission to send (Microsoft's Mail.Send):
        it syncs, but sends only after the user connects it again."""
        record = await self.accounts.owned(user_id, account_id)
        if record is None or provider_for(record.provider_kind) is None or record.credentials is None:
            return False
        try:
            return not await self.tokens.may_send(record)
        except OAuthError:
            return False  # the sign-in itself is gone: the page asks to reconnect for that already


@dataclass(slots=True)
class OAuthServices:
    apps: OAuthAppStore
    http: OAuthHttp
    flow: OAuthFlow
    tokens: OAuthTokens
    connect: OAuthAccountService

    async def close(self) -> None:
        await self.http.close()

    @classmethod
    def build(cls, db: Database, box: CredentialBox, settings: Settings | None,
              resume: Callable[[int], Awaitable[None]] | None = None) -> OAuthServices:
        environment = {}
        if settings is not None:
            environment = {
                OAuthProvider.GOOGLE: (settings.google_client_id, settings.google_client_secret),
                OAuthProvider.MICROSOFT: (settings.microsoft_client_id, settings.microsoft_client_secret),
            }
        config = OAuthEndpointsConfig.from_base_urls(settings.google_base_url if settings else None,
                                                     settings.microsoft_base_url if settings else None)
        apps = OAuthAppStore(SettingsRepository(db), box, environment)
        http = OAuthHttp(config, apps)
        accounts = AccountAdminRepository(db)
        tokens = OAuthTokens(accounts, box, http)
        return cls(apps=apps, http=http, flow=OAuthFlow(http), tokens=tokens,
                   connect=OAuthAccountService(accounts, tokens, resume))


def shared_oauth(host: PluginHost) -> OAuthServices:
    """The OAuth machinery Gmail and Graph share: built by whichever plugin asks first, closed once."""

    def build() -> OAuthServices:
        oauth = OAuthServices.build(host.db, host.keys.credentials, host.settings, resume=host.sync.resume)
        host.providers.closers.append(oauth.close)
        host.offer(oauth)
        return oauth

    return host.shared(OAuthServices, build)
