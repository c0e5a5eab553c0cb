"""What the provider plugins and the services that drive them hand each other: import pages and progress,
the changes waiting to be made at a provider, and what propagating them achieved."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from plmail.domain.ingest import ProviderRef


@dataclass(frozen=True, slots=True)
class ImportPage:
    stored: int = 0  # messages stored (or matched to rows already there) by this page
    failed: int = 0  # messages that would not store and are tried again
    folder: str | None = None
    more: bool = False  # another page has work
    wait_until: datetime | None = None  # the next page may run only then (a provider's quota is spent)


@dataclass(frozen=True, slots=True)
class ImportProgress:
    importing: bool
    done: int
    total: int
    started_at: datetime | None
    eta_seconds: float | None

    @property
    def percent(self) -> int:
        if not self.importing:
            return 100
        return min(99, int(100 * self.done / self.total)) if self.total else 0


@dataclass(frozen=True, slots=True)
class PageRun:
    ran: bool  # False: another worker holds this account's import right now
    page: ImportPage


@dataclass(frozen=True, slots=True)
class PendingChange:
    """A change made in plmail that its provider has not been told about yet."""

    id: int
    message_id: int
    kind: str
    added: tuple[int, ...]
    removed: tuple[int, ...]
    flag_value: bool | None
    source_mailbox_id: int | None
    attempts: int


@dataclass(frozen=True, slots=True)
class PropagationOutcome:
    done: tuple[int, ...] = ()  # change ids the provider now reflects
    failed: dict[int, str] = field(default_factory=dict)  # change id -> reason


@dataclass(frozen=True, slots=True)
class Tombstone:
    """A message destroyed in plmail that its provider still has to delete for good (RFC 8621 §4.6 destroy)."""

    id: int
    account_id: int
    ref: ProviderRef
    rfc_message_id: str | None
    attempts: int
