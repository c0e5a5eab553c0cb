"""The one sign-in throttle, for web passwords and JMAP app passwords alike.

Failures are counted per key ("email:…", "ip:…", "jmap:ip:…") within a window; a key that reaches its
threshold is locked for a time that doubles with every further failure, up to a ceiling. Each kind of
sign-in names its own keys, so a phone with a revoked app password cannot lock its owner out of the web.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from plmail.db.database import Database
from plmail.db.repos.users import LoginThrottleRepository
from plmail.domain.errors import LoginThrottledError
from plmail.domain.models import ThrottleState


@dataclass(frozen=True, slots=True)
class ThrottlePolicy:
    window_seconds: int = 15 * 60
    email_threshold: int = 5  # failures for one address before it is locked
    ip_threshold: int = 20  # failures from one client address, across all addresses it tries
    base_lock_seconds: int = 30
    max_lock_seconds: int = 15 * 60

    def lock_seconds(self, failures: int, threshold: int) -> int:
        return int(min(self.base_lock_seconds * 2 ** max(failures - threshold, 0), self.max_lock_seconds))


class LoginThrottle:
    def __init__(self, db: Database, policy: ThrottlePolicy | None = None) -> None:
        self.repo = LoginThrottleRepository(db)
        self.policy = policy or ThrottlePolicy()

    async def state(self, keys: Sequence[str]) -> ThrottleState:
        return await self.repo.state(list(keys))

    async def refuse_when_locked(self, keys: Sequence[str]) -> None:
        """Raises LoginThrottledError while any of the keys is locked; asked before any hashing happens."""
        state = await self.repo.state(list(keys))
        now = datetime.now(UTC)
        if state.locked_until is not None and state.locked_until > now:
            raise LoginThrottledError(max(1, int((state.locked_until - now).total_seconds() + 0.999)))

    async def failed(self, keys: Sequence[tuple[str, int]]) -> None:
        """Count a failure against each (key, its threshold); a key at its threshold is locked."""
        for key, threshold in keys:
            failures = await self.repo.record_failure(key, window_seconds=self.policy.window_seconds)
            if failures >= threshold:
                seconds = self.policy.lock_seconds(failures, threshold)
                await self.repo.lock(key, datetime.now(UTC) + timedelta(seconds=seconds))

    async def succeeded(self, key: str) -> None:
        await self.repo.clear(key)

    async def prune(self) -> int:
        return await self.repo.prune(older_than_seconds=24 * 3600)
