"""What every clock finder shares: the mention it yields and the rules that refuse one as a start."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta, tzinfo

from plmail.calendar.proposals.vocabulary import DayPart
from plmail.calendar.proposals.zones import Zone


@dataclass(frozen=True, slots=True)
class ClockMention:
    """A time as written. `fixed` says the hour needs no guessing (24-hour evidence or am/pm)."""

    start: int
    end: int
    hour: int
    minute: int
    fixed: bool
    length: timedelta | None = None  # a range's length ("14–16 Uhr"), so a later am/pm shift moves both ends
    zone: tzinfo | None = None
    zone_region: str | None = None  # "PST" written in July means Pacific time, which is then PDT: refused
    refused: bool = False  # read, but not as an event start: a deadline, a window, a zone we cannot resolve
    adjacent_only: bool = False  # a bare dotted "11.05" is a time only right after its day, else a number
    morning_default: bool = True  # without a part of day, 7 to 12 may be read as written (not after "at 8")
    adjacent_any_day: bool = False  # a bare "noon" or "1430" is a time only right after a day of any kind
    uhr: bool = False  # written with "Uhr" or "h", the German way of writing a clock reading
    minutes_written: bool = False  # "6:45", "6.45 Uhr": a reading off a clock or a timetable, not a round hour
    next_day: bool = False  # "07:35+1", as timetables write it: on the day after the date it is written with
    date_like: tuple[int, int] | None = None  # "Friday 7-6": two plain numbers that may be a month and a day
    evening_occasion: bool = False  # the sentence is about a dinner, drinks, a party: "7:30" there is not 07:30


@dataclass(frozen=True, slots=True)
class PartMention:
    start: int
    end: int
    part: DayPart


APPROX = r"(?:ca\.?|circa|zirka|etwa|ungefähr|approx\.?|approximately|around|about|gg\.?)"
GERMAN_AM_FOLLOWER = re.compile(
    r"\s*(?:\d|(?:montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag|nachmittag|vormittag|abend|morgen|"
    r"mittag|wochenende|tag|ende|anfang|ersten|nächsten|kommenden|selben|gleichen)\b)",
    re.IGNORECASE,
)
_EVENING_OCCASION = re.compile(
    r"\b(?:dinner|supper|drinks?|beers?|party|concert|gig|show|movie|film|theat(?:er|re)|bar|pub|club|dance|date"
    r"|abendessen|party|konzert|kino|theater|kneipe|bier|feier)\b",
    re.IGNORECASE,
)


def evening_occasion(sentence: str) -> bool:
    return _EVENING_OCCASION.search(sentence) is not None


def morning_after_at(hour: int, sentence: str) -> bool:
    """English "at 9" to "at 11", in digits, words or a phrase, is the morning unless the sentence is about an
    evening ("dinner tomorrow at 9"); "at 6" to "at 8" is breakfast as often as dinner."""
    return 9 <= hour <= 11 and _EVENING_OCCASION.search(sentence) is None


# An open end, a deadline or a clock phrase we do not read: "bis 15 Uhr", "by 2pm", "nach 14 Uhr",
# "20 minutes to 2pm", "halb 3".
_DEADLINE_BEFORE = re.compile(
    r"\b(?:bis|until|till|by|before|vor|spätestens|latest|nach|after|seit|since|frühestens|earliest|than|als|"
    r"halb|half|viertel|dreiviertel|(?:minutes?|minuten|mins?|quarter|\d+)\s+(?:to|past|nach|vor|before|after))"
    r"\s*:?\s+(?:zum\s+|um\s+|at\s+)?$"
    r"|\b(?:between|zwischen)\b[^.!?]{0,40}\b(?:and|und)\s+$",  # the far end of a window
    re.IGNORECASE,
)
# "um 9 oder 10 Uhr": the first of two times to choose from, kept so that its day sees both.
_ALTERNATIVE_AFTER = re.compile(r"\s*(?:oder|or|/)\s*\d", re.IGNORECASE)


def overlaps(start: int, end: int, taken: list[tuple[int, int]]) -> bool:
    return any(start < t_end and t_start < end for t_start, t_end in taken)


def written_meridiem(m: re.Match[str], sentence: str, prefix: str) -> str:
    """ "am" or "pm" as written, or "" (German "am" is a preposition after "um" or before a day: "um 3 am Montag")."""
    meridiem = (m["mer"] or "").lower().replace(".", "").replace(" ", "")
    if meridiem == "am" and (prefix in ("um", "gegen", "ab") or GERMAN_AM_FOLLOWER.match(sentence, m.end("mer"))):
        return ""
    return meridiem


def text_end(sentence: str, m: re.Match[str], group: str, kept: str) -> int:
    """Where the time's text ends: a German "am" read as a preposition ("um 3 am Montag") is not part of it."""
    if m[group] and not kept:
        return len(sentence[: m.start(group)].rstrip())
    return m.end()


# German "um" is also "by": "die Zahl stieg am Freitag um 3", "wir erhöhen um drei". Beside a verb of change a
# bare "um 3" is an amount, not a time.
_CHANGED_BY = re.compile(
    r"\b(?:stieg|stiegen|steigt|steigen|gestiegen|erhöh\w*|sank|sanken|sinkt|sinken|gesunken|senk\w*|gesenkt|"
    r"fiel|fielen|gefallen|wächst|wachsen|wuchs|wuchsen|gewachsen|reduzier\w*|verringer\w*|zugenommen|"
    r"abgenommen|nimmt|nahm|nahmen|verlänger\w*|verkürz\w*|kürz\w*|gekürzt)\b",
    re.IGNORECASE,
)


def changed_by(sentence: str, prefix: str) -> bool:
    """A bare "um N" in a sentence about a change by N."""
    return prefix == "um" and _CHANGED_BY.search(sentence) is not None


def deadline_before(sentence: str, start: int) -> bool:
    return _DEADLINE_BEFORE.search(sentence, 0, start) is not None


def refused_as_start(sentence: str, m: re.Match[str], zone: Zone) -> bool:
    """A zone we cannot resolve, a deadline ("bis 15 Uhr") or the first of two choices ("um 9 oder 10 Uhr")."""
    alternative = _ALTERNATIVE_AFTER.match(sentence, m.end()) is not None
    return zone.unknown or alternative or deadline_before(sentence, m.start())
