"""Email/query results remembered per query and state.

A phone asks for the same mailbox page again and again between changes; collapsing threads and
counting them cost a scan each time. The key holds the Email (and, where threads matter, Thread)
state read before the query, so the first change makes every remembered result unreachable.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, field

MAX_ENTRIES = 128


@dataclass(slots=True)
class ScanState:
    """How far a query's results have been read, in order (one email per thread when collapsing)."""

    ids: list[int] = field(default_factory=list)
    index: dict[int, int] = field(default_factory=dict)  # email id -> position in ids
    threads: set[int] = field(default_factory=set)
    offset: int = 0  # rows read from the database so far
    done: bool = False
    total: int | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # one reader extends a scan at a time

    def add(self, email_id: int, thread: int, collapse: bool) -> None:
        if collapse:
            if thread in self.threads:
                return
            self.threads.add(thread)
        self.index[email_id] = len(self.ids)
        self.ids.append(email_id)


class ResultCache:
    def __init__(self, size: int = MAX_ENTRIES) -> None:
        self.size = size
        self._entries: OrderedDict[Hashable, ScanState] = OrderedDict()

    def entry(self, key: Hashable) -> ScanState:
        found = self._entries.get(key)
        if found is None:
            found = self._entries[key] = ScanState()
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        else:
            self._entries.move_to_end(key)
        return found
