"""Clocks for the fakes: wall time, or a manual clock a test moves forward.

Everything time-dependent in a fake (quota windows, throttling windows, token lifetimes, delta link
lifetimes, Retry-After values) reads a `Clock`, so a test can cross a 60-second quota window by
calling `clock.advance(60)` instead of sleeping. A clock returns seconds since the Unix epoch.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol


class Clock(Protocol):
    def __call__(self) -> float: ...


class SystemClock:
    """Real time (`time.time()`)."""

    def __call__(self) -> float:
        return time.time()


class ManualClock:
    """A clock that only moves when told to; thread-safe (the fake server reads it from its own thread)."""

    def __init__(self, start: float = 1_780_000_000.0) -> None:
        self._now = start
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> float:
        with self._lock:
            self._now += seconds
            return self._now

    def set(self, now: float) -> None:
        with self._lock:
            self._now = now
