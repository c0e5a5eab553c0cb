"""What the provider plugins bring before any service is built: their `plmail` subcommands and `plmail doctor`'s
checks of an account's servers.

Each plugin package may have a `surfaces` module with `add_commands(sub, host)` and `server_checks()`. It is read
here, found through `PLUGINS`, so starting the command line imports no plugin's machinery and names no provider.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from plmail.domain.commands import CommandAdder
from plmail.domain.doctor import Finding
from plmail.domain.enums import ProviderKind
from plmail.providers.catalog import PLUGINS

if TYPE_CHECKING:
    from plmail.db.database import Database
    from plmail.db.repos.account_admin import AccountRecord
    from plmail.keys import CredentialBox

# A plugin's check of one account's servers: sign in with the account's settings, say what happened.
ServerCheck = Callable[["Database", "CredentialBox", "AccountRecord"], Awaitable[Finding]]
CheckSource = Callable[[], Mapping[ProviderKind, Sequence[ServerCheck]]]


@dataclass(frozen=True, slots=True)
class PluginSurfaces:
    command_adders: tuple[CommandAdder, ...]
    check_sources: tuple[CheckSource, ...]

    def server_checks(self) -> dict[ProviderKind, tuple[ServerCheck, ...]]:
        """The checks by provider kind; a plugin imports what its checks need only now, when doctor runs."""
        merged: dict[ProviderKind, tuple[ServerCheck, ...]] = {}
        for source in self.check_sources:
            for kind, found in source().items():
                merged[kind] = (*merged.get(kind, ()), *found)
        return merged


def provider_surfaces(plugins: Sequence[str] = PLUGINS) -> PluginSurfaces:
    adders: list[CommandAdder] = []
    sources: list[CheckSource] = []
    for name in plugins:
        module_name = f"{name.rsplit('.', 1)[0]}.surfaces"
        if importlib.util.find_spec(module_name) is None:
            continue
        module = importlib.import_module(module_name)
        add = getattr(module, "add_commands", None)
        if add is not None:
            adders.append(add)
        checks = getattr(module, "server_checks", None)
        if checks is not None:
            sources.append(checks)
    return PluginSurfaces(tuple(adders), tuple(sources))
