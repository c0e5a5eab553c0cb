"""What threading plans from and with: the stored threads a batch may join, and the reply-prefix vocabulary
that the threader (in Python) and the stored subject normalisation (in SQL) must share."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

# One pattern for both places that strip reply prefixes: a subject normalised in the database must equal the
# one the threader computes, or the subject fallback never finds its thread.
REPLY_PREFIX_PATTERN = r"^\s*((re|fwd|fw|aw|wg|antw|sv|vs|res|rif|tr|doorst)\s*(\[\d+\])?\s*:\s*)+"


@dataclass(frozen=True, slots=True)
class StoredThread:
    id: int
    provider_key: str | None
    message_count: int
    normalized_subject: str
    last_message_at: datetime | None
    senders: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class ThreadLookups:
    """What the database already knows, fetched once for the whole batch."""

    threads: Mapping[int, StoredThread]
    by_provider_key: Mapping[str, int]
    by_message_id: Mapping[str, Sequence[int]]  # Message-ID of stored mail -> its thread ids
    replying_to: Mapping[str, Sequence[int]]  # Message-ID -> threads of stored mail that reply to it
    by_subject: Mapping[str, Sequence[int]]  # normalised subject -> recent threads with it
