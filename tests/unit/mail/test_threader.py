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


def _stored(tid: int, subject: str = "topic", *, key: str | None = None, last: datetime | None = T0,
            senders: Sequence[str] = ("a@x",), count: int = 1) -> StoredThread:
    return StoredThread(tid, key, count, subject, last, frozenset(senders))


def _plan(candidates: Sequence[ThreadCandidate], lookups: ThreadLookups = EMPTY) -> list[tuple[tuple[int, ...],
                                                                                               int | None,
                                                                                               ThreadingMethod]]:
    return [(p.members, p.survivor, p.method) for p in plan_threads(candidates, lookups)]


def test_an_empty_subject_normalises_to_nothing() -> None:
    assert normalize_subject(None) == "" and normalize_subject("") == ""


def test_a_provider_key_joins_the_stored_conversation_with_that_key() -> None:
    lookups = ThreadLookups({5: _stored(5, key="T1")}, {"T1": 5}, {}, {}, {})
    assert _plan([cand(0, "g1", key="T1"), cand(1, "g2", key="T2")], lookups) == [
        ((0,), 5, ThreadingMethod.PROVIDER), ((1,), None, ThreadingMethod.PROVIDER)]


def test_a_message_naming_itself_among_its_references_still_follows_the_others() -> None:
    assert partition([cand(0, "root"), cand(1, "self", ["self", "root"])]) == {frozenset({"root", "self"})}


def test_a_message_that_is_no_reply_is_threaded_by_nothing() -> None:
    assert _plan([cand(0, "n", subject="Order shipped")]) == [((0,), None, ThreadingMethod.NONE)]
    assert _plan([cand(0, "e", subject="Re: ")]) == [((0,), None, ThreadingMethod.NONE)]  # nothing to match
    assert _plan([cand(0, "r", subject="Re: Topic")]) == [((0,), None, ThreadingMethod.NONE)]  # nothing found
    undated = ThreadCandidate(0, "u", (), None, "Re: Topic", "a@x", frozenset({"a@x"}), None)
    assert _plan([undated]) == [((0,), None, ThreadingMethod.NONE)]
    blank = [cand(0, "x", subject="", sender="a@x", to=("b@x",)), cand(1, "y", subject="Re: ", sender="b@x",
                                                                        to=("a@x",), day=1)]
    assert [p[0] for p in _plan(blank)] == [(0,), (1,)]  # an empty subject matches nothing


def test_a_long_chain_in_one_batch_is_one_conversation() -> None:
    chain = [cand(0, "m0")] + [cand(i, f"m{i}", [f"m{i - 1}"]) for i in range(1, 12)]
    assert partition(chain[::-1]) == {frozenset(f"m{i}" for i in range(12))} == partition(chain)


def test_the_subject_rescue_window_includes_its_edges_and_skips_unfit_threads() -> None:
    """Stored threads with the reply's subject: within 30 days either side (edges included), sharing a sender."""
    reply = cand(0, "r", subject="Re: Topic", sender="b@x", to=("a@x",), day=40)
    window = timedelta(days=30)
    for last, joined in ((reply.occurred_at - window, True), (reply.occurred_at - window - timedelta(seconds=1),
                                                              False),
                         (reply.occurred_at + window, True), (reply.occurred_at + window + timedelta(seconds=1),
                                                              False)):
        lookups = ThreadLookups({7: _stored(7, last=last)}, {}, {}, {}, {"topic": [7]})
        assert _plan([reply], lookups)[0][1] == (7 if joined else None), last
    # each unfit thread is passed over (undated, too old, too new, no shared sender, full); the next is taken
    day = timedelta(days=1)
    unfit = {1: _stored(1, last=None), 2: _stored(2, last=T0), 3: _stored(3, last=T0 + 71 * day),
             4: _stored(4, last=T0 + 30 * day, senders=("z@x",)), 5: _stored(5, last=T0 + 35 * day, count=1000)}
    for tid in unfit:
        order = [tid, 9]
        lookups = ThreadLookups({**unfit, 9: _stored(9, last=T0 + 30 * day)}, {}, {}, {}, {"topic": order})
        assert _plan([reply], lookups) == [((0,), 9, ThreadingMethod.SUBJECT_FALLBACK)], tid


