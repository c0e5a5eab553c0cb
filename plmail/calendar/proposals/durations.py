"""Lengths a sentence writes ("2 Stunden", "an hour", "90 min"): an event's stated duration."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

MIN_DURATION = timedelta(minutes=5)
MAX_DURATION = timedelta(hours=12)


@dataclass(frozen=True, slots=True)
class DurationMention:
    start: int
    end: int
    length: timedelta


_DURATION = re.compile(
    r"(?<![\w.,])(?:(?P<num>\d{1,3}(?:[.,]\d)?)\s?|(?P<word>eine\s+halbe|einer\s+halben|half\s+an|an|one|eine|einer|"
    r"ein|anderthalb|eineinhalb|zwei|drei|two|three)\s+)"
    r"(?P<unit>stunden|stunde|std\.?|hours|hour|hrs|hr|minuten|minute|min\.?|minutes|mins)(?![\w])",
    re.IGNORECASE,
)
_DURATION_EXCLUDED_BEFORE = re.compile(
    r"\b(?:in|within|innerhalb|vor|nach|after|alle|every|per|pro|je|seit|since|später|later)\s+$", re.IGNORECASE
)
_WORD_MINUTES = {
    "eine halbe": 30, "einer halben": 30, "half an": 30, "an": 60, "one": 60, "eine": 60, "einer": 60, "ein": 60,
    "anderthalb": 90, "eineinhalb": 90, "zwei": 120, "drei": 180, "two": 120, "three": 180,
}  # fmt: skip


def find_durations(sentence: str) -> list[DurationMention]:
    """Lengths within a sane range; "in 2 Stunden" is a moment, not a length, and is skipped."""
    found: list[DurationMention] = []
    for m in _DURATION.finditer(sentence):
        if _DURATION_EXCLUDED_BEFORE.search(sentence, 0, m.start()):
            continue
        hours = m["unit"].lower().startswith(("st", "h"))
        if m["num"]:
            amount = float(m["num"].replace(",", "."))
            minutes = amount * 60 if hours else amount
        else:
            minutes = _WORD_MINUTES[" ".join(m["word"].lower().split())] if hours else 0
        length = timedelta(minutes=minutes)
        if MIN_DURATION <= length <= MAX_DURATION:
            found.append(DurationMention(m.start(), m.end(), length))
    return found
