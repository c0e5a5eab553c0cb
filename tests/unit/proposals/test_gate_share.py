"""How much real mail gets past the gate: on SpamAssassin ham, well below half must."""

from __future__ import annotations

from pathlib import Path

import pytest

from plmail.calendar.proposals import DateShapeGate, EventProposer, Refusal, strip_quoted
from tests.unit.proposals import spamassassin

# "Well below half": the proposer runs the gate on the author's own text (quotes, forwards and signatures
# dropped first, since nothing in them is ever proposed); the raw body is printed for comparison.
MAX_SHARE = 0.40

pytestmark = pytest.mark.skipif(not spamassassin.CORPUS.exists(), reason="SpamAssassin corpus not found")


@pytest.fixture(scope="module")
def ham(tmp_path_factory: pytest.TempPathFactory) -> list[spamassassin.Ham]:
    files = spamassassin.unpack(tmp_path_factory.mktemp("spamassassin"))
    return [spamassassin.read(path) for path in files]


def test_gate_share_on_ham(ham: list[spamassassin.Ham]) -> None:
    gate = DateShapeGate()
    own = sum(gate.admits(strip_quoted(h.body)) for h in ham) / len(ham)
    raw = sum(gate.admits(h.body) for h in ham) / len(ham)
    print(f"\nSpamAssassin ham: {len(ham)} messages; passing the gate: {own:.1%} of the author's own text, "
          f"{raw:.1%} of the raw text/plain body")  # fmt: skip
    assert len(ham) == 4150
    assert own < MAX_SHARE
    assert own < raw


def test_the_proposer_reports_the_gate_for_gate_rejects(ham: list[spamassassin.Ham]) -> None:
    proposer = EventProposer()
    decisions = [proposer.decide(spamassassin.facts(h, as_delivered=False)) for h in ham[:400]]
    gate = DateShapeGate()
    for h, decision in zip(ham[:400], decisions, strict=True):
        if not gate.admits(strip_quoted(h.body)):
            assert decision.refusal is Refusal.NO_DATE_SHAPE


def test_nothing_crashes_and_list_mail_is_refused_as_delivered(ham: list[spamassassin.Ham]) -> None:
    proposer = EventProposer()
    decisions = [proposer.decide(spamassassin.facts(h, as_delivered=True)) for h in ham]
    refused = [d.refusal for d in decisions]
    assert refused.count(Refusal.BULK_HEADER) > len(ham) // 2  # list mail, as the corpus notes say
    listed = [h for h in ham if any(k.lower() == "list-id" for k in h.headers)]
    assert listed and all(proposer.decide(spamassassin.facts(h, as_delivered=True)).refusal is Refusal.BULK_HEADER
                          for h in listed)  # fmt: skip


def test_unpacked_into_a_temporary_directory(tmp_path: Path) -> None:
    files = spamassassin.unpack(tmp_path)
    assert files and all(tmp_path in f.parents for f in files)
