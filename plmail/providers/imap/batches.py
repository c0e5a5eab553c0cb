"""How many raw messages travel together over IMAP: one UID FETCH, one pipeline batch, one import page.

The seed's fifty, and at most RAW_BATCH_BYTES by the server's RFC822.SIZE (see `plmail.mail.batching`); IMAP
knows the sizes before fetching, so a batch is bounded before a byte of it is read."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from plmail.mail.batching import RAW_BATCH_BYTES, bounded_runs

BATCH_MESSAGES = 50
BATCH_BYTES = RAW_BATCH_BYTES


def batches(uids: Sequence[int], sizes: Mapping[int, int], *, count: int = BATCH_MESSAGES,
            budget: int = BATCH_BYTES) -> Iterator[list[int]]:
    """Consecutive runs of `uids`, in the order given, of at most `count` messages and `budget` bytes by the
    server's sizes; a message larger than the budget travels alone."""
    return bounded_runs(uids, lambda uid: sizes.get(uid, 0), count=count, budget=budget)
