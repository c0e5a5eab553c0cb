"""Runs of raw mail bounded by count and bytes, whether sizes are known up front or one at a time."""

from __future__ import annotations

from plmail.mail.batching import BoundedRun, bounded_runs


def test_sizes_learned_one_at_a_time_close_a_run_before_it_passes_the_budget() -> None:
    run: BoundedRun[str] = BoundedRun(count=10, budget=100)
    closed = [run.add(name, size) for name, size in (("a", 40), ("b", 50), ("c", 20), ("d", 150), ("e", 5))]
    # c would make 110: a and b close; d is over the budget on its own: c closes, d stands alone
    assert closed == [None, None, ["a", "b"], ["c"], ["d"]]
    assert run.rest() == ["e"]
    assert run.rest() == []  # taken: the next item starts afresh


def test_the_count_bounds_small_items_and_nothing_is_lost() -> None:
    items = [(n, 1) for n in range(7)]
    runs = list(bounded_runs(items, lambda item: item[1], count=3, budget=1_000))
    assert [[n for n, _ in run] for run in runs] == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(bounded_runs([], len, count=3)) == []


def test_a_run_may_fill_its_budget_exactly_and_empty_mail_weighs_nothing() -> None:
    run: BoundedRun[str] = BoundedRun(count=10, budget=100)
    assert [run.add(name, 50) for name in ("a", "b")] == [None, None]  # 100 bytes is within 100
    assert run.add("c", 1) == ["a", "b"]
    assert run.rest() == ["c"]
    assert [run.add(name, 50) for name in ("d", "e")] == [None, None]  # a taken run starts again from nothing
    weightless: BoundedRun[str] = BoundedRun(count=10, budget=1)
    assert [weightless.add(name, size) for name, size in (("x", 0), ("y", -5), ("z", 0))] == [None, None, None]
    assert weightless.rest() == ["x", "y", "z"]
