"""The one sign-in throttle, for web passwords, second-factor codes and JMAP app passwords alike.

It slows guessing down without handing anyone a way to lock a user out:

- Failures count per (address, client address): after a few, each further attempt from that pair waits a
  delay that doubles up to a ceiling. Someone guessing from elsewhere slows only themselves.
- Failures count per client address too, across all addresses (credential stuffing); only failures count, so a
  proxy that many people sign in through is not slowed by their successes. Failures for addresses no user has
  count apart from those for real users' addresses, and their wait is soft: the right password of a real user
  still gets in from there (so made-up addresses tried from a household's shared address lock nobody out), while
  everything else waits, the same for known and unknown addresses (no hint which addresses exist).
- A browser that signed in before (a trusted device, the device cookie) never waits: the right password from it
  is always checked. Its own wrong guesses count against the device, and too many make it an ordinary client.
- A valid app password is never refused: app passwords are 256 random bits, so the throttle only slows down
  requests that carry a wrong one.

Second-factor codes count per user, from every address and browser alike, never cleared by a right password
(else password and code guessing would alternate freely): a few per sign-in attempt, after which the password is
asked again, and a few more per hour, after which no code is checked until the hour is over.

Each kind of sign-in (web, jmap) keeps its own counters, so a phone with a revoked app password cannot slow
its owner's web sign-in down.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from plmail.db.database import Database
from plmail.db.repos.users import LoginThrottleRepository
from plmail.domain.errors import LoginThrottledError, SecondFactorAttemptSpentError, SecondFactorLockedError
from plmail.domain.models import ThrottleState

SignInKind = Literal["web", "jmap"]


@dataclass(frozen=True, slots=True)
class ThrottlePolicy:
    window_seconds: int = 15 * 60
    pair_threshold: int = 5  # failures of one address from one client before each further attempt waits
    client_threshold: int = 20  # failures from one client address, across all addresses it tries
    device_threshold: int = 10  # wrong guesses from a trusted device before it is trusted no more
    base_lock_seconds: int = 30
    max_lock_seconds: int = 15 * 60
    codes_per_attempt: int = 5  # wrong codes after one right password before the password is asked again
    codes_per_user: int = 20  # wrong codes per user within `code_window_seconds`, from anywhere
    code_window_seconds: int = 3600

    def lock_seconds(self, failures: int, threshold: int) -> int:
        return int(min(self.base_lock_seconds * 2 ** max(failures - threshold, 0), self.max_lock_seconds))


@dataclass(frozen=True, slots=True)
class Attempt:
    """Who is trying: the address they name (or None), the client address, the trusted device they carry."""

    kind: SignInKind
    address: str | None
    client: str
    device_id: int | None = None
    known: bool = True  # the address is a user's (False: made up, or mistyped)

    @property
    def keys(self) -> list[tuple[str, str]]:
        """(key, which threshold) for an attempt that is not from a trusted device."""
        if not self.known:
            return [(f"{self.kind}:pair:{self.address}|{self.client}", "pair"),
                    (f"{self.kind}:unknown:{self.client}", "unknown")]
        keys = [(f"{self.kind}:client:{self.client}", "client")]
        if self.address:
            keys.insert(0, (f"{self.kind}:pair:{self.address}|{self.client}", "pair"))
        return keys

    @property
    def unknown_key(self) -> str:
        """Failures for made-up addresses from this client: a wait that a real user's right password passes."""
        return f"{self.kind}:unknown:{self.client}"

    @property
    def device_key(self) -> str | None:
        return f"device:{self.device_id}" if self.device_id is not None else None


