"""What the pages need to know about OAuth sign-in: provider names, the callback URI, the admin section."""

from __future__ import annotations

from typing import Any

from litestar import Request

from plmail.domain.account_services import OAUTH_CONNECT, OAuthProvider
from plmail.services import services_from

PROVIDER_NAMES = {OAuthProvider.GOOGLE: "Google", OAuthProvider.MICROSOFT: "Microsoft"}


def redirect_uri(request: Request[Any, Any, Any], provider: OAuthProvider) -> str:
    """The callback the provider sends the browser back to; the admin registers it with the OAuth client."""
    return f"{str(request.base_url).rstrip('/')}/accounts/oauth/{provider.value}/callback"


async def oauth_context(request: Request[Any, Any, Any]) -> dict[str, Any]:
    """The admin page's OAuth section: each provider's client, where it comes from, the redirect URI."""
    oauth = services_from(request).providers.get(OAUTH_CONNECT)
    return {"oauth_apps": [(await oauth.client_status(provider), PROVIDER_NAMES[provider],
                            redirect_uri(request, provider)) for provider in OAuthProvider]}
