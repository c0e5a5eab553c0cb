"""OAuth 2 for Google and Microsoft: the app's client credentials, the consent flow, and access tokens
kept sealed on the account and refreshed before they expire.

The API the Gmail and Graph providers (and the web connect flow) use:

- `OAuthProvider.GOOGLE` / `.MICROSOFT` (in domain/account_services.py, the errors in domain/errors.py, as the
  connect pages name them); `provider_for(ProviderKind.GMAIL | GRAPH)` and `kind_for(provider)`.
- `ProviderEndpoints` (`endpoints(provider, base_url=None)`): authorize, token, revoke and identity URLs, the
  API base (`https://gmail.googleapis.com/gmail/v1`, `https://graph.microsoft.com/v1.0`) and scopes. A
  `base_url` (env `PLMAIL_GOOGLE_BASE_URL` / `PLMAIL_MICROSOFT_BASE_URL`) puts every URL of that provider on
  one host with the real paths: that is how tests point plmail at the fakes.
- `OAuthAppStore` (oauth_apps.py): client id and secret per provider, entered on the admin page (app_setting
  `oauth`, the secret sealed) or else from the environment (`PLMAIL_GOOGLE_CLIENT_ID` / `_SECRET`,
  `PLMAIL_MICROSOFT_CLIENT_ID` / `_SECRET`).
- `OAuthFlow.start(provider, redirect_uri)` -> `AuthorizationStart` (the consent URL plus a
  `PendingAuthorization` to keep in the session: state and PKCE S256 verifier);
  `OAuthFlow.finish(pending, query_params)` -> `ConnectedIdentity` (email, name, `TokenSet`). It raises
  `OAuthDenied` (the user said no), `OAuthStateError` (a forged, stale or replayed callback) or `OAuthError`.
- `OAuthTokens.access_token(account) -> str`: a live access token, refreshed when it expires within five
  minutes; `OAuthTokens.refresh(account, rejected=token) -> str` after the API answered 401. Rotated refresh
  tokens are saved. A revoked or expired grant (`invalid_grant`) marks the account `AccountStatus.RECONNECT`
  with a clear detail and raises `OAuthGrantError`, whose `retryable` is False: the sync and import jobs stop
  (see `retryable()` in providers/base.py) until the user connects the account again. A network failure or a
  5xx raises `OAuthUnavailableError` (retryable). `OAuthTokens.seal(tokens)` is what `account.credentials` holds.

Accounts are created (or, in "reconnect" state, given their new tokens) by `plmail.providers.oauth_accounts`.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import logging
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import httpx

from plmail.db.repos.account_admin import AccountAdminRepository, AccountRecord
from plmail.domain.account_services import OAuthProvider
from plmail.domain.enums import AccountStatus, ProviderKind
from plmail.domain.errors import (
    CredentialError,
    OAuthDenied,
    OAuthError,
    OAuthGrantError,
    OAuthStateError,
    OAuthUnavailableError,
)
from plmail.domain.models import Account
from plmail.keys import CredentialBox
from plmail.providers.repos.oauth_accounts import OAuthAccountRepository
from plmail.tls import verifying_context

if TYPE_CHECKING:
    from plmail.providers.oauth_apps import OAuthAppStore

log = logging.getLogger(__name__)

SETTINGS_KEY = "oauth"
OAUTH_LOCK = 0x706C7310  # session advisory lock namespace: one refresh per account at a time
REFRESH_MARGIN = timedelta(minutes=5)  # refresh this long before the provider's expiry
PENDING_LIFETIME = timedelta(minutes=15)  # how long a consent screen may stay open
_LOCK_WAIT_SECONDS = 30.0
_HTTP_TIMEOUT = httpx.Timeout(30.0, connect=10.0)

Clock = Callable[[], datetime]


def _utcnow() -> datetime:
    return datetime.now(UTC)


_PROVIDER_OF_KIND = {ProviderKind.GMAIL: OAuthProvider.GOOGLE, ProviderKind.GRAPH: OAuthProvider.MICROSOFT}


def provider_for(kind: ProviderKind) -> OAuthProvider | None:
    return _PROVIDER_OF_KIND.get(kind)


def kind_for(provider: OAuthProvider) -> ProviderKind:
    return ProviderKind.GMAIL if provider is OAuthProvider.GOOGLE else ProviderKind.GRAPH


# --- endpoints ---------------------------------------------------------------------------------------------
# The full mail scope (as the predecessor asked for): it covers drafts and send as gmail.modify does, and
# deleting for good (users.messages.delete), which gmail.modify cannot.
GOOGLE_FULL_MAIL_SCOPE = "https://mail.google.com/"
GOOGLE_SCOPES = ("openid", "email", GOOGLE_FULL_MAIL_SCOPE)
MAIL_SEND_SCOPE = "https://graph.microsoft.com/Mail.Send"
MICROSOFT_SCOPES = (
    "offline_access", "openid", "email", "profile",
    "https://graph.microsoft.com/User.Read", "https://graph.microsoft.com/Mail.ReadWrite", MAIL_SEND_SCOPE,
)


def grants(scope: str, wanted: str) -> bool:
    """Whether a token's granted `scope` names `wanted` (Microsoft answers with full URIs or short names)."""
    short = wanted.rsplit("/", 1)[-1].lower()
    return any(name.rsplit("/", 1)[-1].lower() == short for name in scope.split())


