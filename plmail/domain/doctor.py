"""What `plmail doctor` reports: one finding per check, at a level that says whether something needs fixing.
Here so a provider plugin can bring its own checks of an account's servers without importing ops."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Level(StrEnum):
    OK = "ok"
    INFO = "info"  # optional, absent: nothing to fix
    WARN = "warn"  # works, but deserves a look
    FAIL = "FAIL"  # needs the fix shown


@dataclass(frozen=True, slots=True)
class Finding:
    check: str
    level: Level
    detail: str
    fix: str = ""