class LoginThrottle:
    def __init__(self, db: Database, policy: ThrottlePolicy | None = None) -> None:
        self.repo = LoginThrottleRepository(db)
        self.policy = policy or ThrottlePolicy()

    async def state(self, keys: Sequence[str]) -> ThrottleState:
        return await self.repo.state(list(keys))

    async def trusted(self, attempt: Attempt) -> bool:
        """Whether the attempt comes from a trusted device that has not guessed wrong too often."""
        if attempt.device_key is None:
            return False
        state = await self.repo.state([attempt.device_key])
        return state.failures < self.policy.device_threshold

    async def admit(self, attempt: Attempt) -> LoginThrottledError | None:
        """Raises LoginThrottledError while an attempt like this one has to wait; asked before any hashing.
        A trusted device never waits. Returns the soft wait of a client that tried made-up addresses, if any:
        the caller checks the password all the same and raises it only when that is wrong."""
        if await self.trusted(attempt):
            return None
        await self._refuse_while_waiting([key for key, which in attempt.keys if which != "unknown"])
        return await self._waiting([attempt.unknown_key])

    async def refuse_if_waiting(self, attempt: Attempt) -> None:
        """For credentials already found wrong (an app password): raise while the attempt's keys wait."""
        await self._refuse_while_waiting([key for key, _ in attempt.keys])

    async def _refuse_while_waiting(self, keys: list[str]) -> None:
        waiting = await self._waiting(keys)
        if waiting is not None:
            raise waiting

    async def _waiting(self, keys: list[str]) -> LoginThrottledError | None:
        state = await self.repo.state(keys)
        now = datetime.now(UTC)
        if state.locked_until is not None and state.locked_until > now:
            return LoginThrottledError(max(1, int((state.locked_until - now).total_seconds() + 0.999)))
        return None

    async def failed(self, attempt: Attempt) -> None:
        """Count a wrong password or code: against the device when it is trusted, else against the pair and the
        client address, which then wait for a time that doubles with every further failure."""
        if await self.trusted(attempt):
            assert attempt.device_key is not None
            await self.repo.record_failure(attempt.device_key, window_seconds=self.policy.window_seconds)
            return
        thresholds = {"pair": self.policy.pair_threshold, "client": self.policy.client_threshold,
                      "unknown": self.policy.client_threshold}
        for key, which in attempt.keys:
            failures = await self.repo.record_failure(key, window_seconds=self.policy.window_seconds)
            threshold = thresholds[which]
            if failures >= threshold:
                seconds = self.policy.lock_seconds(failures, threshold)
                await self.repo.lock(key, datetime.now(UTC) + timedelta(seconds=seconds))

    async def succeeded(self, attempt: Attempt) -> None:
        """The pair and the device start over; the client address's count stays (it counts failures only)."""
        for key, which in attempt.keys:
            if which == "pair":
                await self.repo.clear(key)
        if attempt.device_key is not None:
            await self.repo.clear(attempt.device_key)

    # -- second-factor codes -----------------------------------------------------------------------------

    @staticmethod
    def _code_keys(user_id: int, sign_in_attempt: str) -> tuple[str, str]:
        return f"web:code-user:{user_id}", f"web:code-attempt:{sign_in_attempt}"

    async def admit_code(self, user_id: int, sign_in_attempt: str) -> None:
        """Before a code is checked: refused while the user's codes wait (SecondFactorLockedError), or when this
        sign-in attempt has used its wrong codes up (SecondFactorAttemptSpentError). Whatever the browser."""
        per_user, per_attempt = self._code_keys(user_id, sign_in_attempt)
        state = await self.repo.state([per_user])
        if state.locked_until is not None and state.locked_until > datetime.now(UTC):
            raise SecondFactorLockedError(state.locked_until)
        if (await self.repo.state([per_attempt])).failures >= self.policy.codes_per_attempt:
            raise SecondFactorAttemptSpentError("Too many wrong codes. Enter your password again.")

    async def code_failed(self, user_id: int, sign_in_attempt: str) -> None:
        """Count a wrong code against the user (a wait until the hour's end once there were too many) and against
        this sign-in attempt (the password again once it has had its share)."""
        per_user, per_attempt = self._code_keys(user_id, sign_in_attempt)
        failures, started = await self.repo.record_failure_since(per_user,
                                                                 window_seconds=self.policy.code_window_seconds)
        if failures >= self.policy.codes_per_user:
            await self.repo.lock(per_user, started + timedelta(seconds=self.policy.code_window_seconds))
        attempt_failures = await self.repo.record_failure(per_attempt, window_seconds=self.policy.window_seconds)
        if failures >= self.policy.codes_per_user:
            raise SecondFactorLockedError(started + timedelta(seconds=self.policy.code_window_seconds))
        if attempt_failures >= self.policy.codes_per_attempt:
            raise SecondFactorAttemptSpentError("Too many wrong codes. Enter your password again.")

    async def count(self, key: str, *, window_seconds: int) -> int:
        """Count one event under `key` within a window (connection tests per user); returns the count so far."""
        return await self.repo.record_failure(key, window_seconds=window_seconds)

    async def prune(self) -> int:
        return await self.repo.prune(older_than_seconds=24 * 3600)