@dataclass(frozen=True, slots=True)
class ProviderEndpoints:
    provider: OAuthProvider
    authorize_url: str
    token_url: str
    revoke_url: str | None
    identity_url: str  # Google: OpenID userinfo; Microsoft: Graph /me
    api_base: str
    scopes: tuple[str, ...]
    authorize_params: tuple[tuple[str, str], ...] = ()
    scope_on_refresh: bool = False  # Microsoft's v2 endpoint wants the scopes again on a refresh
    # Scopes added after accounts were first connected. A refresh may ask only for what was granted (Microsoft
    # refuses more with invalid_grant), so it asks for these only when the account's grant holds them.
    later_scopes: tuple[str, ...] = ()
    send_scope: str | None = None  # the permission sending needs, where the mail scope does not cover it

    @property
    def scope(self) -> str:
        return " ".join(self.scopes)

    def refresh_scope(self, granted: str) -> str:
        return " ".join(s for s in self.scopes if s not in self.later_scopes or grants(granted, s))

    def may_send(self, granted: str) -> bool:
        """Whether a grant covers sending; one from before plmail asked for it needs a new consent."""
        return self.send_scope is None or grants(granted, self.send_scope)


def endpoints(provider: OAuthProvider, base_url: str | None = None, *, tenant: str = "common") -> ProviderEndpoints:
    """The provider's real URLs, or with `base_url` every URL on that one host (the fakes serve the real paths)."""
    base = base_url.rstrip("/") if base_url else None
    if provider is OAuthProvider.GOOGLE:
        return ProviderEndpoints(
            provider=provider,
            authorize_url=f"{base or 'https://accounts.google.com'}/o/oauth2/v2/auth",
            token_url=f"{base or 'https://oauth2.googleapis.com'}/token",
            revoke_url=f"{base or 'https://oauth2.googleapis.com'}/revoke",
            identity_url=f"{base}/oauth2/v3/userinfo" if base else "https://openidconnect.googleapis.com/v1/userinfo",
            api_base=f"{base or 'https://gmail.googleapis.com'}/gmail/v1",
            scopes=GOOGLE_SCOPES,
            # offline + consent: Google hands out a refresh token only then
            authorize_params=(("access_type", "offline"), ("prompt", "consent"), ("include_granted_scopes", "true")),
        )
    login = base or "https://login.microsoftonline.com"
    graph = base or "https://graph.microsoft.com"
    return ProviderEndpoints(
        provider=provider,
        authorize_url=f"{login}/{tenant}/oauth2/v2.0/authorize",
        token_url=f"{login}/{tenant}/oauth2/v2.0/token",
        revoke_url=None,
        identity_url=f"{graph}/v1.0/me",
        api_base=f"{graph}/v1.0",
        scopes=MICROSOFT_SCOPES,
        authorize_params=(("response_mode", "query"), ("prompt", "select_account")),
        scope_on_refresh=True,
        later_scopes=(MAIL_SEND_SCOPE,),
        send_scope=MAIL_SEND_SCOPE,
    )


# --- tokens ------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class TokenSet:
    access_token: str
    refresh_token: str | None
    expires_at: datetime
    scope: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"access_token": self.access_token, "refresh_token": self.refresh_token,
                "expires_at": self.expires_at.isoformat(), "scope": self.scope}

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> TokenSet:
        try:
            expires = datetime.fromisoformat(str(value["expires_at"]))
            return cls(str(value["access_token"]), str(value["refresh_token"]) if value.get("refresh_token") else None,
                       expires if expires.tzinfo else expires.replace(tzinfo=UTC), str(value.get("scope") or ""))
        except (KeyError, ValueError) as exc:
            raise CredentialError(f"The stored sign-in of this account is incomplete: {exc}") from None

    def expiring(self, now: datetime, margin: timedelta = REFRESH_MARGIN) -> bool:
        return self.expires_at - margin <= now


