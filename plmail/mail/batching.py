"""Batches of raw mail bounded by bytes as well as by count.

A pipeline batch is held in memory whole (the raw bytes, their parse, the rows), and an archive or a provider
can hand over fifty scanned attachments as easily as fifty notes. Every path that gathers raw mail for the
pipeline (IMAP pages, Gmail fetch jobs, mbox and Maildir imports) closes a batch before it would pass
RAW_BATCH_BYTES, so a mailbox of large mail fits a small home server instead of failing and being retried
forever."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

RAW_BATCH_BYTES = 32 * 1024 * 1024

T = TypeVar("T")


class BoundedRun(Generic[T]):
    """Collects items into runs of at most `count` items and `budget` bytes; an item larger than the budget
    forms a run of its own. For items whose sizes become known one at a time (after fetching them)."""

    def __init__(self, count: int, budget: int = RAW_BATCH_BYTES) -> None:
        self.count = count
        self.budget = budget
        self._items: list[T] = []
        self._bytes = 0

    def add(self, item: T, size: int) -> list[T] | None:
        """Take the item; returns the run it closed when adding it to that run would pass a bound."""
        size = max(size, 0)
        closed = None
        if self._items and (len(self._items) >= self.count or self._bytes + size > self.budget):
            closed = self.rest()
        self._items.append(item)
        self._bytes += size
        return closed

    def rest(self) -> list[T]:
        """The open run (possibly empty); the next item starts a new one."""
        items, self._items, self._bytes = self._items, [], 0
        return items


def bounded_runs(items: Iterable[T], size_of: Callable[[T], int], *, count: int,
                 budget: int = RAW_BATCH_BYTES) -> Iterator[list[T]]:
    """Consecutive runs of `items`, in their order, of at most `count` items and `budget` bytes."""
    run: BoundedRun[T] = BoundedRun(count, budget)
    for item in items:
        closed = run.add(item, size_of(item))
        if closed:
            yield closed
    rest = run.rest()
    if rest:
        yield rest
