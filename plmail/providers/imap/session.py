"""Signed-in IMAP connections for an account, and what a failed sign-in does to the account.

A refused password (or a certificate or server setting the user has to fix) marks the account
`auth_failed` with the server's reason and nothing connects again until the user edits the account:
retrying a wrong password only gets the address blocked. A passing failure is noted and raised for the
caller's retry.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from plmail.db.repos.account_admin import AccountAdminRepository, AccountRecord
from plmail.domain.account_services import TlsMode
from plmail.domain.enums import AccountStatus
from plmail.domain.errors import CredentialError, ValidationError
from plmail.keys import CredentialBox
from plmail.providers.imap.client import ImapClient
from plmail.providers.imap.errors import ImapAuthError, ImapError
from plmail.providers.imap.models import ImapServer

PARK_SECONDS = 60.0  # how long a finished session's connection waits to be used again


@dataclass(frozen=True, slots=True)
class ImapSettings:
    """How to reach an account's server, as stored in `account.settings["imap"]`."""

    host: str
    port: int
    tls: TlsMode
    ignore_capabilities: frozenset[str] = frozenset()
    ca_file: str | None = None  # a self-hosted server's own CA (PEM), trusted instead of the system store

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> ImapSettings:
        try:
            return cls(
                host=str(value["host"]), port=int(value["port"]), tls=TlsMode(value.get("tls", "implicit")),
                ignore_capabilities=frozenset(str(c).upper() for c in value.get("ignore_capabilities", ())),
                ca_file=str(value["ca_file"]) if value.get("ca_file") else None,
            )
        except (KeyError, ValueError, TypeError) as exc:
            raise ValidationError(f"The account's server settings are incomplete: {exc}") from None

    def as_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {"host": self.host, "port": self.port, "tls": self.tls.value}
        if self.ignore_capabilities:
            value["ignore_capabilities"] = sorted(self.ignore_capabilities)
        if self.ca_file:
            value["ca_file"] = self.ca_file
        return value

    def server(self, *, timeout: float = 60.0) -> ImapServer:
        return ImapServer(self.host, self.port, self.tls, ca_file=Path(self.ca_file) if self.ca_file else None,
                          timeout=timeout, ignore_capabilities=self.ignore_capabilities)


@dataclass(frozen=True, slots=True)
class ConnectionReport:
    """What "test connection" tells the user."""

    tls_version: str | None
    capabilities: frozenset[str]
    smtp: str | None = None  # what the SMTP test said, when the account sends


async def try_login(server: ImapServer, username: str, password: str) -> ConnectionReport:
    """Connect and sign in once, then log out; raises the client's errors unchanged."""
    async with ImapClient(server) as client:
        await client.login(username, password)
        return ConnectionReport(client.tls_version, client.capabilities)


class ImapConnector:
    def __init__(self, accounts: AccountAdminRepository, box: CredentialBox, *, timeout: float = 60.0) -> None:
        self.accounts = accounts
        self.box = box
        self.timeout = timeout
        self._parked: dict[int, tuple[ImapClient, datetime, float]] = {}
        self._closing = False

    def seal(self, password: str, smtp_password: str | None = None) -> bytes:
        """The sign-in secrets sealed for storage: the password, and a separate SMTP one when there is one."""
        secrets = {"password": password}
        if smtp_password:
            secrets["smtp_password"] = smtp_password
        return self.box.seal(secrets)

    def smtp_password(self, record: AccountRecord) -> str | None:
        if record.credentials is None:
            return None
        value = self.box.open(record.credentials).get("smtp_password")
        return str(value) if value else None

    def password(self, record: AccountRecord) -> str:
        if record.credentials is None:
            raise CredentialError("No password is stored for this account.")
        return str(self.box.open(record.credentials).get("password", ""))

    def server(self, record: AccountRecord) -> ImapServer:
        return ImapSettings.from_json(record.imap).server(timeout=self.timeout)

    @asynccontextmanager
    async def session(self, record: AccountRecord, *, reuse: bool = True) -> AsyncIterator[ImapClient]:
        """A signed-in connection. With `reuse`, one left by an earlier session of the account (within
        PARK_SECONDS, same settings) is taken if it still answers, and this one is parked afterwards: import
        pages come every fraction of a second, and signing in anew for each costs a TLS handshake and a login
        round trip at a real server."""
        client = await self._take_parked(record) if reuse else None
        if client is None:
            client = await self._open(record)
        finished = False
        try:
            yield client
            finished = True
        finally:
            if reuse and finished and client.is_open and not self._closing:
                await self._park(record, client)
            else:
                await client.close()

    async def _open(self, record: AccountRecord) -> ImapClient:
        try:
            server = self.server(record)
            password = self.password(record)
        except (CredentialError, ValidationError) as exc:
            await self.accounts.set_status(record.id, AccountStatus.AUTH_FAILED, str(exc))
            raise
        client = ImapClient(server)
        try:
            await client.connect()
            await client.login(record.username, password)
        except ImapError as exc:
            await client.close()
            # Shown with the account in plmail's words only: the server's own bytes (or OpenSSL's) go to the log.
            said = exc.summarised().summary
            if isinstance(exc, ImapAuthError) or not exc.retryable:
                await self.accounts.set_status(record.id, AccountStatus.AUTH_FAILED, said)
            else:
                await self.accounts.note_problem(record.id, said)
            raise
        return client

    async def _take_parked(self, record: AccountRecord) -> ImapClient | None:
        await self._close_expired()
        parked = self._parked.pop(record.id, None)
        if parked is None:
            return None
        client, version, _ = parked
        if version != record.updated_at or not client.is_open:
            await client.close()
            return None
        try:
            await client.noop()
        except ImapError:
            await client.close()
            return None
        return client

    async def _park(self, record: AccountRecord, client: ImapClient) -> None:
        previous = self._parked.pop(record.id, None)
        if previous is not None:
            await previous[0].close()
        self._parked[record.id] = (client, record.updated_at, time.monotonic())
        await self._close_expired()

    async def _close_expired(self) -> None:
        now = time.monotonic()
        for account_id, (client, _, parked_at) in list(self._parked.items()):
            if now - parked_at > PARK_SECONDS:
                del self._parked[account_id]
                await client.close()

    async def close(self) -> None:
        """Close the parked connections (at shutdown)."""
        self._closing = True
        parked, self._parked = self._parked, {}
        for client, _, _ in parked.values():
            await client.close()