@dataclass(frozen=True, slots=True)
class PendingAuthorization:
    """What the browser's session keeps between the consent redirect and the callback."""

    provider: OAuthProvider
    state: str
    verifier: str
    redirect_uri: str
    created_at: datetime
    account_id: int | None = None  # set when reconnecting an existing account

    def as_json(self) -> dict[str, Any]:
        return {"provider": self.provider.value, "state": self.state, "verifier": self.verifier,
                "redirect_uri": self.redirect_uri, "created_at": self.created_at.isoformat(),
                "account_id": self.account_id}

    @classmethod
    def from_json(cls, value: Any) -> PendingAuthorization | None:
        if not isinstance(value, dict):
            return None
        try:
            account = value.get("account_id")
            return cls(OAuthProvider(value["provider"]), str(value["state"]), str(value["verifier"]),
                       str(value["redirect_uri"]), datetime.fromisoformat(str(value["created_at"])),
                       int(account) if account is not None else None)
        except (KeyError, ValueError, TypeError):
            return None


@dataclass(frozen=True, slots=True)
class AuthorizationStart:
    url: str
    pending: PendingAuthorization


@dataclass(frozen=True, slots=True)
class ConnectedIdentity:
    provider: OAuthProvider
    email: str
    name: str
    tokens: TokenSet
    subject: str = ""


def pkce_pair() -> tuple[str, str]:
    """(verifier, S256 challenge) per RFC 7636."""
    verifier = secrets.token_urlsafe(64)[:96]
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=")
    return verifier, challenge.decode("ascii")


@dataclass(slots=True)
class OAuthEndpointsConfig:
    """The endpoints of both providers for this installation."""

    google: ProviderEndpoints = field(default_factory=lambda: endpoints(OAuthProvider.GOOGLE))
    microsoft: ProviderEndpoints = field(default_factory=lambda: endpoints(OAuthProvider.MICROSOFT))

    def __getitem__(self, provider: OAuthProvider) -> ProviderEndpoints:
        return self.google if provider is OAuthProvider.GOOGLE else self.microsoft

    @classmethod
    def from_base_urls(cls, google: str | None, microsoft: str | None) -> OAuthEndpointsConfig:
        return cls(endpoints(OAuthProvider.GOOGLE, google), endpoints(OAuthProvider.MICROSOFT, microsoft))


