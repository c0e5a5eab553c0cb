"""Reading back the moments plmail and providers write as ISO 8601 text."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any


def parse_moment(value: Any) -> datetime | None:
    """An ISO 8601 timestamp (a trailing Z or none at all meaning UTC); None for anything else, so a damaged
    stored state reads as "never" instead of failing the job that reads it."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
