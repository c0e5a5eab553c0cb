"""The threading plan without a database: order independence, stages, the subject rescue, the cap."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from plmail.domain.enums import ThreadingMethod
from plmail.domain.threads import StoredThread, ThreadLookups
from plmail.mail.threader import ThreadCandidate, has_reply_prefix, normalize_subject, plan_threads

T0 = datetime(2026, 3, 1, tzinfo=UTC)
EMPTY = ThreadLookups({}, {}, {}, {}, {})


def cand(i: int, rfc: str | None, refs: Sequence[str] = (), *, key: str | None = None, subject: str = "Topic",
         sender: str = "a@x", to: Sequence[str] = ("b@x",), day: float = 0) -> ThreadCandidate:
    return ThreadCandidate(i, rfc, tuple(refs), key, subject, sender, frozenset([sender, *to]),
                           T0 + timedelta(days=day))


def partition(candidates: Sequence[ThreadCandidate], lookups: ThreadLookups = EMPTY) -> set[frozenset[str]]:
    plans = plan_threads(candidates, lookups)
    return {frozenset(str(candidates[i].rfc_id) for i in p.members) for p in plans}


def test_reply_prefixes_in_all_languages() -> None:
    for subject in ("Re: X", "RE : X", "Fwd:Fwd:X", "AW: Re: X", "Re[2]: X", "WG: X", "SV: X", "Antw: X",
                    "Doorst: X", "RIF: X", "TR: X", "VS: X", "Res: X"):
        assert has_reply_prefix(subject), subject
        assert normalize_subject(subject) == "x"
    for subject in ("Reminder: standup at 9", "Rewriting the parser", "Travel plans"):
        assert not has_reply_prefix(subject)


def test_the_same_tree_in_six_orders_gives_identical_threads() -> None:
    tree = [cand(0, "root"), cand(1, "a", ["root"]), cand(2, "b", ["root", "a"]),
            cand(3, "other"), cand(4, "c", ["other"]), cand(5, "d", ["root", "a", "b"])]
    expected = {frozenset({"root", "a", "b", "d"}), frozenset({"other", "c"})}
    orders = list(itertools.permutations(range(6)))[::120][:6]
    assert len(orders) == 6
    for order in orders:
        shuffled = [tree[i] for i in order]
        renumbered = [ThreadCandidate(n, c.rfc_id, c.references, c.provider_key, c.subject, c.sender,
                                      c.participants, c.occurred_at) for n, c in enumerate(shuffled)]
        assert partition(renumbered) == expected


def test_a_reply_stored_earlier_is_adopted_by_its_parent() -> None:
    stored = ThreadLookups(
        threads={7: StoredThread(7, None, 1, "topic", T0)}, by_provider_key={}, by_message_id={},
        replying_to={"parent": [7]}, by_subject={},
    )
    plans = plan_threads([cand(0, "parent")], stored)
    assert plans[0].survivor == 7 and plans[0].members == (0,)


def test_merging_keeps_the_older_thread() -> None:
    stored = ThreadLookups(
        threads={3: StoredThread(3, None, 2, "topic", T0), 9: StoredThread(9, None, 1, "topic", T0)},
        by_provider_key={}, by_message_id={"grandparent": [3]}, replying_to={"middle": [9]}, by_subject={},
    )
    [plan] = plan_threads([cand(0, "middle", ["grandparent"])], stored)
    assert (plan.survivor, plan.absorbed) == (3, (9,))


def test_non_reply_with_equal_subject_starts_its_own_thread() -> None:
    notices = [cand(i, f"n{i}", subject="Your order is on its way", day=i) for i in range(3)]
    assert len(plan_threads(notices, EMPTY)) == 3


def test_subject_fallback_needs_a_prefix_and_a_shared_participant() -> None:
    stored = ThreadLookups(
        threads={5: StoredThread(5, None, 1, "budget", T0, frozenset({"carol@x"}))},
        by_provider_key={}, by_message_id={}, replying_to={}, by_subject={"budget": [5]},
    )
    shared = cand(0, "r1", subject="Re: Budget", sender="dave@x", to=("carol@x",), day=2)
    [plan] = plan_threads([shared], stored)
    assert (plan.survivor, plan.method) == (5, ThreadingMethod.SUBJECT_FALLBACK)
    stranger = cand(0, "r2", subject="Re: Budget", sender="eve@x", to=("frank@x",), day=2)
    assert plan_threads([stranger], stored)[0].survivor is None
    too_late = cand(0, "r3", subject="Re: Budget", sender="dave@x", to=("carol@x",), day=45)
    assert plan_threads([too_late], stored)[0].survivor is None


def test_two_messages_of_one_provider_conversation_in_one_batch_make_one_thread() -> None:
    plans = plan_threads([cand(0, "g1", key="T-1"), cand(1, "g2", key="T-1"), cand(2, "g3", key="T-2")], EMPTY)
    assert sorted(p.members for p in plans) == [(0, 1), (2,)]
    assert all(p.method is ThreadingMethod.PROVIDER for p in plans)


def test_a_full_thread_takes_no_more_messages() -> None:
    full = ThreadLookups(threads={1: StoredThread(1, None, 1000, "storm", T0)}, by_provider_key={},
                         by_message_id={"dup@x": [1]}, replying_to={}, by_subject={})
    [plan] = plan_threads([cand(0, "new", ["dup@x"])], full)
    assert plan.survivor is None
