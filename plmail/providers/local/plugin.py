"""The local archive as a provider: nothing to sync, and every change already where it belongs."""

from __future__ import annotations

from collections.abc import Sequence

from plmail.domain.enums import ProviderKind
from plmail.domain.providers import PendingChange, PropagationOutcome
from plmail.providers.plugins import PluginHost


class LocalPropagator:
    """A local archive account has no provider: every change is already where it belongs."""

    kind = ProviderKind.LOCAL

    async def propagate(self, account_id: int, changes: Sequence[PendingChange]) -> PropagationOutcome:
        return PropagationOutcome(done=tuple(c.id for c in changes))


class ArchiveImportState:
    """A local archive account only ever receives imported mail: none of it is live."""

    kind = ProviderKind.LOCAL

    async def is_importing(self, account_id: int) -> bool:
        return True


def install(host: PluginHost) -> None:
    host.providers.propagators.add(LocalPropagator())
    host.providers.import_probes.add(ArchiveImportState())
