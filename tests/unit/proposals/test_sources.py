"""EventSource: every member classified by hand, no fallthrough that a new member could inherit."""

from __future__ import annotations

import ast
import inspect
import textwrap

import pytest

from plmail.calendar.sources import EventSource

UNTRUSTED = {EventSource.LLM}
REWRITABLE_BY_MAIL = {EventSource.ICS, EventSource.STRUCTURED_DATA}


@pytest.mark.parametrize("source", list(EventSource))
def test_every_member(source: EventSource) -> None:
    assert source.is_trusted() is (source not in UNTRUSTED)
    assert source.may_be_rewritten_by_mail() is (source in REWRITABLE_BY_MAIL)


def test_the_members_and_their_stored_values() -> None:
    assert {s.value for s in EventSource} == {
        "manual", "accepted_proposal", "ics", "structured_data", "llm", "remote_sync",
    }  # fmt: skip


def test_an_accepted_proposal_is_not_manual_and_stays_what_the_person_decided() -> None:
    assert len({EventSource.ACCEPTED_PROPOSAL, EventSource.MANUAL}) == 2  # never folded into one
    assert EventSource.ACCEPTED_PROPOSAL.is_trusted()
    assert not EventSource.ACCEPTED_PROPOSAL.may_be_rewritten_by_mail()


@pytest.mark.parametrize("method", [EventSource.is_trusted, EventSource.may_be_rewritten_by_mail])
def test_the_decision_is_an_exhaustive_match_without_a_wildcard(method: object) -> None:
    tree = ast.parse(textwrap.dedent(inspect.getsource(method)))  # type: ignore[arg-type]
    matches = [node for node in ast.walk(tree) if isinstance(node, ast.Match)]
    assert len(matches) == 1
    for case in matches[0].cases:
        assert not (isinstance(case.pattern, ast.MatchAs) and case.pattern.pattern is None), "a `case _` default"
        assert case.guard is None
    named = {
        node.attr for case in matches[0].cases for node in ast.walk(case.pattern) if isinstance(node, ast.Attribute)
    }
    assert named == {member.name for member in EventSource}
    assert any(isinstance(n, ast.Call) and getattr(n.func, "id", "") == "assert_never" for n in ast.walk(tree))
