"""State tokens and what changed since one, read from the change log (JMAP's /changes and push use them).

A state is the newest change-log sequence of (account, object type) — the log is written in the
same transaction as the change it describes, so a state can never run ahead of the data. The unified
account's state is the newest of its accounts' (sequences are one counter, so the largest moves with
any of them), and its /changes are their rows together. Threads
are only ever announced as updated (or destroyed when merged): RFC 8620 §5.2 has clients fetch an
id they do not know from `updated`, and telling a new thread from a grown one would mean checking
every message in it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from plmail.db.database import Database
from plmail.db.repos.jmap_changes import JmapChangeRepository
from plmail.domain.enums import ChangeType, JmapObjectType
from plmail.domain.errors import UnanswerableError
from plmail.domain.mailstore import MailScope

_CHUNK = 2000


@dataclass(frozen=True, slots=True)
class ChangeSet:
    old_state: str
    new_state: str
    has_more_changes: bool
    created: list[str]
    updated: list[str]
    destroyed: list[str]


CHANGE_LOG_LIFETIME = timedelta(days=90)  # a phone away longer than this starts over (cannotCalculateChanges)


class ChangeLog:
    """The change log as readers see it: a StateReader per request, and pruning what no client can still ask for."""

    def __init__(self, db: Database) -> None:
        self.repo = JmapChangeRepository(db)

    def reader(self) -> StateReader:
        return StateReader(self.repo)

    async def prune(self, before: datetime) -> int:
        """Rows older than `before`; the states stay where they were (the horizon remembers them)."""
        return await self.repo.prune(before)

    async def prune_expired(self, now: datetime | None = None) -> int:
        return await self.prune((now or datetime.now(UTC)) - CHANGE_LOG_LIFETIME)


def parse_state(value: object) -> int:
    """A state we handed out: a decimal sequence. Anything else cannot be answered from the log."""
    if not isinstance(value, str) or not value.isdigit() or len(value) > 18:
        raise UnanswerableError("This state was not issued by this server.", reason="cannotCalculateChanges")
    return int(value)


def fold(previous: str | None, change: str) -> str:
    """One id's changes since the old state, folded into what RFC 8620 §5.2 reports once."""
    if previous is None:
        return change
    if change == ChangeType.DESTROYED:
        return ChangeType.DESTROYED  # created-then-destroyed is reported as destroyed only
    if previous == ChangeType.CREATED:
        return ChangeType.CREATED  # created-then-updated is reported as created only
    return ChangeType.UPDATED  # updated again, or back after a destroy (ids are never reused)


@dataclass(slots=True)
class StateReader:
    """States for one API request: read once per (account, type) and forgotten after a write."""

    repo: JmapChangeRepository
    _cache: dict[tuple[tuple[int, ...], str], int] = field(default_factory=dict)

    def invalidate(self) -> None:
        self._cache.clear()

    async def sequence(self, scope: MailScope, kind: JmapObjectType) -> int:
        return (await self.sequences(scope, (kind,)))[0]

    async def sequences(self, scope: MailScope, kinds: tuple[JmapObjectType, ...]) -> tuple[int, ...]:
        """Several types' states of one scope, those not read yet in this request read together."""
        keys = [(scope.log_accounts(kind.value), kind.value) for kind in kinds]
        missing = [key for key in keys if key not in self._cache]
        if missing:
            self._cache.update(await self._read(missing))
        return tuple(self._cache[key] for key in keys)

    async def _read(self, keys: list[tuple[tuple[int, ...], str]]) -> dict[tuple[tuple[int, ...], str], int]:
        pairs = sorted({(a, kind) for accounts, kind in keys for a in accounts})
        found = await self.repo.watermarks(pairs)
        return {(accounts, kind): max((found[(a, kind)] for a in accounts), default=0) for accounts, kind in keys}

    async def horizon(self, scope: MailScope, kind: JmapObjectType) -> int:
        """The newest sequence pruned from the log: changes since an older state cannot be told."""
        return await self.repo.horizon(scope.log_accounts(kind.value), kind.value)

    async def state(self, scope: MailScope, kind: JmapObjectType) -> str:
        return str(await self.sequence(scope, kind))

    async def snapshot(self, pairs: list[tuple[MailScope, JmapObjectType]]
                       ) -> dict[tuple[MailScope, JmapObjectType], str]:
        """Many states under one lock (the push stream reads every account at once)."""
        keys = [(scope.log_accounts(kind.value), kind.value) for scope, kind in pairs]
        found = await self._read(keys)
        return {pair: str(found[key]) for pair, key in zip(pairs, keys, strict=True)}

    async def changes(self, scope: MailScope, kind: JmapObjectType, since_state: object, max_changes: int
                      ) -> ChangeSet:
        since = parse_state(since_state)
        current = await self.sequence(scope, kind)
        accounts = scope.log_accounts(kind.value)
        if since > current:
            raise UnanswerableError("This state is newer than the server's.", reason="cannotCalculateChanges")
        if since < await self.repo.horizon(accounts, kind.value):
            raise UnanswerableError("Changes this old are no longer kept; fetch everything again.",
                                    reason="cannotCalculateChanges")

        async def rows(after: int, upto: int, limit: int) -> list[tuple[int, str, str]]:
            return await self.repo.rows(accounts, kind.value, after, upto, limit)

        return await collect_changes(rows, since, current, max_changes)


RowReader = Callable[[int, int, int], Awaitable[list[tuple[int, str, str]]]]


async def collect_changes(rows: RowReader, since: int, current: int, max_changes: int) -> ChangeSet:
    """What changed in (since, current], read from a change log a chunk at a time, each id folded into the one
    change RFC 8620 §5.2 reports and at most ``max_changes`` ids (then the new state is where it stopped)."""
    status: dict[str, str] = {}
    has_more = False
    cursor = last = since
    while not has_more:
        chunk = await rows(cursor, current, _CHUNK)
        for sequence, entity_id, change in chunk:
            if entity_id not in status and len(status) >= max_changes:
                has_more = True
                break
            status[entity_id] = fold(status.get(entity_id), change)
            last = sequence
        if len(chunk) < _CHUNK:
            break
        cursor = chunk[-1][0]
    return ChangeSet(
        old_state=str(since),
        new_state=str(last if has_more else current),
        has_more_changes=has_more,
        created=[i for i, s in status.items() if s == ChangeType.CREATED],
        updated=[i for i, s in status.items() if s == ChangeType.UPDATED],
        destroyed=[i for i, s in status.items() if s == ChangeType.DESTROYED],
    )
