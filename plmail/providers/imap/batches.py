"""How many raw messages travel together: one UID FETCH, one pipeline batch, one import page.

The seed's batches are fifty messages. Fifty messages can also be fifty scanned attachments of 20 MB each; a
batch is held in memory whole, so it is bounded by bytes as well, or a folder of large mail would take more
memory than a small home server has, fail, and be retried forever. IMAP knows the sizes before fetching."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from plmail.mail.ingest import RAW_BATCH_BYTES

BATCH_MESSAGES = 50
BATCH_BYTES = RAW_BATCH_BYTES


def batches(uids: Sequence[int], sizes: Mapping[int, int], *, count: int = BATCH_MESSAGES,
            budget: int = BATCH_BYTES) -> Iterator[list[int]]:
    """Consecutive runs of `uids`, in the order given, of at most `count` messages and `budget` bytes by the
    server's RFC822.SIZE; a message larger than the budget travels alone."""
    run: list[int] = []
    held = 0
    for uid in uids:
        size = max(sizes.get(uid, 0), 0)
        if run and (len(run) >= count or held + size > budget):
            yield run
            run, held = [], 0
        run.append(uid)
        held += size
    if run:
        yield run
