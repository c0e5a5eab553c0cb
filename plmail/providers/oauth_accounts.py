"""Connecting Gmail and Microsoft 365 accounts by OAuth: the pieces of providers/oauth.py wired for one
process, and what a finished consent does to the user's accounts.

A consent for a mailbox the user has not connected creates the account; one for a mailbox already there
(typically waiting in "reconnect") gives it the new tokens and lets it sync again. Reconnecting is guarded
by identity: a consent for another mailbox than the account's is refused instead of silently swapping the
mailbox under the account's stored mail.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from plmail.config import Settings
from plmail.db.database import Database
from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.db.repos.settings import SettingsRepository
from plmail.domain.account_services import OAUTH_CONNECT, OAuthProvider, OAuthStarted
from plmail.domain.enums import AccountStatus, ProviderKind
from plmail.domain.errors import NotFoundError, OAuthError, OAuthIdentityMismatch
from plmail.keys import CredentialBox
from plmail.providers.oauth import (
    ConnectedIdentity,
    OAuthEndpointsConfig,
    OAuthFlow,
    OAuthHttp,
    OAuthTokens,
    kind_for,
    pending_from_session,
    provider_for,
)
from plmail.providers.oauth_apps import OAuthAppStatus, OAuthAppStore
from plmail.providers.plugins import PluginHost
from plmail.providers.repos.oauth_accounts import OAuthAccountRepository


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

    # what the account pages use (domain/account_services.py OAuthConnect)
    def provider_of(self, kind: ProviderKind) -> OAuthProvider | None:
        return provider_for(kind)

    async def start(self, provider: OAuthProvider, redirect_uri: str, *, login_hint: str | None,
                    account_id: int | None) -> OAuthStarted:
        started = await self.flow.start(provider, redirect_uri, login_hint=login_hint, account_id=account_id)
        return OAuthStarted(started.url, started.pending.as_json())

    async def finish(self, user_id: int, provider: OAuthProvider, pending: Any, params: Mapping[str, str]) -> int:
        kept = pending_from_session(pending)
        if kept is not None and kept.provider is not provider:
            kept = None  # a sign-in started for the other provider is no sign-in of this one
        identity = await self.flow.finish(kept, params)
        outcome = await self.connect.connect(user_id, identity, account_id=kept.account_id if kept else None)
        return outcome.account_id

    async def needs_consent_to_send(self, user_id: int, account_id: int) -> bool:
        return await self.connect.needs_consent_to_send(user_id, account_id)

    async def save_client(self, provider: OAuthProvider, *, client_id: str, client_secret: str | None) -> None:
        await self.apps.save(provider, client_id=client_id, client_secret=client_secret)

    async def client_status(self, provider: OAuthProvider) -> OAuthAppStatus:
        return await self.apps.status(provider)

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
        host.offer(oauth, as_=OAUTH_CONNECT)
        return oauth

    return host.shared(OAuthServices, build)
