"""Real third-party mail through the pipeline: nothing crashes a batch, and threads follow In-Reply-To."""

from __future__ import annotations

from plmail.domain.ingest import IngestedMessage
from tests.integration.mail.conftest import Mailbox
from tests.support.mail import corpus_message_files, spamassassin


async def _ingest_all(mailbox: Mailbox, items: list[IngestedMessage], batch: int = 250) -> tuple[int, int, int]:
    stored = skipped = duplicates = 0
    for start in range(0, len(items), batch):
        result = await mailbox.services.pipeline.ingest(items[start:start + batch])
        stored += result.stored
        skipped += len(result.skipped)
        duplicates += result.duplicates
    return stored, skipped, duplicates


async def test_every_corpus_message_is_stored_or_skipped_with_a_reason(mailbox: Mailbox) -> None:
    files = corpus_message_files()
    items = [mailbox.message(path.read_bytes(), source_ref=str(path)) for path in files]
    spam = [mailbox.message(raw, source_ref=name) for name, raw in spamassassin("spam", "spam_2")]
    stored, skipped, duplicates = await _ingest_all(mailbox, items + spam)
    total = len(items) + len(spam)
    print(f"\ncorpus: {total} messages, stored {stored}, skipped {skipped}, duplicates {duplicates}")
    assert stored + skipped + duplicates == total
    reasons = await mailbox.services.db.fetch("SELECT source_ref, reason FROM ingest_skip")
    assert len(reasons) == skipped and all(r["reason"] for r in reasons)
    assert stored >= total * 0.99  # broken MIME still parses to something worth keeping
    orphans = await mailbox.services.db.fetchval("SELECT count(*) FROM message WHERE thread_id IS NULL")
    assert orphans == 0


async def test_spamassassin_replies_land_in_the_thread_of_the_message_they_answer(mailbox: Mailbox) -> None:
    items = [mailbox.message(raw, source_ref=name) for name, raw in spamassassin("easy_ham", "easy_ham_2", "hard_ham")]
    await _ingest_all(mailbox, items, batch=500)
    rows = await mailbox.services.db.fetch(
        """SELECT r.id, r.thread_id AS reply_thread, p.thread_id AS parent_thread
             FROM message r JOIN message p
               ON p.account_id = r.account_id AND p.rfc_message_id = r.in_reply_to ->> 0 AND p.id <> r.id"""
    )
    resolvable = len({r["id"] for r in rows})
    together = len({r["id"] for r in rows if r["reply_thread"] == r["parent_thread"]})
    print(f"\nSpamAssassin ham: {together}/{resolvable} resolvable In-Reply-To share the parent's thread")
    assert resolvable > 1000
    assert together == resolvable
    # ... and not because everything collapsed into a few giant threads.
    sizes = await mailbox.services.db.fetch("SELECT message_count FROM message_thread")
    assert len(sizes) > 1500 and max(r["message_count"] for r in sizes) < 150
