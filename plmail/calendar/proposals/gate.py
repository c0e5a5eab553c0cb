"""Stage one: does this text have the shape of a date at all?"""

from __future__ import annotations

import re
from enum import Enum

from plmail.calendar.proposals.vocabulary import (
    LETTER,
    MONTH_ABBREVIATIONS,
    MONTHS,
    MONTHS_NEEDING_A_NUMBER,
    ORDINAL_WORDS,
    WEEKDAY_ABBREVIATIONS,
    WEEKDAYS,
    alternation,
)


class GateAnswer(Enum):
    MAYBE = "maybe"
    CERTAINLY_NOT = "certainly_not"


_DAY = r"(?:0?[1-9]|[12]\d|3[01])"
_MONTH = r"(?:0?[1-9]|1[0-2])"


# Built once, at import: mutmut switches a mutant on only after that, so it cannot test this code (the gate's
# tests pin the pattern it builds instead).
def _build_pattern() -> re.Pattern[str]:  # pragma: no mutate block
    names = set(WEEKDAYS) | (set(MONTHS) - MONTHS_NEEDING_A_NUMBER)
    names |= {"heute", "morgen", "uebermorgen", "übermorgen", "today", "tomorrow", "tonight", "noon"}
    ascii_start = alternation(w for w in names if w[0].isascii())
    umlaut_start = alternation(w for w in names if not w[0].isascii())
    with_number = alternation(MONTHS_NEEDING_A_NUMBER | set(MONTH_ABBREVIATIONS))
    any_month = alternation(set(MONTHS) | set(MONTH_ABBREVIATIONS))
    spoken_ordinals = alternation(ORDINAL_WORDS).replace("\\ ", r"\s+")
    # One leading \b for every ASCII branch, so a position inside a word fails after a single test.
    ascii_branches = [
        rf"(?:{ascii_start})\b",
        rf"(?:{with_number})\.?\s+\d",
        rf"(?:{alternation(MONTHS_NEEDING_A_NUMBER)})\s+(?:{spoken_ordinals})\b",  # "march eighteenth"
        rf"\d{{1,2}}(?:\.|st|nd|rd|th)?\s*(?:of\s+)?(?:{any_month})\b",
        rf"(?:{alternation(WEEKDAY_ABBREVIATIONS)})(?:\.,?|,)\s*\d",
        r"this\s+(?:morning|afternoon|evening)\b",
        rf"(?:{alternation(WEEKDAYS)})(?:morgen|vormittag|mittag|nachmittag|abend|nacht)\b",  # "Freitagmittag"
        rf"(?:next|n(?:ä|ae)chste[nmrs]?|kommende[nmrs]?)\s+(?:week|weekend|woche|wochenende)(?![{LETTER}])",
        # Numeric shapes carry the parser's own edges and ranges: "0.59.1", "1.91.2" and the "/2002/10/08"
        # of a URL are never read as dates, so they are no reason to look.
        rf"(?<![\w.,/+\-]){_DAY}\.\s?{_MONTH}\.(?:\s?(?:19|20)\d\d|\d\d)?(?!\d)",
        r"\d{4}-\d{2}-\d{2}",
        rf"(?<![\w./\-]){_MONTH}/{_DAY}(?:/\d{{2,4}})?(?![\w/])",
        rf"(?<![\w./\-]){_DAY}/{_MONTH}(?:/\d{{2,4}})?(?![\w/])",
        rf"(?:am|den|dem|zum|on|the)\s+{_DAY}\.{_MONTH}",
        r"\d{1,2}:\d{2}",
        r"\d{1,2}(?:[.:]\d{2})?\s?(?:uhr|h\b|o'?clock|[ap]\.?\s?m\b)",
        r"(?:um|at|gegen)\s+\d{1,2}\b",
    ]
    # No leading \b before an umlaut: PCRE's \b without UCP is ASCII-only and would never fire on "ü";
    # the lookbehind says the same thing in a form that survives a switch to ASCII matching.
    umlaut_branch = rf"(?<![{LETTER}])(?:{umlaut_start})(?![{LETTER}])"
    return re.compile(rf"\b(?:{'|'.join(ascii_branches)})|{umlaut_branch}|@\s*\d")


class DateShapeGate:
    """One regular expression over text already in memory: no query, no disk, no network.

    Over-permissive by design: a gate that tried to be exact would be the parser written twice, the two
    would drift, and the failure would be invisible (a readable message thrown away shows nothing).
    It answers "maybe" or "certainly not", and only "certainly not" is acted on.
    German and English share one alternation because a user's mail is both and no message says which.
    Names are written out in full: the stems `(?:mon|die|sam|mai)[a-zäöü]*` of a first version matched
    "money", "die", "same" and "mail", which are in nearly every message, and so stopped being a gate.
    The proposer gives it the author's own text: a date in a quote is never proposed, so no reason to parse.
    The pattern is written in lower case and the text lowered once, which is cheaper than IGNORECASE.
    """

    pattern = _build_pattern()

    def answer(self, text: str) -> GateAnswer:
        return GateAnswer.MAYBE if self.admits(text) else GateAnswer.CERTAINLY_NOT

    def admits(self, text: str) -> bool:
        return self.pattern.search(text.lower()) is not None
