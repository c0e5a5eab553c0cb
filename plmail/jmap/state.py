"""State tokens and /changes, read from the change log.

A state is the newest change-log sequence of (account, object type) — the log is written in the
same transaction as the change it describes, so a state can never run ahead of the data. Threads
are only ever announced as updated (or destroyed when merged): RFC 8620 §5.2 has clients fetch an
id they do not know from `updated`, and telling a new thread from a grown one would mean checking
every message in it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from plmail.db.repos.jmap_changes import JmapChangeRepository
from plmail.domain.enums import ChangeType, JmapObjectType
from plmail.jmap.errors import MethodError

_CHUNK = 2000


@dataclass(frozen=True, slots=True)
class ChangeSet:
    old_state: str
    new_state: str
    has_more_changes: bool
    created: list[str]
    updated: list[str]
    destroyed: list[str]


def parse_state(value: object) -> int:
    """A state we handed out: a decimal sequence. Anything else cannot be answered from the log."""
    if not isinstance(value, str) or not value.isdigit() or len(value) > 18:
        raise MethodError("cannotCalculateChanges", "This state was not issued by this server.")
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
    _cache: dict[tuple[int, str], int] = field(default_factory=dict)

    def invalidate(self) -> None:
        self._cache.clear()

    async def sequence(self, account_id: int, kind: JmapObjectType) -> int:
        key = (account_id, kind.value)
        if key not in self._cache:
            self._cache.update(await self.repo.watermarks([key]))
        return self._cache[key]

    async def state(self, account_id: int, kind: JmapObjectType) -> str:
        return str(await self.sequence(account_id, kind))

    async def snapshot(self, pairs: list[tuple[int, JmapObjectType]]) -> dict[tuple[int, JmapObjectType], str]:
        """Many states under one lock (the push stream reads every account at once)."""
        found = await self.repo.watermarks([(a, k.value) for a, k in pairs])
        return {(a, k): str(found[(a, k.value)]) for a, k in pairs}

    async def changes(self, account_id: int, kind: JmapObjectType, since_state: object, max_changes: int
                      ) -> ChangeSet:
        since = parse_state(since_state)
        current = await self.sequence(account_id, kind)
        if since > current:
            raise MethodError("cannotCalculateChanges", "This state is newer than the server's.")
        if since < await self.repo.horizon(account_id, kind.value):
            raise MethodError("cannotCalculateChanges", "Changes this old are no longer kept; fetch everything again.")
        status: dict[str, str] = {}
        has_more = False
        cursor = last = since
        while not has_more:
            rows = await self.repo.rows(account_id, kind.value, cursor, current, _CHUNK)
            for sequence, entity_id, change in rows:
                if entity_id not in status and len(status) >= max_changes:
                    has_more = True
                    break
                status[entity_id] = fold(status.get(entity_id), change)
                last = sequence
            if len(rows) < _CHUNK:
                break
            cursor = rows[-1][0]
        return ChangeSet(
            old_state=str(since),
            new_state=str(last if has_more else current),
            has_more_changes=has_more,
            created=[i for i, s in status.items() if s == ChangeType.CREATED],
            updated=[i for i, s in status.items() if s == ChangeType.UPDATED],
            destroyed=[i for i, s in status.items() if s == ChangeType.DESTROYED],
        )
