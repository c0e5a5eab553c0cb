"""The OAuth apps an administrator registered with Google and Microsoft: client id and secret per provider,
from the admin page (app_setting `oauth`, the secret sealed) or else the environment."""

from __future__ import annotations

import base64
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from plmail.db.repos.settings import SettingsRepository
from plmail.domain.account_services import OAuthProvider
from plmail.domain.errors import CredentialError, OAuthNotConfiguredError, ValidationError
from plmail.keys import CredentialBox
from plmail.providers.oauth import SETTINGS_KEY

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class OAuthClient:
    client_id: str
    client_secret: str | None
    source: str  # "admin" or "environment"


@dataclass(frozen=True, slots=True)
class OAuthAppStatus:
    """What the admin page shows: never the secret itself."""

    provider: OAuthProvider
    configured: bool
    source: str | None
    client_id: str
    has_secret: bool
    admin_client_id: str  # what the admin page holds (empty when the environment supplies it)


class OAuthAppStore:
    """Client id and secret per provider: the admin page's (app_setting `oauth`, secret sealed) win over the
    environment's."""

    def __init__(self, repo: SettingsRepository, box: CredentialBox,
                 environment: Mapping[OAuthProvider, tuple[str | None, str | None]] | None = None) -> None:
        self.repo = repo
        self.box = box
        self.environment = dict(environment or {})

    async def _stored(self, provider: OAuthProvider) -> dict[str, Any]:
        value = (await self.repo.get(SETTINGS_KEY)).get(provider.value)
        return value if isinstance(value, dict) else {}

    def _open_secret(self, sealed: Any) -> str | None:
        if not sealed:
            return None
        try:
            return str(self.box.open(base64.b64decode(str(sealed))).get("secret") or "") or None
        except (CredentialError, ValueError):
            log.warning("the stored OAuth client secret cannot be read; enter it again on the admin page")
            return None

    async def client(self, provider: OAuthProvider) -> OAuthClient | None:
        stored = await self._stored(provider)
        if stored.get("client_id"):
            return OAuthClient(str(stored["client_id"]), self._open_secret(stored.get("client_secret")), "admin")
        env_id, env_secret = self.environment.get(provider, (None, None))
        if env_id:
            return OAuthClient(env_id, env_secret or None, "environment")
        return None

    async def require(self, provider: OAuthProvider) -> OAuthClient:
        found = await self.client(provider)
        if found is None:
            raise OAuthNotConfiguredError(
                f"{provider.label} sign-in is not set up: an administrator must enter the OAuth client id and "
                f"secret on the admin page (or set PLMAIL_{provider.value.upper()}_CLIENT_ID and _SECRET).")
        return found

    async def status(self, provider: OAuthProvider) -> OAuthAppStatus:
        stored = await self._stored(provider)
        found = await self.client(provider)
        return OAuthAppStatus(
            provider=provider, configured=found is not None, source=found.source if found else None,
            client_id=found.client_id if found else "", has_secret=bool(found and found.client_secret),
            admin_client_id=str(stored.get("client_id") or ""),
        )

    async def save(self, provider: OAuthProvider, *, client_id: str, client_secret: str | None) -> None:
        """Save the admin page's credentials. A blank secret keeps the stored one; a blank client id removes
        both, so the environment's apply again."""
        client_id = client_id.strip()
        if any(ch.isspace() for ch in client_id):
            raise ValidationError("The client id cannot contain spaces.")
        current = await self.repo.get(SETTINGS_KEY)
        entry: dict[str, Any] = {}
        if client_id:
            entry["client_id"] = client_id
            secret = (client_secret or "").strip()
            previous = current.get(provider.value) if isinstance(current.get(provider.value), dict) else {}
            if secret:
                entry["client_secret"] = base64.b64encode(self.box.seal({"secret": secret})).decode("ascii")
            elif isinstance(previous, dict) and previous.get("client_secret"):
                entry["client_secret"] = previous["client_secret"]
        current[provider.value] = entry
        await self.repo.put(SETTINGS_KEY, current)
