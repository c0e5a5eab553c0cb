"""A day a sentence names, as every day finder yields it, and the calendar arithmetic the finders share."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from enum import Enum

from plmail.calendar.proposals.vocabulary import ORDINAL_WORDS, DayPart, alternation

# "first", "twenty second", "erste": an ordinal day written out, its words apart by any space.
ORDINAL_PATTERN = alternation(ORDINAL_WORDS).replace("\\ ", r"\s+")


class DayKind(Enum):
    EXPLICIT = "explicit"  # a calendar date: 4.8., 2026-08-04, 4. August
    RELATIVE = "relative"  # heute, morgen, übermorgen, today, tomorrow
    WEEKDAY = "weekday"  # Freitag, next Friday, Dienstag nächste Woche


@dataclass(frozen=True, slots=True)
class DayMention:
    start: int
    end: int
    kind: DayKind
    day: date | None  # None: recognised but refused (impossible, ambiguous, in the past by wording)
    part: DayPart | None = None
    needs_clock: bool = False  # a shape that is only a date when a time stands beside it ("am 20.07 um 9")
    clock: tuple[int, int] | None = None  # ISO 8601 "2026-08-04T14:30" carries its own time
    # The message's own weekday, bare ("Samstag um 15 Uhr?" written on a Saturday): next week's once the
    # time it is joined to has passed when the message was written; while that time is ahead, unclear.
    if_passed: date | None = None
    last_day: date | None = None  # a range of days ("22-23 Feb", "26.–28. Oktober"): the range's last day


def day_number(m: re.Match[str]) -> int:
    return int(m["d"]) if m["d"] else ORDINAL_WORDS[" ".join(m["dw"].lower().split())]


def day_of_month(day: int, weekday: int, reference: date, past_tense: bool) -> date | None:
    """ "Friday the 26th": the next 26th from the message day on, and only if it is a Friday."""
    if past_tense:
        return None
    found = valid_date(reference.year, reference.month, day)
    if found is None or found < reference:
        year, month = (reference.year + 1, 1) if reference.month == 12 else (reference.year, reference.month + 1)
        found = valid_date(year, month, day)
    return found if found is not None and found.weekday() == weekday else None


def valid_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None
