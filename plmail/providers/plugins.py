"""How a provider joins plmail: one plugin module per provider, with one `install(host)`.

A plugin builds its implementations of every role (syncer, history importer, label propagator,
import-state probe, raw-message fetcher, its own jobs and sync watchers) from what the host offers,
and adds them to `host.providers`, where the services that drive providers find them by the account's
provider kind. What the web pages and the command line need of a provider beyond those roles (the
IMAP account form, the OAuth sign-in) is offered with `host.offer(...)` and looked up by its class.

What a plugin brings before any service is built (its `plmail` subcommands, `plmail doctor`'s checks of an
account's servers) lives in its package's light `surfaces` module, read by `plmail/surfaces.py`.

The composition root (`plmail/services.py`) installs the plugins named in `PLUGINS` in order.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Protocol, TypeVar

from plmail.accounts.importing import MailImporter
from plmail.accounts.sync import AccountSyncService
from plmail.config import Settings
from plmail.db.database import Database
from plmail.domain.account_services import ServiceRole
from plmail.domain.errors import ConfigurationError
from plmail.domain.ports import Enqueuer
from plmail.domain.registry import ProviderRegistry
from plmail.keys import InstallationKeys
from plmail.mail.pipeline import PostIngestPipeline

T = TypeVar("T")


class ProviderPlugin(Protocol):
    """A plugin module (or any object) with an `install` function."""

    def install(self, host: PluginHost) -> None: ...


@dataclass(slots=True)
class PluginHost:
    """What a plugin builds its roles from, and where it puts them."""

    providers: ProviderRegistry
    db: Database
    keys: InstallationKeys
    settings: Settings | None
    pipeline: PostIngestPipeline
    queues: Enqueuer | None
    sync: AccountSyncService
    importer: MailImporter
    _shared: dict[type, Any] = field(default_factory=dict)
    _offered: dict[type | ServiceRole[Any], Any] = field(default_factory=dict)

    def shared(self, cls: type[T], build: Callable[[], T]) -> T:
        """One instance of `cls` for every plugin that needs it (the OAuth machinery Gmail and Graph share)."""
        if cls not in self._shared:
            self._shared[cls] = build()
        found: T = self._shared[cls]
        return found

    def offer(self, service: T, as_: ServiceRole[T] | None = None) -> None:
        """Make a provider's own service reachable: by its class for the provider's own commands, or under a
        domain role (domain/account_services.py) for the web pages, which import no provider."""
        self._offered[as_ if as_ is not None else type(service)] = service

    def offered(self) -> OfferedServices:
        return OfferedServices(dict(self._offered))


@dataclass(frozen=True, slots=True)
class OfferedServices:
    """The providers' own services, found by class: `services.providers.get(ImapAccountService)`."""

    _by_class: dict[type | ServiceRole[Any], Any]

    def get(self, cls: type[T] | ServiceRole[T]) -> T:
        found = self._by_class.get(cls)
        if found is None:
            name = cls.name if isinstance(cls, ServiceRole) else cls.__name__
            raise ConfigurationError(f"No installed provider offers {name}.")
        service: T = found
        return service


def load_plugins(names: Sequence[str | ModuleType | ProviderPlugin]) -> list[ProviderPlugin]:
    """Plugins by module name (or as given), checked for their `install` before anything is built."""
    plugins: list[ProviderPlugin] = []
    for entry in names:
        plugin: Any = importlib.import_module(entry) if isinstance(entry, str) else entry
        if not callable(getattr(plugin, "install", None)):
            name = getattr(plugin, "__name__", plugin)
            raise ConfigurationError(f"{name!r} is no provider plugin: it has no install().")
        plugins.append(plugin)
    return plugins
