"""Raw-message batches are bounded by count and by bytes, keep the order they are given, and never drop mail."""

from __future__ import annotations

from plmail.providers.imap.batches import BATCH_MESSAGES, batches


def test_small_mail_goes_fifty_at_a_time() -> None:
    uids = list(range(1, 121))
    runs = list(batches(uids, dict.fromkeys(uids, 3_000)))
    assert [len(r) for r in runs] == [BATCH_MESSAGES, BATCH_MESSAGES, 20]
    assert [u for r in runs for u in r] == uids


def test_large_mail_is_bounded_by_bytes() -> None:
    sizes = {1: 12, 2: 12, 3: 12, 4: 1, 5: 30, 6: 50}
    runs = list(batches([6, 5, 4, 3, 2, 1], sizes, budget=40))
    # 50 is over the budget on its own and travels alone; 30 + 1 fit; 12 + 12 + 12 fit, a fourth would not
    assert runs == [[6], [5, 4], [3, 2, 1]]
    assert all(sum(sizes[u] for u in r) <= 40 or len(r) == 1 for r in runs)


def test_the_default_budget_holds_for_scanned_attachments() -> None:
    uids = list(range(1, 51))
    runs = list(batches(uids, dict.fromkeys(uids, 20 * 1024 * 1024)))
    assert [len(r) for r in runs] == [1] * 50


def test_count_and_budget_both_apply_and_missing_sizes_count_as_nothing() -> None:
    assert list(batches([1, 2, 3, 4, 5], {1: 10}, count=2, budget=5)) == [[1], [2, 3], [4, 5]]
    assert list(batches([], {})) == []
    assert list(batches([7], {7: -1})) == [[7]]  # a nonsense size from the server still yields the message


def test_a_message_without_a_size_from_the_server_weighs_nothing() -> None:
    assert list(batches([1, 2, 3, 4], {}, count=10, budget=2)) == [[1, 2, 3, 4]]
