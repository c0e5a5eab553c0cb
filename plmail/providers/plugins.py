"""How a provider joins plmail: one plugin module per provider, with one `install(host)`.

A plugin builds its implementations of every role (syncer, history importer, label propagator,
import-state probe, raw-message fetcher, its own jobs and sync watchers) from what the host offers,
and adds them to `host.providers`, where the services that drive providers find them by the account's
provider kind. What the web pages and the command line need of a provider beyond those roles (the
IMAP account form, the OAuth sign-in) is offered with `host.offer(...)` and looked up by its class.

Surfaces that exist before any service is built are module-level names a plugin may define: `add_commands(sub,
host)` adds its `plmail` subcommands, and `SERVER_CHECKS` maps its provider kinds to `plmail doctor`'s checks of an
account's servers. `plugin_surfaces` collects them, so the command line and doctor never import a provider.

The composition root (`plmail/services.py`) installs the plugins named in `PLUGINS` in order.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Protocol, TypeVar

from plmail.accounts.importing import MailImporter
from plmail.accounts.sync import AccountSyncService
from plmail.config import Settings
from plmail.db.database import Database
from plmail.db.repos.account_admin import AccountRecord
from plmail.domain.account_services import ServiceRole
from plmail.domain.commands import CommandAdder
from plmail.domain.doctor import Finding
from plmail.domain.enums import ProviderKind
from plmail.domain.errors import ConfigurationError
from plmail.domain.ports import Enqueuer
from plmail.domain.registry import ProviderRegistry
from plmail.keys import CredentialBox, InstallationKeys
from plmail.mail.pipeline import PostIngestPipeline

# The installed providers, in order; a new provider is one folder under plmail/providers/ and one line here.
PLUGINS: tuple[str, ...] = (
    "plmail.providers.local.plugin",
    "plmail.providers.imap.plugin",
    "plmail.providers.gmail.plugin",
    "plmail.providers.graph.plugin",
    "plmail.providers.jmap.plugin",
)

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


# A plugin's check of one account's servers for `plmail doctor`: sign in with the account's settings, say what happened.
ServerCheck = Callable[[Database, CredentialBox, AccountRecord], Awaitable[Finding]]


@dataclass(frozen=True, slots=True)
class PluginSurfaces:
    """What the installed plugins bring beside their roles: subcommands and doctor checks."""

    command_adders: tuple[CommandAdder, ...]
    server_checks: Mapping[ProviderKind, tuple[ServerCheck, ...]]


def plugin_surfaces(plugins: Sequence[ProviderPlugin]) -> PluginSurfaces:
    adders: list[CommandAdder] = []
    checks: dict[ProviderKind, tuple[ServerCheck, ...]] = {}
    for plugin in plugins:
        add = getattr(plugin, "add_commands", None)
        if add is not None:
            adders.append(add)
        for kind, found in getattr(plugin, "SERVER_CHECKS", {}).items():
            checks[kind] = (*checks.get(kind, ()), *found)
    return PluginSurfaces(tuple(adders), checks)
