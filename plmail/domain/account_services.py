"""What the account pages ask of the providers' account services, so `web/` finds them without importing a provider:
the mail-server account (server name, port, encryption, password — IMAP and SMTP) and the OAuth connect flow
(Google, Microsoft). A plugin offers its implementation under the role (`host.offer(service, as_=ROLE)`), the pages
look it up by the same role (`services.providers.get(ROLE)`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Generic, Protocol, TypeVar

from plmail.domain.enums import ProviderKind
from plmail.domain.errors import ValidationError
from plmail.domain.providers import ImportProgress

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ServiceRole(Generic[T]):
    """A name a plugin offers a service under and the pages look it up by (a Protocol cannot be a lookup key
    that type-checks: it is no concrete class)."""

    name: str


class TlsMode(StrEnum):
    IMPLICIT = "implicit"  # TLS from the first byte, usually port 993
    STARTTLS = "starttls"  # plain greeting, then the STARTTLS upgrade, usually port 143
    NONE = "none"  # no encryption at all: loopback addresses only


@dataclass(frozen=True, slots=True)
class MailServerAccountInput:
    """What the form or the command line gives; a blank password when editing keeps the stored one."""

    email: str
    host: str
    port: int
    tls: str
    username: str = ""
    password: str = ""
    name: str = ""
    ca_file: str | None = None  # None keeps what was stored (the web form has no such field)
    # Sending. A blank host: the known provider's SMTP server, or none (the account then only reads);
    # blank sign-in fields: the IMAP ones.
    smtp_host: str = ""
    smtp_port: int | None = None  # None: the usual port of the encryption chosen
    smtp_tls: str = ""
    smtp_username: str = ""
    smtp_password: str = ""

    @property
    def login(self) -> str:
        return self.username.strip() or self.email.strip()

    def checked_email(self) -> str:
        email = self.email.strip().lower()
        if "@" not in email or email.startswith("@") or email.endswith("@"):
            raise ValidationError("Enter the account's email address.")
        return email


@dataclass(frozen=True, slots=True)
class Suggestion:
    data: MailServerAccountInput
    source: str  # where the servers came from: autoconfig, srv, preset or guess
    note: str  # shown under the form (translated by the template)


class AccountOverviewView(Protocol):
    """What the pages read of an account's overview themselves (the template reads the rest)."""

    @property
    def progress(self) -> ImportProgress | None: ...


class MailServerAccounts(Protocol):
    """Adding, testing, editing, pausing and removing an account on a mail server, and choosing its folders."""

    async def test(self, data: MailServerAccountInput, *, user_id: int | None) -> object: ...

    async def test_existing(self, user_id: int, account_id: int, data: MailServerAccountInput) -> object: ...

    async def add(self, user_id: int, data: MailServerAccountInput) -> int: ...

    async def update(self, user_id: int, account_id: int, data: MailServerAccountInput) -> None: ...

    async def set_active(self, user_id: int, account_id: int, active: bool) -> None: ...

    async def remove(self, user_id: int, account_id: int) -> None: ...

    async def set_folder_sync(self, user_id: int, account_id: int, mailbox_id: int, enabled: bool) -> None: ...

    async def overview(self, user_id: int, account_id: int) -> AccountOverviewView: ...

    async def progress(self, user_id: int, account_id: int) -> ImportProgress | None: ...

    async def request_sync(self, user_id: int, account_id: int) -> None: ...

    async def retry(self, user_id: int, account_id: int) -> None: ...

    async def suggest(self, email: str) -> Suggestion | None: ...


MAIL_SERVER_ACCOUNTS: ServiceRole[MailServerAccounts] = ServiceRole("mail server accounts")


class OAuthProvider(StrEnum):
    GOOGLE = "google"
    MICROSOFT = "microsoft"

    @property
    def label(self) -> str:
        return "Google" if self is OAuthProvider.GOOGLE else "Microsoft"


@dataclass(frozen=True, slots=True)
class OAuthStarted:
    url: str  # the provider's consent page
    pending: dict[str, Any]  # what the browser's session keeps until the callback


class OAuthConnect(Protocol):
    """Connecting an account by OAuth sign-in, and the admin's OAuth client settings. Errors: `OAuthError`."""

    def provider_of(self, kind: ProviderKind) -> OAuthProvider | None: ...

    async def start(self, provider: OAuthProvider, redirect_uri: str, *, login_hint: str | None,
                    account_id: int | None) -> OAuthStarted: ...

    async def finish(self, user_id: int, provider: OAuthProvider, pending: Any, params: Mapping[str, str]) -> int:
        """The connected (or reconnected) account's id; `pending` is what the session kept, if anything."""
        ...

    async def needs_consent_to_send(self, user_id: int, account_id: int) -> bool: ...

    async def save_client(self, provider: OAuthProvider, *, client_id: str, client_secret: str | None) -> None: ...

    async def client_status(self, provider: OAuthProvider) -> object: ...


OAUTH_CONNECT: ServiceRole[OAuthConnect] = ServiceRole("OAuth connect")
