"""Connecting Gmail and Microsoft 365 accounts by OAuth, and the admin's OAuth client settings.

"Connect Gmail" posts here, plmail keeps the sign-in's state and PKCE verifier in the browser's session (an
encrypted cookie the browser cannot read) and sends the browser to the provider's consent page; the provider
sends it back to the callback, which checks the state, exchanges the code and creates the account — or gives
an account waiting in "reconnect" its new tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from litestar import Controller, Request, get, post
from litestar.params import FromPath
from litestar.response import Redirect, Template

from plmail.domain.account_services import OAUTH_CONNECT, OAuthProvider
from plmail.domain.errors import (
    NotFoundError,
    OAuthDenied,
    OAuthError,
    OAuthIdentityMismatch,
    OAuthNotConfiguredError,
    OAuthStateError,
    ValidationError,
)
from plmail.services import services_from
from plmail.web.auth import admin_only
from plmail.web.controllers.admin_page import admin_page
from plmail.web.controllers.forms import parse_form
from plmail.web.oauth_context import PROVIDER_NAMES, redirect_uri
from plmail.web.pages import render, signed_in_user

SESSION_KEY = "oauth_pending"


def _provider(value: str) -> OAuthProvider:
    try:
        return OAuthProvider(value)
    except ValueError:
        raise NotFoundError("No such sign-in provider.") from None


@dataclass(frozen=True)
class StartForm:
    account_id: int | None = None


@dataclass(frozen=True)
class ClientForm:
    client_id: str = ""
    client_secret: str = ""


def _problem(exc: OAuthError, provider: OAuthProvider) -> tuple[str, dict[str, str]]:
    """A translatable text and its values for what went wrong."""
    name = PROVIDER_NAMES[provider]
    if isinstance(exc, OAuthDenied):
        return "Access was not granted at {provider}, so no account was connected.", {"provider": name}
    if isinstance(exc, OAuthStateError):
        return ("This sign-in did not start here, has expired or was already used. Please start again.", {})
    if isinstance(exc, OAuthNotConfiguredError):
        return ("{provider} sign-in is not set up yet: an administrator must enter the OAuth client id and secret "
                "on the administration page.", {"provider": name})
    if isinstance(exc, OAuthIdentityMismatch):
        return ("You signed in as {signed_in}, but this account is {expected}. Sign in as {expected} to reconnect "
                "it, or add {signed_in} as a new account.", {"signed_in": exc.signed_in, "expected": exc.expected})
    return "{provider} reported a problem: {detail}", {"provider": name, "detail": str(exc)}


class OAuthController(Controller):
    path = "/accounts/oauth"

    async def _error(self, request: Request[Any, Any, Any], provider: OAuthProvider, exc: OAuthError) -> Template:
        text, values = _problem(exc, provider)
        return await render(request, "accounts/oauth_error.html", status_code=400, provider=provider.value,
                            provider_name=PROVIDER_NAMES[provider], problem=text, problem_values=values)

    @post("/{provider:str}/start")
    async def start(self, request: Request[Any, Any, Any], provider: FromPath[str]) -> Template | Redirect:
        user = signed_in_user(request)
        chosen = _provider(provider)
        form = parse_form(await request.form(), StartForm)
        services = services_from(request)
        oauth = services.providers.get(OAUTH_CONNECT)
        login_hint: str | None = None
        if form.account_id is not None:
            record = await services.accounts.settings_of(user.id, form.account_id)
            if record is None or oauth.provider_of(record.provider_kind) is not chosen:
                raise NotFoundError("No such account.")
            login_hint = record.email
        try:
            started = await oauth.start(chosen, redirect_uri(request, chosen), login_hint=login_hint,
                                        account_id=form.account_id)
        except OAuthError as exc:
            return await self._error(request, chosen, exc)
        request.set_session({**dict(request.session or {}), SESSION_KEY: started.pending})
        return Redirect(started.url)

    @get("/{provider:str}/callback")
    async def callback(self, request: Request[Any, Any, Any], provider: FromPath[str]) -> Template | Redirect:
        user = signed_in_user(request)
        chosen = _provider(provider)
        session = dict(request.session or {})
        pending = session.pop(SESSION_KEY, None)
        request.set_session(session)  # one use only, whatever happens next
        params = {key: str(value) for key, value in request.query_params.items()}
        try:
            account_id = await services_from(request).providers.get(OAUTH_CONNECT).finish(
                user.id, chosen, pending, params)
        except OAuthError as exc:
            return await self._error(request, chosen, exc)
        return Redirect(f"/accounts/{account_id}")


class OAuthAdminController(Controller):
    path = "/admin/oauth"
    guards = [admin_only]  # noqa: RUF012  (Litestar reads this as a plain class attribute)

    @post("/{provider:str}")
    async def save(self, request: Request[Any, Any, Any], provider: FromPath[str]) -> Template:
        chosen = _provider(provider)
        form = parse_form(await request.form(), ClientForm)
        try:
            await services_from(request).providers.get(OAUTH_CONNECT).save_client(
                chosen, client_id=form.client_id, client_secret=form.client_secret or None)
        except ValidationError as exc:
            return await admin_page(request, status_code=400, oauth_error=str(exc), oauth_provider=chosen.value)
        return await admin_page(request, oauth_notice="Saved.", oauth_provider=chosen.value)

