"""Ownership of the data directory: one serving plmail process at a time.

The lock is an flock on ``plmail.lock``. The kernel drops it when the holder dies, even by
``kill -9``, so a crashed process never leaves a lock that has to be cleared by hand.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType

from plmail.domain.errors import DataDirInUseError

LOCK_NAME = "plmail.lock"


class DataDirLock:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.path = data_dir / LOCK_NAME
        self._fd: int | None = None

    def _holder_pid(self) -> str:
        try:
            return self.path.read_text(encoding="utf-8").strip() or "unknown"
        except OSError:
            return "unknown"

    def acquire(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise DataDirInUseError(
                f"Another plmail process (pid {self._holder_pid()}) is already using the data directory "
                f"{self.data_dir}. Stop it first, or set PLMAIL_DATA_DIR to a different directory."
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        os.fsync(fd)
        self._fd = fd

    def is_held_elsewhere(self) -> bool:
        """True when some other process holds the lock right now (checked without taking it)."""
        if not self.path.exists():
            return False
        fd = os.open(self.path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    def release(self) -> None:
        if self._fd is None:
            return
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> DataDirLock:
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