def test_the_subject_rescue_takes_the_newest_thread_and_the_lower_id_on_a_tie() -> None:
    reply = cand(0, "r", subject="Re: Topic", sender="b@x", to=("a@x",), day=10)
    newest = ThreadLookups({1: _stored(1, last=T0), 2: _stored(2, last=T0 + timedelta(days=5))}, {}, {}, {},
                           {"topic": [1, 2]})
    assert _plan([reply], newest)[0][1] == 2
    tie = ThreadLookups({9: _stored(9), 3: _stored(3), 6: _stored(6)}, {}, {}, {}, {"topic": [9, 3, 6]})
    assert _plan([reply], tie)[0][1] == 3


def test_the_subject_rescue_within_a_batch() -> None:
    """An earlier message of the batch with the subject joins when one side names the other's sender."""
    original = cand(0, "o", subject="Topic", sender="a@x", to=("b@x",), day=0)
    reply = cand(1, "r", subject="Re: Topic", sender="b@x", to=("c@x",), day=1)
    assert _plan([original, reply]) == [((0, 1), None, ThreadingMethod.SUBJECT_FALLBACK)]
    cc_only = cand(1, "r", subject="Re: Topic", sender="q@x", to=("a@x",), day=1)  # the reply names the sender
    assert _plan([original, cc_only])[0][0] == (0, 1)
    stranger = cand(1, "r", subject="Re: Topic", sender="q@x", to=("z@x",), day=1)
    assert [p[0] for p in _plan([original, stranger])] == [(0,), (1,)]
    # the edges of the window count; later mail, other subjects, provider mail and undated mail do not
    edge = cand(0, "o", subject="Topic", sender="a@x", to=("b@x",), day=-29)
    assert _plan([edge, cand(1, "r", subject="Re: Topic", sender="b@x", to=("a@x",), day=1)])[0][0] == (0, 1)
    same_moment = cand(0, "o", subject="Topic", sender="a@x", day=1)
    assert _plan([same_moment, cand(1, "r", subject="Re: Topic", sender="b@x", to=("a@x",), day=1)])[0][0] == (0, 1)
    later = cand(3, "l", subject="Topic", sender="a@x", day=2)
    skipped = [cand(0, "k", subject="Topic", sender="a@x", key="G1"),
               ThreadCandidate(1, "u", (), None, "Topic", "a@x", frozenset({"a@x"}), None),
               cand(2, "x", subject="Other", sender="a@x"), later,
               cand(4, "r", subject="Re: Topic", sender="b@x", to=("a@x",), day=1)]
    assert [p[0] for p in _plan(skipped)] == [(0,), (1,), (2,), (3,), (4,)]
    fits_after_unfit = [*skipped[:4], cand(4, "o4", subject="Topic", sender="a@x", day=0),
                        cand(5, "r", subject="Re: Topic", sender="b@x", to=("a@x",), day=1)]
    assert ((4, 5), None, ThreadingMethod.SUBJECT_FALLBACK) in _plan(fits_after_unfit)


def test_one_provider_conversation_of_any_size_in_one_batch_is_one_thread() -> None:
    """No provider-thread cache (the seed's, capped at 500) is needed: the batch is planned at once, so the
    six hundredth message of a conversation finds it as surely as the second."""
    batch = [cand(i, f"g{i}", key="T-big") for i in range(600)]
    plans = plan_threads(batch, EMPTY)
    assert [(len(p.members), p.provider_key, p.method) for p in plans] == [(600, "T-big", ThreadingMethod.PROVIDER)]