class OAuthHttp:
    """The token endpoint and the identity lookup, over one httpx client."""

    def __init__(self, config: OAuthEndpointsConfig, apps: OAuthAppStore, *, http: httpx.AsyncClient | None = None,
                 clock: Clock = _utcnow) -> None:
        self.config = config
        self.apps = apps
        self.http = http or httpx.AsyncClient(timeout=_HTTP_TIMEOUT, verify=verifying_context())
        self.clock = clock

    async def close(self) -> None:
        await self.http.aclose()

    async def _token_request(self, provider: OAuthProvider, form: dict[str, str], *,
                             now: datetime | None = None) -> TokenSet:
        ends = self.config[provider]
        client = await self.apps.require(provider)
        body = {**form, "client_id": client.client_id}
        if client.client_secret:
            body["client_secret"] = client.client_secret
        sent_at = now or self.clock()  # the lifetime counts from the request, on the caller's clock
        try:
            response = await self.http.post(ends.token_url, data=body, headers={"Accept": "application/json"})
        except httpx.HTTPError as exc:
            raise OAuthUnavailableError(f"{provider.label} sign-in could not be reached: {exc}") from exc
        try:
            data = response.json()
        except ValueError:
            data = {}
        if not isinstance(data, dict):
            data = {}
        if response.status_code >= 500 or response.status_code == 429:
            raise OAuthUnavailableError(
                f"{provider.label} sign-in answered {response.status_code}; trying again later.")
        if response.status_code != 200 or "access_token" not in data:
            error = str(data.get("error") or f"HTTP {response.status_code}")
            detail = str(data.get("error_description") or "").split(" Trace ID:")[0].strip()
            text = f"{error}: {detail}" if detail else error
            if error == "invalid_grant":
                raise OAuthGrantError(text)
            if error in ("invalid_client", "unauthorized_client"):
                raise OAuthError(f"{provider.label} rejected plmail's OAuth client ({text}); an administrator must "
                                 f"check the client id and secret on the admin page.")
            raise OAuthError(f"{provider.label} refused the token request ({text}).")
        lifetime = int(data.get("expires_in") or 3600)
        return TokenSet(
            access_token=str(data["access_token"]),
            refresh_token=str(data["refresh_token"]) if data.get("refresh_token") else form.get("refresh_token"),
            expires_at=sent_at + timedelta(seconds=lifetime),
            scope=str(data.get("scope") or ""),
        )

    async def exchange_code(self, pending: PendingAuthorization, code: str) -> TokenSet:
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": pending.redirect_uri,
                "code_verifier": pending.verifier}
        ends = self.config[pending.provider]
        if ends.scope_on_refresh:
            form["scope"] = ends.scope
        return await self._token_request(pending.provider, form)

    async def refresh(self, provider: OAuthProvider, refresh_token: str, *, now: datetime | None = None,
                      granted: str = "") -> TokenSet:
        """New tokens for the grant whose scopes are `granted` (what the last token response named)."""
        form = {"grant_type": "refresh_token", "refresh_token": refresh_token}
        ends = self.config[provider]
        if ends.scope_on_refresh:
            form["scope"] = ends.refresh_scope(granted)
        renewed = await self._token_request(provider, form, now=now)
        return renewed if renewed.scope or not granted else dataclasses.replace(renewed, scope=granted)

    async def identity(self, provider: OAuthProvider, access_token: str) -> tuple[str, str, str]:
        """(email, display name, subject) of the signed-in user."""
        ends = self.config[provider]
        try:
            response = await self.http.get(ends.identity_url, headers={"Authorization": f"Bearer {access_token}"})
        except httpx.HTTPError as exc:
            raise OAuthUnavailableError(f"{provider.label} could not be reached: {exc}") from exc
        if response.status_code != 200:
            raise OAuthError(f"{provider.label} did not say which mailbox was connected (HTTP {response.status_code}).")
        data = response.json()
        if provider is OAuthProvider.GOOGLE:
            email, name, subject = data.get("email"), data.get("name") or "", data.get("sub") or ""
        else:
            email = data.get("mail") or data.get("userPrincipalName")
            name, subject = data.get("displayName") or "", data.get("id") or ""
        if not email or "@" not in str(email):
            raise OAuthError(f"{provider.label} did not tell plmail the mailbox's address.")
        return str(email).strip().lower(), str(name), str(subject)


class OAuthFlow:
    """The authorization-code flow with PKCE (S256) and a state bound to the browser's session."""

    def __init__(self, http: OAuthHttp, *, clock: Clock = _utcnow) -> None:
        self.http = http
        self.clock = clock

    async def start(self, provider: OAuthProvider, redirect_uri: str, *, login_hint: str | None = None,
                    account_id: int | None = None) -> AuthorizationStart:
        client = await self.http.apps.require(provider)
        ends = self.http.config[provider]
        verifier, challenge = pkce_pair()
        state = secrets.token_urlsafe(32)
        params = {"client_id": client.client_id, "response_type": "code", "redirect_uri": redirect_uri,
                  "scope": ends.scope, "state": state, "code_challenge": challenge,
                  "code_challenge_method": "S256", **dict(ends.authorize_params)}
        if login_hint:
            params["login_hint"] = login_hint
        pending = PendingAuthorization(provider, state, verifier, redirect_uri, self.clock(), account_id)
        return AuthorizationStart(f"{ends.authorize_url}?{urlencode(params)}", pending)

    async def finish(self, pending: PendingAuthorization | None, params: Mapping[str, str]) -> ConnectedIdentity:
        """Check the callback against the session's pending sign-in, exchange the code, ask who signed in."""
        state = params.get("state") or ""
        if pending is None or not state or not secrets.compare_digest(state, pending.state):
            raise OAuthStateError("This sign-in did not start here, or it was already used. Please start again.")
        if self.clock() - pending.created_at > PENDING_LIFETIME:
            raise OAuthStateError("The sign-in took too long. Please start again.")
        error = params.get("error")
        if error:
            if error in ("access_denied", "consent_required", "interaction_required"):
                raise OAuthDenied(f"Access was not granted at {pending.provider.label}, so no account was connected.")
            detail = params.get("error_description") or error
            raise OAuthError(f"{pending.provider.label} reported a problem: {detail}")
        code = params.get("code")
        if not code:
            raise OAuthStateError("The provider sent no authorization code. Please start again.")
        tokens = await self.http.exchange_code(pending, code)
        if not tokens.refresh_token:
            raise OAuthError(f"{pending.provider.label} granted no lasting access (no refresh token). "
                             f"Remove plmail's access in your account's security settings and connect again.")
        email, name, subject = await self.http.identity(pending.provider, tokens.access_token)
        return ConnectedIdentity(pending.provider, email, name, tokens, subject)


