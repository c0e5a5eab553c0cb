"""DateShapeGate: "maybe" for every date shape we read, "certainly not" for everyday words."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from plmail.calendar.proposals import DateShapeGate, DetectionRequest, DeterministicDateDetector, GateAnswer
from tests.unit.proposals.test_sentence_table import ROWS

GATE = DateShapeGate()


@pytest.mark.parametrize(
    "text",
    [
        # the stems of the first version matched these, and so nearly every message
        "Show me the money.",
        "Die Mail ist angekommen, die Antwort auch.",
        "Same as last time, see the mail below.",
        "Mails, Samstagsmarkt, Sonntagsbrötchen, Freitagsrunde",
        "Montags und dienstags geschlossen.",
        "Mondays are hard.",
        "You may want to march on.",
        "Maike and Marchetti met Sunny in Mailand.",
        # numbers that are no date or time shape
        "Version 0.59.1 and 1.91.2.1 are out.",
        "See http://example.org/archives/2002/10/08.html for details.",
        "Das kostet 14,99 Euro, also 1.234 Stück.",
        "IBAN DE89 3704 0044 0532 0130 00",
        "",
    ],
)
def test_certainly_not(text: str) -> None:
    assert GATE.answer(text) is GateAnswer.CERTAINLY_NOT
    assert not GATE.admits(text)


@pytest.mark.parametrize(
    "text",
    [
        "Dienstag", "am Dienstag", "Donnerstag?", "\"März\" war kalt", "(Übermorgen) passt",
        "—Dienstag geht", "…übermorgen", "Übermorgen!", "uebermorgen", "am 4. Mai", "4. August", "August 4th",
        "May 4", "4 May", "the 4th of March", "Jun 7", "7 jun.", "04.08.", "4.8.2026", "2026-08-04", "8/12",
        "am 20.07", "14:30", "14.30 Uhr", "2pm", "2 p.m.", "14 Uhr", "um 14", "at 9", "gegen 15", "heute", "morgen",
        "today", "tomorrow", "tonight", "next week", "nächste Woche", "kommenden Woche", "at noon", "@ 10",
        "Mi, 23.8", "this morning", "14april",
    ],
)  # fmt: skip
def test_maybe(text: str) -> None:
    assert GATE.answer(text) is GateAnswer.MAYBE


def test_umlaut_words_are_found_after_punctuation_and_at_the_start() -> None:
    for text in ("übermorgen", "Übermorgen", "x,übermorgen", "(übermorgen)", "„übermorgen“", "-Übermorgen"):
        assert GATE.admits(text), text
    assert not GATE.admits("gegenübermorgenrot")  # inside a word it is not the word


def test_the_gate_is_one_compiled_pattern_over_both_languages() -> None:
    source = DateShapeGate.pattern.pattern
    assert "dienstag" in source and "tuesday" in source
    assert "(?:mon|die|sam|mai)" not in source


def test_nothing_the_detector_reads_is_a_text_the_gate_skips() -> None:
    """Over-permissive means a superset: checked on our table with the detector's own sentence skip off."""
    detector = DeterministicDateDetector(skip_shapeless_sentences=False)
    sent = datetime(2026, 8, 3, 9, 0, tzinfo=ZoneInfo("Europe/Berlin"))
    for row in ROWS:
        read = detector.detect(DetectionRequest(row.text, "", sent, "Europe/Berlin", row.language))
        if read:
            assert GATE.admits(row.text), row.text
