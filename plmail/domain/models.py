"""DTOs that cross layer boundaries: frozen, slotted, built by repositories, read by everyone."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from plmail.domain.enums import AccountStatus, LabelRole, Locale, ProviderKind
from plmail.domain.mailstore import MailScope


@dataclass(frozen=True, slots=True)
class Appearance:
    """How the web UI looks and answers for one user (kept in app_user.settings, read with the user)."""

    theme: str = "system"  # system | light | dark: "system" follows prefers-color-scheme
    density: str = "comfortable"  # comfortable | compact
    hour_cycle: str = ""  # "" (the language's custom) | "12" | "24"
    shortcuts: bool = True  # Gmail's keyboard shortcuts, on by default

    THEMES = ("system", "light", "dark")
    DENSITIES = ("comfortable", "compact")
    HOUR_CYCLES = ("", "12", "24")


@dataclass(frozen=True, slots=True)
class User:
    id: int
    email: str
    display_name: str
    is_admin: bool
    locale: Locale
    time_zone: str
    created_at: datetime
    appearance: Appearance = Appearance()
    disabled: bool = False
    two_factor: bool = False  # a confirmed TOTP second factor


@dataclass(frozen=True, slots=True)
class UserCredentials:
    """The parts of a user row that only sign-in needs."""

    user: User
    password_hash: str


@dataclass(frozen=True, slots=True)
class Account:
    id: int
    user_id: int
    provider_kind: ProviderKind
    name: str
    email: str
    status: AccountStatus
    is_active: bool
    last_synced_at: datetime | None


@dataclass(frozen=True, slots=True)
class SidebarLabel:
    id: int
    name: str
    role: LabelRole | None
    parent_id: int | None
    color: str | None
    unread_threads: int
    depth: int = 0


@dataclass(frozen=True, slots=True)
class LabelInfo:
    id: int
    name: str
    role: LabelRole | None
    parent_id: int | None
    color: str | None
    is_visible: bool
    depth: int
    path: str  # "Work/Invoices"


@dataclass(frozen=True, slots=True)
class ThrottleState:
    failures: int
    locked_until: datetime | None


@dataclass(frozen=True, slots=True)
class WebSessionRow:
    """A signed-in browser, as the settings page lists it."""

    id: int
    user_id: int
    created_at: datetime
    last_seen_at: datetime
    expires_at: datetime
    remember: bool
    user_agent: str
    client_address: str
    reauthenticated_at: datetime | None = None  # when this session last gave the password again


@dataclass(frozen=True, slots=True)
class TrustedDeviceRow:
    id: int
    user_id: int
    last_seen_at: datetime
    second_factor_until: datetime | None


@dataclass(frozen=True, slots=True)
class SecondFactorState:
    """A user's TOTP secret (sealed) and the last time step a code was accepted for."""

    sealed_secret: bytes | None
    last_step: int | None


@dataclass(frozen=True, slots=True)
class QueueCounts:
    queue: str
    queued: int
    scheduled: int
    active: int
    failed: int
    complete: int
    workers: int
    oldest_seconds: float | None = None  # how long the oldest due job has waited


@dataclass(frozen=True, slots=True)
class FailedJob:
    key: str
    queue: str
    function: str
    error: str
    attempts: int
    finished_at: datetime | None


@dataclass(frozen=True, slots=True)
class QueueProbe:
    id: int
    queue: str
    requested_at: datetime
    ran_at: datetime | None
    worker: str | None

    @property
    def round_trip_ms(self) -> float | None:
        if self.ran_at is None:
            return None
        return (self.ran_at - self.requested_at).total_seconds() * 1000.0


@dataclass(frozen=True, slots=True)
class AppPasswordRow:
    id: int
    name: str
    hint: str
    created_at: datetime
    last_used_at: datetime | None



@dataclass(frozen=True, slots=True)
class AccountRow:
    id: int
    email: str
    name: str
    provider_kind: ProviderKind
    aliases: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Principal:
    """The user behind a request, and the mail accounts it may reach: each is a JMAP account of its own, and
    together they are the user's unified account (`unified_id`), the primary one."""

    user_id: int
    email: str
    display_name: str
    password_id: int
    accounts: tuple[AccountRow, ...]

    @property
    def unified_id(self) -> str:
        return f"u{self.user_id}"

    def account(self, account_id: object) -> AccountRow | None:
        for account in self.accounts:
            if isinstance(account_id, str) and account_id == str(account.id):
                return account
        return None

    def scope(self, jmap_id: object) -> MailScope | None:
        """The mail a JMAP accountId names for this user; None when it names none of theirs."""
        if jmap_id == self.unified_id:
            return MailScope(self.user_id, tuple(a.id for a in self.accounts), unified=True)
        account = self.account(jmap_id)
        return MailScope.single(self.user_id, account.id) if account is not None else None

    def jmap_id(self, scope: MailScope) -> str:
        return self.unified_id if scope.unified else str(scope.account_id)


@dataclass(frozen=True, slots=True)
class RulePreviewMatch:
    """A conversation the filter being written would catch, for the editor's preview."""

    thread_id: int
    sender: str
    subject: str
    arrived_at: datetime | None