class OAuthTokens:
    """Access tokens for OAuth accounts: read from the sealed credentials, refreshed before expiry, one refresh
    per account at a time across all workers."""

    def __init__(self, accounts: AccountAdminRepository, box: CredentialBox, http: OAuthHttp, *,
                 clock: Clock = _utcnow, margin: timedelta = REFRESH_MARGIN) -> None:
        self.accounts = accounts
        self.store = OAuthAccountRepository(accounts.db)
        self.box = box
        self.http = http
        self.clock = clock
        self.margin = margin

    def seal(self, tokens: TokenSet) -> bytes:
        return self.box.seal({"oauth": tokens.as_json()})

    def tokens_of(self, record: AccountRecord) -> TokenSet:
        if record.credentials is None:
            raise CredentialError("No sign-in is stored for this account.")
        value = self.box.open(record.credentials).get("oauth")
        if not isinstance(value, dict):
            raise CredentialError("The stored sign-in of this account is not an OAuth sign-in.")
        return TokenSet.from_json(value)

    async def access_token(self, account: Account | AccountRecord) -> str:
        record = await self._record(account.id)
        tokens = await self._open(record)
        if not tokens.expiring(self.clock(), self.margin):
            return tokens.access_token
        return await self._refresh(record, rejected=None)

    async def refresh(self, account: Account | AccountRecord, *, rejected: str | None = None) -> str:
        """A new access token after the API refused `rejected` (401). When another worker already replaced
        that token, its replacement is returned without asking the provider again."""
        return await self._refresh(await self._record(account.id), rejected=rejected, force=True)

    async def may_send(self, account: Account | AccountRecord) -> bool:
        """Whether the account's grant lets plmail send (False: it was granted before sending asked for it)."""
        record = await self._record(account.id)
        provider = provider_for(record.provider_kind)
        assert provider is not None
        return self.http.config[provider].may_send((await self._open(record)).scope)

    async def _record(self, account_id: int) -> AccountRecord:
        record = await self.accounts.for_job(account_id)
        if record is None:
            raise OAuthError(f"Account {account_id} no longer exists.")
        provider = provider_for(record.provider_kind)
        if provider is None:
            raise OAuthError(f"Account {account_id} does not sign in with OAuth.")
        return record

    async def _open(self, record: AccountRecord) -> TokenSet:
        try:
            return self.tokens_of(record)
        except CredentialError as exc:
            await self.accounts.set_status(record.id, AccountStatus.RECONNECT, str(exc))
            raise OAuthGrantError(str(exc)) from exc

    async def _refresh(self, record: AccountRecord, *, rejected: str | None, force: bool = False) -> str:
        provider = provider_for(record.provider_kind)
        assert provider is not None
        async with self.accounts.session_lock(OAUTH_LOCK, record.id, wait=_LOCK_WAIT_SECONDS) as lock:
            if not lock.taken:
                raise OAuthUnavailableError("Another worker is renewing this account's sign-in; trying again later.")
            fresh = await self._record(record.id)  # another worker may have refreshed while we waited
            tokens = await self._open(fresh)
            if not tokens.expiring(self.clock(), self.margin) and (
                    not force or (rejected is not None and tokens.access_token != rejected)):
                return tokens.access_token
            if not tokens.refresh_token:
                return await self._lost(fresh, provider, "no refresh token is stored")
            try:
                renewed = await self.http.refresh(provider, tokens.refresh_token, now=self.clock(),
                                                  granted=tokens.scope)
            except OAuthGrantError as exc:
                return await self._lost(fresh, provider, str(exc))
            except OAuthUnavailableError as exc:
                await self.accounts.note_problem(record.id, str(exc))
                raise
            await self.store.replace_credentials(record.id, self.seal(renewed))
            return renewed.access_token

    async def _lost(self, record: AccountRecord, provider: OAuthProvider, reason: str) -> str:
        detail = (f"{provider.label} no longer accepts plmail's access to {record.email} ({reason}). "
                  f"Connect the account again to resume syncing.")
        await self.accounts.set_status(record.id, AccountStatus.RECONNECT, detail)
        log.warning("account %s needs to be reconnected: %s", record.id, reason)
        raise OAuthGrantError(detail)


def pending_from_session(value: Any) -> PendingAuthorization | None:
    return PendingAuthorization.from_json(json.loads(value) if isinstance(value, str) else value)
