"""An account's way to its upstream: the stored settings and sealed secret turned into a live JMAP session."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from plmail.db.repos.account_admin import AccountAdminRepository, AccountRecord
from plmail.domain.enums import AccountStatus, ProviderKind
from plmail.domain.errors import CredentialError
from plmail.keys import CredentialBox
from plmail.providers.jmap.client import JmapClient, JmapCredentials, JmapSession
from plmail.providers.jmap.errors import JmapAuthError

JMAP = ProviderKind("jmap")
STATE_KEY = "jmap"  # account.sync_state -> 'jmap': the upstream's states and the first import's place


@dataclass(frozen=True, slots=True)
class Upstream:
    record: AccountRecord
    session: JmapSession
    credentials: JmapCredentials

    @property
    def state(self) -> dict[str, Any]:
        found = self.record.sync_state.get(STATE_KEY)
        return found if isinstance(found, dict) else {}


class JmapConnector:
    def __init__(self, accounts: AccountAdminRepository, box: CredentialBox, client: JmapClient) -> None:
        self.accounts = accounts
        self.box = box
        self.client = client

    def seal(self, secret: str) -> bytes:
        return self.box.seal({"secret": secret})

    def credentials(self, record: AccountRecord) -> JmapCredentials:
        if record.credentials is None:
            raise CredentialError("No app password or token is stored for this account.")
        settings = record.settings.get(STATE_KEY) or {}
        return JmapCredentials(str(settings.get("username") or record.username),
                               str(self.box.open(record.credentials).get("secret", "")),
                               bearer=bool(settings.get("bearer")))

    async def open(self, record: AccountRecord) -> Upstream:
        """The session, fetched again each time (it is one small GET, and tells of moved API URLs). A refused
        secret stops the account until its user enters a new one."""
        settings = record.settings.get(STATE_KEY) or {}
        credentials = self.credentials(record)
        try:
            session = await self.client.session(str(settings.get("session_url")), credentials)
        except JmapAuthError as exc:
            await self.accounts.set_status(record.id, AccountStatus.AUTH_FAILED, str(exc))
            raise
        return Upstream(record, session, credentials)
