"""The dummy provider's plugin: a syncer that hands the pipeline whatever its in-memory server holds, and a
propagator that records what plmail asks it to change. Nothing outside this folder knows it exists."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from plmail.domain.enums import ProviderKind
from plmail.domain.models import Account
from plmail.domain.providers import PendingChange, PropagationOutcome
from plmail.mail.ingest import parse_message
from plmail.mail.pipeline import PostIngestPipeline
from plmail.providers.plugins import PluginHost

DUMMY = ProviderKind("dummy")


@dataclass
class DummyServer:
    """The provider's side: the mail it holds per account, and the changes it was told about."""

    mail: dict[int, list[bytes]] = field(default_factory=dict)
    delivered: dict[int, int] = field(default_factory=dict)
    changes: list[tuple[int, str, tuple[int, ...], tuple[int, ...]]] = field(default_factory=list)
    syncs: int = 0


SERVER = DummyServer()


class DummySyncer:
    kind = DUMMY

    def __init__(self, pipeline: PostIngestPipeline, server: DummyServer) -> None:
        self.pipeline = pipeline
        self.server = server

    async def sync(self, account: Account) -> list[int]:
        self.server.syncs += 1
        held = self.server.mail.get(account.id, [])
        start = self.server.delivered.get(account.id, 0)
        batch = [parse_message(raw, account_id=account.id, source_ref=f"dummy:{account.id}:{n}")
                 for n, raw in enumerate(held[start:], start)]
        if batch:
            await self.pipeline.ingest(batch)
        self.server.delivered[account.id] = len(held)
        return []


class DummyPropagator:
    kind = DUMMY

    def __init__(self, server: DummyServer) -> None:
        self.server = server

    async def propagate(self, account_id: int, changes: Sequence[PendingChange]) -> PropagationOutcome:
        self.server.changes.extend((account_id, c.kind, c.added, c.removed) for c in changes)
        return PropagationOutcome(done=tuple(c.id for c in changes))


def install(host: PluginHost) -> None:
    host.providers.syncers.add(DummySyncer(host.pipeline, SERVER))
    host.providers.propagators.add(DummyPropagator(SERVER))
