"""Provider-neutral OAuth 2 state for the Google and Microsoft fakes (RFC 6749, PKCE per RFC 7636).

`OAuthState` holds registered clients, authorization codes (with their PKCE challenge), refresh
tokens and access tokens, and decides token requests; each fake renders the outcome in its
provider's documented format (Google: `{"error", "error_description"}`; Microsoft identity
platform: the same plus `error_codes`, `timestamp`, `trace_id`, `correlation_id`, `error_uri`).

Seeding and knobs for tests:
- `issue(user)` hands out an access/refresh pair without any HTTP (what a connected account holds).
- `authorize(...)` is what the consent screen does: returns a code bound to client, redirect URI and
  PKCE challenge; the fakes' authorization endpoints call it and redirect.
- `revoke(refresh_token)` / `revoke_user(user)`: the user removed the app's access; refresh then
  fails with `invalid_grant` and the access tokens stop working.
- `expire_access_tokens(user=None)`; access tokens also expire by the clock after `token_lifetime`.
- `deny_consent = True` makes the authorization endpoint redirect with `error=access_denied`.
- `refresh_within_grant = True` (Microsoft): a refresh whose `scope` names a scope the grant does not hold
  is refused (`invalid_grant`, kind `consent_required`): "the scopes requested must be equivalent to or a
  subset of the scopes requested in the original authorization_code request".
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import secrets
import threading
from dataclasses import dataclass, field
from typing import Literal

from tests.support.fakes.clock import Clock

FailureKind = Literal[
    "invalid_request", "invalid_client", "invalid_grant", "unsupported_grant_type", "redirect_uri_mismatch",
    "code_reused", "code_expired", "pkce_mismatch", "pkce_missing", "revoked", "unknown_refresh_token",
    "consent_required",
]
# Scopes of the sign-in itself, which a refresh may always name.
_SIGN_IN_SCOPES = frozenset({"openid", "profile", "email", "offline_access"})


@dataclass
class OAuthClient:
    client_id: str
    client_secret: str | None
    redirect_uris: tuple[str, ...] = ()


@dataclass
class AuthorizationCode:
    code: str
    client_id: str
    redirect_uri: str
    user: str
    scope: str
    code_challenge: str | None
    code_challenge_method: str
    expires_at: float
    used: bool = False


@dataclass
class RefreshGrant:
    token: str
    client_id: str
    user: str
    scope: str
    revoked: bool = False


@dataclass
class AccessGrant:
    token: str
    user: str
    scope: str
    expires_at: float
    refresh_token: str | None
    revoked: bool = False


@dataclass(frozen=True)
class TokenPair:
    access_token: str
    refresh_token: str
    expires_in: int
    scope: str


@dataclass(frozen=True)
class OAuthFailure:
    """Why a token request failed: `error` is the RFC 6749 code, `kind` the precise reason."""

    error: str
    description: str
    kind: FailureKind
    status: int = 400


@dataclass(frozen=True)
class TokenRequestRecord:
    grant_type: str
    client_id: str | None
    ok: bool
    at: float


@dataclass
class OAuthState:
    clock: Clock
    token_prefix: str = "at-"
    token_lifetime: int = 3599
    code_lifetime: float = 600.0
    rotate_refresh_tokens: bool = False
    default_scope: str = ""
    deny_consent: bool = False
    refresh_within_grant: bool = False
    clients: dict[str, OAuthClient] = field(default_factory=dict)
    codes: dict[str, AuthorizationCode] = field(default_factory=dict)
    refresh_tokens: dict[str, RefreshGrant] = field(default_factory=dict)
    access_tokens: dict[str, AccessGrant] = field(default_factory=dict)
    token_requests: list[TokenRequestRecord] = field(default_factory=list)
    consenting_user: str = ""

    def __post_init__(self) -> None:
        self._lock = threading.RLock()
        self._serial = itertools.count(1)

    # --- seeding -----------------------------------------------------------------------------
    def register_client(self, client_id: str, client_secret: str | None = None,
                        redirect_uris: tuple[str, ...] = ()) -> OAuthClient:
        """A registered app; with `redirect_uris` empty any redirect URI is accepted."""
        with self._lock:
            client = OAuthClient(client_id, client_secret, redirect_uris)
            self.clients[client_id] = client
            return client

    def issue(self, user: str, *, scope: str | None = None, client_id: str | None = None) -> TokenPair:
        """Tokens as if `user` had completed the consent flow."""
        with self._lock:
            client = client_id or next(iter(self.clients), "test-client")
            refresh = self._new_refresh(client, user, self.default_scope if scope is None else scope)
            access = self._new_access(user, refresh.scope, refresh.token)
            return TokenPair(access.token, refresh.token, self.token_lifetime, refresh.scope)

    def authorize(self, client_id: str, redirect_uri: str, user: str, scope: str = "", *,
                  code_challenge: str | None = None, code_challenge_method: str = "plain") -> str:
        """What the consent screen does: a one-time code bound to client, redirect URI and challenge."""
        with self._lock:
            code = f"code-{next(self._serial)}-{secrets.token_urlsafe(8)}"
            self.codes[code] = AuthorizationCode(
                code, client_id, redirect_uri, user, scope, code_challenge, code_challenge_method,
                self.clock() + self.code_lifetime,
            )
            return code

    def revoke(self, refresh_token: str) -> None:
        with self._lock:
            grant = self.refresh_tokens[refresh_token]
            grant.revoked = True
            for access in self.access_tokens.values():
                if access.refresh_token == refresh_token:
                    access.revoked = True

    def revoke_user(self, user: str) -> None:
        with self._lock:
            for grant in self.refresh_tokens.values():
                if grant.user == user:
                    grant.revoked = True
            for access in self.access_tokens.values():
                if access.user == user:
                    access.revoked = True

    def expire_access_tokens(self, user: str | None = None) -> None:
        with self._lock:
            now = self.clock()
            for access in self.access_tokens.values():
                if user is None or access.user == user:
                    access.expires_at = min(access.expires_at, now)

    # --- checks used by the API endpoints ----------------------------------------------------
    def check_access_token(self, token: str) -> tuple[str | None, str]:
        """(user, "") for a live token, else (None, why): "missing", "unknown", "expired", "revoked"."""
        if not token:
            return None, "missing"
        with self._lock:
            grant = self.access_tokens.get(token)
            if grant is None:
                return None, "unknown"
            if grant.revoked:
                return None, "revoked"
            if grant.expires_at <= self.clock():
                return None, "expired"
            return grant.user, ""

    # --- the token endpoint ------------------------------------------------------------------
    def token_request(self, form: dict[str, str], authorization: str | None) -> TokenPair | OAuthFailure:
        """Decide one token endpoint request (client auth by body or HTTP Basic)."""
        with self._lock:
            grant_type = form.get("grant_type", "")
            client_id, client_secret = form.get("client_id"), form.get("client_secret")
            if authorization and authorization.lower().startswith("basic "):
                try:
                    decoded = base64.b64decode(authorization[6:]).decode()
                    client_id, _, client_secret = decoded.partition(":")
                except ValueError:
                    return self._record(grant_type, client_id, OAuthFailure(
                        "invalid_client", "Malformed Basic authorization.", "invalid_client", 401))
            result = self._decide(grant_type, client_id, client_secret, form)
            return self._record(grant_type, client_id, result)

    def _record(self, grant_type: str, client_id: str | None,
                result: TokenPair | OAuthFailure) -> TokenPair | OAuthFailure:
        self.token_requests.append(
            TokenRequestRecord(grant_type, client_id, isinstance(result, TokenPair), self.clock()))
        return result

    def _decide(self, grant_type: str, client_id: str | None, client_secret: str | None,
                form: dict[str, str]) -> TokenPair | OAuthFailure:
        if grant_type not in ("authorization_code", "refresh_token"):
            if not grant_type:
                return OAuthFailure("invalid_request", "Missing required parameter: grant_type", "invalid_request")
            return OAuthFailure("unsupported_grant_type", f"Invalid grant_type: {grant_type}",
                                "unsupported_grant_type")
        if not client_id:
            return OAuthFailure("invalid_request", "Missing required parameter: client_id", "invalid_request")
        client = self.clients.get(client_id)
        if client is None:
            return OAuthFailure("invalid_client", "The OAuth client was not found.", "invalid_client", 401)
        if client.client_secret is not None and client_secret != client.client_secret:
            return OAuthFailure("invalid_client", "Unauthorized", "invalid_client", 401)
        if grant_type == "authorization_code":
            return self._exchange_code(client, form)
        return self._refresh(client, form)

    def _exchange_code(self, client: OAuthClient, form: dict[str, str]) -> TokenPair | OAuthFailure:
        code = self.codes.get(form.get("code", ""))
        if code is None or code.client_id != client.client_id:
            return OAuthFailure("invalid_grant", "Malformed auth code.", "invalid_grant")
        if code.used:
            return OAuthFailure("invalid_grant", "Bad Request", "code_reused")
        if code.expires_at <= self.clock():
            return OAuthFailure("invalid_grant", "Bad Request", "code_expired")
        if form.get("redirect_uri", "") != code.redirect_uri:
            return OAuthFailure("redirect_uri_mismatch", "Bad Request", "redirect_uri_mismatch")
        if code.code_challenge is not None:
            verifier = form.get("code_verifier")
            if not verifier:
                return OAuthFailure("invalid_grant", "Missing code verifier.", "pkce_missing")
            if not pkce_matches(verifier, code.code_challenge, code.code_challenge_method):
                return OAuthFailure("invalid_grant", "Invalid code verifier.", "pkce_mismatch")
        code.used = True
        refresh = self._new_refresh(client.client_id, code.user, code.scope or self.default_scope)
        access = self._new_access(code.user, refresh.scope, refresh.token)
        return TokenPair(access.token, refresh.token, self.token_lifetime, refresh.scope)

    def _refresh(self, client: OAuthClient, form: dict[str, str]) -> TokenPair | OAuthFailure:
        token = form.get("refresh_token", "")
        if not token:
            return OAuthFailure("invalid_request", "Missing required parameter: refresh_token", "invalid_request")
        grant = self.refresh_tokens.get(token)
        if grant is None or grant.client_id != client.client_id:
            return OAuthFailure("invalid_grant", "Bad Request", "unknown_refresh_token")
        if grant.revoked:
            return OAuthFailure("invalid_grant", "Token has been expired or revoked.", "revoked")
        if self.refresh_within_grant and not scope_within(form.get("scope", ""), grant.scope):
            return OAuthFailure("invalid_grant", "The user or administrator has not consented to use the application.",
                                "consent_required")
        if self.rotate_refresh_tokens:
            grant = self._new_refresh(client.client_id, grant.user, grant.scope)
        access = self._new_access(grant.user, grant.scope, grant.token)
        return TokenPair(access.token, grant.token, self.token_lifetime, grant.scope)

    def _new_refresh(self, client_id: str, user: str, scope: str) -> RefreshGrant:
        token = f"rt-{next(self._serial)}-{secrets.token_urlsafe(12)}"
        grant = RefreshGrant(token, client_id, user, scope)
        self.refresh_tokens[token] = grant
        return grant

    def _new_access(self, user: str, scope: str, refresh_token: str | None) -> AccessGrant:
        token = f"{self.token_prefix}{next(self._serial)}-{secrets.token_urlsafe(16)}"
        grant = AccessGrant(token, user, scope, self.clock() + self.token_lifetime, refresh_token)
        self.access_tokens[token] = grant
        return grant


def scope_within(requested: str, granted: str) -> bool:
    """Whether every scope of `requested` (beyond the sign-in's own) is in `granted`; short names and full
    resource URIs count alike."""
    held = {name.rsplit("/", 1)[-1].lower() for name in granted.split()}
    return all(name.rsplit("/", 1)[-1].lower() in held for name in requested.split()
               if name.lower() not in _SIGN_IN_SCOPES)


def pkce_challenge(verifier: str, method: str = "S256") -> str:
    """The `code_challenge` a client sends for `verifier` (RFC 7636 §4.2)."""
    if method == "plain":
        return verifier
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def pkce_matches(verifier: str, challenge: str, method: str) -> bool:
    return secrets.compare_digest(pkce_challenge(verifier, method), challenge)
