"""Which day a sentence names: explicit dates, relative days and weekdays, resolved against the message's day."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date, timedelta

from plmail.calendar.proposals.day_mentions import (
    ORDINAL_PATTERN,
    DayKind,
    DayMention,
    day_number,
    valid_date,
)
from plmail.calendar.proposals.vocabulary import (
    DAY_PART_WORDS,
    ENGLISH_HOUR_WORDS,
    LETTER,
    MONTH_ABBREVIATIONS,
    MONTHS,
    MONTHS_NEEDING_A_NUMBER,
    ORDINAL_WORDS,
    WEEKDAY_ABBREVIATIONS,
    WEEKDAYS,
    DayPart,
    alternation,
)
from plmail.calendar.proposals.weekdays import count_beside, weekday_mention
from plmail.domain.enums import Locale

# A year-less date is its nearest occurrence: up to three months behind the message ("14 Feb" written at
# the end of February is the day just past, which the proposer then leaves out as past), else ahead. Reading it
# is the detector's job; refusing the past is the proposer's.
YEARLESS_AHEAD = timedelta(days=240)
YEARLESS_BEHIND = timedelta(days=90)
# A weekday written beside it that agrees names the year ("Mon, Nov 13"), a year either side.
YEARLESS_AROUND_WITH_WEEKDAY = timedelta(days=365)
TWO_DIGIT_YEARS_AROUND = (-1, 2)


_WD_FULL = alternation(WEEKDAYS)
_WD_ABBR = alternation(WEEKDAY_ABBREVIATIONS)
_MONTH = alternation(list(MONTHS) + list(MONTH_ABBREVIATIONS))
_NOT_LETTER = rf"(?![{LETTER}])"
_YEAR = r"(?:19|20)\d{2}(?!\d)"
_ORD = ORDINAL_PATTERN
# Capitalised, an abbreviation is a weekday before a date even without its dot: "Fri 19 May", "Mo 09.10.17".
_CAPITALISED_ABBREVIATIONS = (
    "Mon|Tues?|Wed|Thu(?:rs?)?|Fri|Sat|Sun|MON|TUES?|WED|THU(?:RS?)?|FRI|SAT|SUN|Mo|Di|Mi|Do|Fr|Sa"
)
# A weekday written before a date, looked for only once a date is found (cheaper than trying it at every
# position). An abbreviation counts only with its dot or comma: "Di. 27.09.", "Fr, 23.6." ("do 8/12").
_WEEKDAY_BEFORE = re.compile(
    rf"(?:\b(?P<wd>{_WD_FULL})\.?,?|\b(?P<wda>{_WD_ABBR})(?:\.,?|,)|(?-i:\b(?P<wds>{_CAPITALISED_ABBREVIATIONS})))"
    r"\s+(?:(?:den|dem|the|der)\s+)?$",
    re.IGNORECASE,
)
_PART_WORDS = "morgen|vormittag|mittag|nachmittag|abend|nacht"
_SEPARATE_PART = (
    rf"(?:\s+(?:(?:am|in\s+the)\s+)?(?P<part2>früh|frueh|morning|midday|afternoon|evening|night|{_PART_WORDS}){_NOT_LETTER})?"
)

_ISO = re.compile(
    r"(?<![\w.\-/])(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})"
    r"(?:[T ](?P<H>\d{2}):(?P<M>\d{2})(?P<S>:\d{2}(?:\.\d+)?)?(?P<Z>Z|[+-]\d{2}:?\d{2})?)?(?![\d\-/:])",
    re.IGNORECASE,
)
_DOTTED = re.compile(
    rf"(?<![\w.,/+\-])(?P<d>\d{{1,2}})\.\s?(?P<m>\d{{1,2}})\.(?:\s?(?P<y>{_YEAR})|(?P<yy>\d{{2}}))?(?!\d)",
    re.IGNORECASE,
)
_DOTTED_BARE = re.compile(
    r"(?<![\w.,/+\-])(?P<d>\d{1,2})\.(?P<m>\d{1,2})(?![\d.,]|\s?(?:uhr|h\b|%|€|eur|euro|prozent|percent))",
    re.IGNORECASE,
)
_SLASH = re.compile(
    r"(?<![\w./\-])(?P<a>\d{1,2})/(?P<b>\d{1,2})(?:/(?P<y>\d{4}|\d{2}))?"
    # "05/31/2024.14:15": an export's time glued to its date with a dot belongs to it
    r"(?:(?<=\d{4})\.(?P<H>[01]\d|2[0-3]):(?P<M>[0-5]\d)(?![\d:]))?(?![\w/]|[.,]\d)",
    re.IGNORECASE,
)
# ctime(3), as mailers and logs print a moment: "Thu Oct 26 11:00:09 2023". The year after the time is
# what makes it a date; without it the day stays year-less and is read as any "Oct 26".
_ASCTIME = re.compile(
    rf"\b(?P<wd>{_WD_ABBR})\s+(?P<mon>{alternation(MONTH_ABBREVIATIONS)})\s+(?P<d>\d{{1,2}})\s+"
    r"(?P<H>[01]\d|2[0-3]):(?P<M>[0-5]\d)(?::[0-5]\d)?\s+(?P<y>(?:19|20)\d{2})(?!\d)",
    re.IGNORECASE,
)
# A range of days with one time: "22-23 Feb", "26.–28. Oktober", "Feb 22-23", "22.-23.10.", "06.09.-07.09.2017".
_DAY_RANGE_TO = r"\s*(?:-|–|—|bis|to|till|until|through|thru)\s*"
_DAY_RANGE_MONTH = re.compile(
    rf"(?<![\w.,])(?P<d1>\d{{1,2}})(?:\.|st|nd|rd|th)?{_DAY_RANGE_TO}(?P<d2>\d{{1,2}})(?:\.|st|nd|rd|th)?\s*(?:of\s+)?"
    rf"(?P<mon>{_MONTH}){_NOT_LETTER}\.?(?:\s*,?\s*(?P<y>{_YEAR}))?"
    rf"|(?<![\w.])(?P<mon2>{_MONTH}){_NOT_LETTER}\.?\s+(?P<e1>\d{{1,2}})(?:st|nd|rd|th)?{_DAY_RANGE_TO}"
    rf"(?P<e2>\d{{1,2}})(?:st|nd|rd|th)?(?![\d:.]|\s?(?:uhr|h\b|am\b|pm\b))(?:\s*,\s*(?P<y2>{_YEAR}))?",
    re.IGNORECASE,
)
_DAY_RANGE_DOTTED = re.compile(
    rf"(?<![\w.,/+\-])(?P<d1>\d{{1,2}})\.(?:(?P<m1>\d{{1,2}})\.(?:(?P<y1>{_YEAR}))?)?{_DAY_RANGE_TO}"
    rf"(?P<d2>\d{{1,2}})\.(?P<m2>\d{{1,2}})\.(?:\s?(?P<y>{_YEAR}))?(?!\d)",
    re.IGNORECASE,
)
_DAY_MONTH = re.compile(
    rf"(?<![\w.,])(?<!\d:)(?:the\s+)?(?:(?P<d>\d{{1,2}})(?:\.|st|nd|rd|th)?\s*|(?P<dw>{_ORD})\s+)(?:of\s+)?"
    rf"(?P<mon>{_MONTH}){_NOT_LETTER}\.?"
    + rf"(?:\s*,?\s*(?P<y>{_YEAR}))?",
    re.IGNORECASE,
)
_MONTH_DAY = re.compile(
    rf"(?<![\w.])(?P<mon>{_MONTH}){_NOT_LETTER}\.?\s+(?P<the>the\s+)?(?:(?P<d>\d{{1,2}})(?:st|nd|rd|th)?"
    + r"(?![\d:]|\.\d|\s?(?:uhr|h\b|%|am\b|pm\b|a\.m|p\.m))"
    + rf"|(?P<dw>{_ORD}){_NOT_LETTER})"
    + rf"(?:\s*,?\s*(?P<y>{_YEAR}))?",
    re.IGNORECASE,
)
# "May/22(Tue)", as some calendars print a day: "Jan/20" is as often January 2020, so it is a day only with a
# weekday written beside it.
_MONTH_SLASH_DAY = re.compile(rf"(?<![\w./])(?P<mon>{_MONTH})/(?P<d>\d{{1,2}})(?![\d/])", re.IGNORECASE)
_RELATIVE = re.compile(
    rf"(?<![{LETTER}])(?P<rel>heute|today|tonight|morgen|tomorrow|übermorgen|uebermorgen|day after tomorrow)"
    + _NOT_LETTER
    + _SEPARATE_PART.replace("part2", "part"),
    re.IGNORECASE,
)
_THIS_PART = re.compile(r"\bthis\s+(?P<part>morning|afternoon|evening)\b", re.IGNORECASE)
_WEEKDAY = re.compile(
    r"(?:(?P<nwb>(?:(?:in\s+der\s+)?(?:n(?:ä|ae)chste|kommende)n?)\s+woche\s+(?:am\s+)?|next\s+week(?:\s+on)?\s+)"
    r"|(?P<wan>(?:in\s+der\s+)?(?:übern(?:ä|ae)chste|uebern(?:ä|ae)chste)n?\s+woche\s+(?:am\s+)?|week\s+after\s+next"
    r"(?:\s+on)?\s+)"
    r"|(?P<mod>next|this|coming|upcoming|last|previous|first|second|third|fourth|fifth|n(?:ä|ae)chste[nmrs]?"
    r"|kommende[nmrs]?|diese[nmrs]?|letzte[nmrs]?|vergangene[nmrs]?|übernächste[nmrs]?|uebernaechste[nmrs]?"
    r"|erste[nmrs]?|zweite[nmrs]?|dritte[nmrs]?|vierte[nmrs]?)\s+)?"
    + rf"(?<![{LETTER}])(?P<wd>{_WD_FULL})(?P<part>{_PART_WORDS})?{_NOT_LETTER}"
    + _SEPARATE_PART
    + r"(?P<nwa>,?\s+(?:in\s+der\s+)?(?:(?:n(?:ä|ae)chste[nr]?|kommende[nr]?)\s+woche|next\s+week)(?![\w]))?",
    re.IGNORECASE,
)
# Before these, "morgen" is the morning, not tomorrow ("Guten Morgen", "heute Morgen", "am Morgen").
_MORNING_NOUN_BEFORE = re.compile(
    r"\b(?:guten|gute|heute|am|jeden|diesen|schönen|einen|den|dem|der|frühen|früh|bis|morgen)\s*$", re.IGNORECASE
)
# "von heute 14 Uhr bis morgen 16:30 Uhr": after a "von" or "vom" in the same sentence, "bis morgen" is a span's far
# end, tomorrow. Alone it stays unread: "Bis morgen!" says goodbye, "bis morgen 12 Uhr" sets a deadline.
_SPAN_TO_TOMORROW = re.compile(r"\b(?:von|vom)\b[^.;!?]*\bbis\s*$", re.IGNORECASE)
# Before a year-less "7.3." or "4.8.26", the words that make it a date rather than "Red Hat 7.3." or
# "kernel 2.6.27": a German article or preposition, a weekday, a colon, or nothing at all.
_DOTTED_CONTEXT_BEFORE = re.compile(
    rf"(?:^|[:(\-–]|\b(?:am|an|den|dem|zum|vom|bis|ab|für|on|by|until|till|from)|\b{_WD_FULL}\.?,?"
    rf"|\b(?:{_WD_ABBR})(?:\.,?|,))\s*$",
    re.IGNORECASE,
)
_SLASH_IDIOMS = frozenset({"9/11", "24/7", "50/50", "20/20", "1/2", "1/3", "2/3", "1/4", "3/4"})
_CONTEXT_BEFORE = re.compile(
    rf"(?:\b(?:am|an|den|dem|zum|on|the)|\b{_WD_FULL}\.?,?|\b(?:{_WD_ABBR})(?:\.,?|,))\s*$", re.IGNORECASE
)
_A_WEEK_ON = re.compile(r"\s+week(?![\w'])", re.IGNORECASE)
_TIME_RIGHT_AFTER = re.compile(
    rf"\s*,?\s*(?:(?:at|around|about|@)\s*)?(?:\d|(?:{alternation(ENGLISH_HOUR_WORDS)})(?![{LETTER}]))", re.IGNORECASE
)
# A weekday written after the date ("Jul 18, Fri", "24.8. (Do)") must agree with it, as one written before.
_LETTER_AFTER = re.compile(rf"[{LETTER}\d]", re.IGNORECASE)
# An abbreviation only with its dot or comma, in brackets or at the end ("am 24.8. so gegen 15 Uhr" is no Sunday).
_WEEKDAY_AFTER = re.compile(
    rf"\s*,?\s*(?:\((?:(?P<wd>{_WD_FULL})(?![\w])|(?P<wda>{_WD_ABBR})\b\.?)\)?|(?P<wd2>{_WD_FULL})(?![\w])"
    rf"|(?P<wda2>{_WD_ABBR})(?:[.,]|\s*$)|(?-i:(?P<wds>{_CAPITALISED_ABBREVIATIONS}))(?![\w]))",
    re.IGNORECASE,
)

# An abbreviated weekday is a day only before a time or a day of the month ("Thu at 8 am", "Fr um 16:25 Uhr",
# "Wed 31th"), written with its capital where it is also a word ("Sat", "Sun", "Mon"; never German "so"), and
# not as the end of a span ("Mo-Fr 9-17 Uhr").
_WEEKDAY_SHORT = re.compile(
    r"(?<![\w\-–—/])(?<!bis\s)(?<!to\s)(?:(?P<mod>[Tt]his|[Nn]ext|[Cc]oming)\s+"
    r"|(?P<nwb>(?:[Nn]ext\s+week(?:\s+on)?|(?:[Nn](?:ä|ae)chste|[Kk]ommende)n?\s+[Ww]oche(?:\s+am)?)\s+))?"
    rf"(?P<wd>{_CAPITALISED_ABBREVIATIONS}|tues?|wed|thu(?:rs?)?|fri)(?![\w\-–—])\.?,?(?=\s*(?:(?:at|um|@)\s*)?\d|\s+(?:the|den|dem)\s)"
)
# "in 3 Tagen", "in einer Woche", "heute in zwei Wochen", "in 2 weeks": counted from the message day.
_IN_DAYS = re.compile(
    rf"(?<![{LETTER}])(?:(?P<base>heute|morgen|today|tomorrow)\s+)?in\s+(?P<n>\d{{1,2}}|{{counts}})\s+"
    rf"(?P<unit>tagen|tag|days?|wochen|woche|weeks?){_NOT_LETTER}",
    re.IGNORECASE,
)
_COUNT_WORDS = {"einem": 1, "einer": 1, "a": 1, "one": 1, "zwei": 2, "two": 2, "drei": 3, "three": 3, "vier": 4,
                "four": 4, "fünf": 5, "five": 5, "sechs": 6, "six": 6, "sieben": 7, "seven": 7, "acht": 8,
                "eight": 8, "neun": 9, "nine": 9, "zehn": 10, "ten": 10, "vierzehn": 14, "fourteen": 14}  # fmt: skip
_IN_DAYS = re.compile(_IN_DAYS.pattern.replace("{counts}", alternation(_COUNT_WORDS)), re.IGNORECASE)
_MAX_DAYS_AHEAD = 31
_MAX_RANGE_DAYS = 14
_NEXT_MONTH_DAYS = 14  # how far into next month a day of the month alone may be
# "on the 15th at 2pm", "am 15. um 14 Uhr": a day of the month without its month, where a time follows it; before
# a noun it is no day ("on the 15th floor", "am 15. Geburtstag").
_DAY_OF_THE_MONTH = re.compile(
    r"\b(?:(?:[Oo]n|[Ff]or)\s+the\s+(?P<en>\d{1,2})(?:st|nd|rd|th)\b"
    r"(?=\s*,?\s*(?:at\b|@|from\b|between\b|around\b|\d))"
    r"|[Aa]m\s+(?P<de>\d{1,2})\.(?!\d)(?=\s*,?\s*(?:um\b|ab\b|gegen\b|von\b|zwischen\b|\d)))"
)
# A month written anywhere in the message may be the one "the 15th" is in: "Im September … Am 15. um 14 Uhr?"
_MONTH_WRITTEN = re.compile(
    rf"(?<![{LETTER}])(?:{alternation([m for m in MONTHS if m not in MONTHS_NEEDING_A_NUMBER])}"
    rf"|(?-i:{alternation([m.capitalize() for m in MONTHS_NEEDING_A_NUMBER])})"
    rf"|{alternation(MONTH_ABBREVIATIONS)}\.?\s*\d|\d\s*{alternation(MONTH_ABBREVIATIONS)}"
    rf"|months?|monat\w*)(?![{LETTER}])"
    # "3.8." or "8/3", not a time's "14.30"
    r"|\b\d{1,2}\.\d{1,2}\.|\b\d{1,2}/\d{1,2}\b",
    re.IGNORECASE,
)


def month_left_open(text: str) -> bool:
    """Whether the text writes a day of the month alone ("am 15. um 14 Uhr") and no month anywhere (by name, as a
    number in a date, or as "month" / "Monat"), so that day is this month's or the next. The month search runs only
    for the few messages with such a day, not for every message read."""
    return _DAY_OF_THE_MONTH.search(text) is not None and _MONTH_WRITTEN.search(text) is None


# Right after a day, "Morgen" and "früh" are the morning: "heute Morgen", "morgen früh", "Montagmorgen".
_PART_BY_WORD: dict[str, DayPart] = {**DAY_PART_WORDS, "morgen": DayPart.MORNING, "früh": DayPart.MORNING,
                                     "frueh": DayPart.MORNING}  # fmt: skip
_RELATIVE_OFFSET = {"heute": 0, "today": 0, "tonight": 0, "morgen": 1, "tomorrow": 1,
                    "übermorgen": 2, "uebermorgen": 2, "day after tomorrow": 2}  # fmt: skip


def _weekday_before(sentence: str, start: int) -> tuple[int, int | None, bool]:
    """Where the date really starts, the weekday written in front of it, if any, and whether that weekday is
    an abbreviation without its dot ("Fri 19 May")."""
    m = _WEEKDAY_BEFORE.search(sentence, max(0, start - 30), start)
    return (m.start(), _weekday_of(m), m["wds"] is not None) if m else (start, None, False)


def _weekday_of(match: re.Match[str]) -> int | None:
    groups = match.groupdict()
    full, short = groups.get("wd") or groups.get("wd2"), groups.get("wda") or groups.get("wda2") or groups.get("wds")
    if full:
        return WEEKDAYS[full.lower()]
    if short:
        return WEEKDAY_ABBREVIATIONS[short.lower()]
    return None


def _resolve(
    year: str | None, month: int, day: int, reference: date, weekday: int | None, past_tense: bool = False,
    booking: bool = False,
) -> date | None:
    """The date, or None when it is impossible, ambiguous, or contradicts a written weekday.

    `booking` says the sentence asks for something to be booked, which cannot be in the past: a year-less date
    too far behind and too far ahead to be the nearest is then the next one."""
    if not year:
        if past_tense:
            return None  # "there was a warning on Sept. 13": last year's as likely as this year's
        years = (reference.year - 1, reference.year, reference.year + 1)
        occurrences = [d for d in (valid_date(y, month, day) for y in years) if d is not None]
        if weekday is not None:
            near = [d for d in occurrences
                    if d.weekday() == weekday and abs(d - reference) < YEARLESS_AROUND_WITH_WEEKDAY]
        else:
            near = [d for d in occurrences if -YEARLESS_BEHIND < d - reference < YEARLESS_AHEAD]
        if not near and booking and weekday is None:
            near = [d for d in occurrences if d >= reference][:1]
        if not near:
            return None
        return min(near, key=lambda d: abs(d - reference))
    full = int(year)
    if len(year) == 2:
        full += 2000
        low, high = TWO_DIGIT_YEARS_AROUND
        if not reference.year + low <= full <= reference.year + high:
            return None
    found = valid_date(full, month, day)
    if found is None or (weekday is not None and found.weekday() != weekday):
        return None
    return found


def _overlaps(start: int, end: int, taken: list[tuple[int, int]]) -> bool:
    return any(start < t_end and t_start < end for t_start, t_end in taken)


def _with_weekday_after(sentence: str, mention: DayMention) -> DayMention:
    m = _WEEKDAY_AFTER.match(sentence, mention.end)
    if not m:
        return mention
    weekday = _weekday_of(m)
    day = mention.day if mention.day is not None and mention.day.weekday() == weekday else None
    return DayMention(mention.start, m.end(), mention.kind, day, mention.part, mention.needs_clock, mention.clock)


def _explicit(sentence: str, reference: date, language: Locale, past_tense: bool, booking: bool) -> list[DayMention]:
    found: list[DayMention] = []
    taken: list[tuple[int, int]] = []

    def add(mention: DayMention) -> None:
        if not _overlaps(mention.start, mention.end, taken):
            mention = _with_weekday_after(sentence, mention)
            found.append(mention)
            taken.append((mention.start, mention.end))

    for m in _ASCTIME.finditer(sentence):
        month = MONTH_ABBREVIATIONS[m["mon"].lower()]
        when = _resolve(m["y"], month, int(m["d"]), reference, WEEKDAY_ABBREVIATIONS[m["wd"].lower()])
        add(DayMention(m.start(), m.end(), DayKind.EXPLICIT, when, clock=(int(m["H"]), int(m["M"]))))
    for mention in _day_ranges(sentence, reference, past_tense):
        add(mention)
    for m in _ISO.finditer(sentence):
        when = valid_date(int(m["y"]), int(m["m"]), int(m["d"]))
        clock = (int(m["H"]), int(m["M"])) if m["H"] else None
        if clock is not None and (clock[0] > 23 or clock[1] > 59):
            when = None
        if m["S"] or m["Z"]:
            when = None  # "2002-10-08T00:22:08-05:00" stamps when something was written; it proposes nothing
        add(DayMention(m.start(), m.end(), DayKind.EXPLICIT, when, clock=clock))
    for m in _DOTTED.finditer(sentence):
        day, month = int(m["d"]), int(m["m"])
        if not (1 <= day <= 31 and 1 <= month <= 12) or _LETTER_AFTER.match(sentence, m.end()):
            continue  # "14.30." is a time at the end of a sentence, "2.40." and "4.2.x" versions, not dates
        start, weekday, bare = _weekday_before(sentence, m.start())
        # A dotted date with its full year is D.M.Y whatever the language ("10.11.2017 at around 12:30"): American
        # mail writes M/D/Y with slashes. Without its full year it is found but not offered (issue 37, as the
        # predecessor refused): "04.08." and "04.08.26" leave open which year, and in English mail which order.
        resolved = _resolve(m["y"], month, day, reference, weekday, past_tense) if m["y"] else None
        has_context = bool(m["y"]) or weekday is not None or _DOTTED_CONTEXT_BEFORE.search(
            sentence, max(0, m.start() - 30), m.start()
        ) is not None
        add(DayMention(start, m.end(), DayKind.EXPLICIT, resolved, needs_clock=not has_context))
    for pattern in (_DAY_MONTH, _MONTH_DAY):
        for m in pattern.finditer(sentence):
            if m["mon"].lower() in MONTHS_NEEDING_A_NUMBER and not m["mon"][0].isupper() and not _spoken_date(
                sentence, m, pattern is _MONTH_DAY
            ):
                continue  # "Windows 10 may crash", "march 5 miles": the month is written with a capital
            month = MONTHS.get(m["mon"].lower()) or MONTH_ABBREVIATIONS[m["mon"].lower()]
            start, weekday, bare = _weekday_before(sentence, m.start())
            resolved = _resolve(m["y"], month, day_number(m), reference, weekday, past_tense, booking)
            # "October fifth" spelled out is spoken more than written, and "August the 6th" ("May the 4th be with
            # you"): a date only beside a time.
            spoken = m["dw"] is not None or m.groupdict().get("the") is not None
            add(DayMention(start, m.end(), DayKind.EXPLICIT, resolved, needs_clock=spoken))
    for m in _MONTH_SLASH_DAY.finditer(sentence):
        month = MONTHS.get(m["mon"].lower()) or MONTH_ABBREVIATIONS[m["mon"].lower()]
        start, weekday, bare = _weekday_before(sentence, m.start())
        after = _WEEKDAY_AFTER.match(sentence, m.end())
        weekday = _weekday_of(after) if weekday is None and after else weekday
        resolved = None if weekday is None else _resolve(None, month, int(m["d"]), reference, weekday, past_tense)
        add(DayMention(start, m.end(), DayKind.EXPLICIT, resolved, needs_clock=True))
    for m in _SLASH.finditer(sentence):
        if f"{m['a']}/{m['b']}" in _SLASH_IDIOMS and not m["y"]:
            continue  # "9/11", "24/7", "50/50" are names and ratios
        first, second = int(m["a"]), int(m["b"])
        start, weekday, bare = _weekday_before(sentence, m.start())
        # The user's language decides the order; an impossible reading is refused, never swapped.
        day, month = (first, second) if language is Locale.DE else (second, first)
        has_context = (m["y"] is not None or weekday is not None
                       or _CONTEXT_BEFORE.search(sentence, 0, m.start()) is not None)
        clock = (int(m["H"]), int(m["M"])) if m["H"] else None
        full_year = m["y"] is not None and len(m["y"]) == 4
        # Offered only with its full year, as a dotted date: "15/06" and "15/06/26" are found but not offered.
        resolved = _resolve(m["y"], month, day, reference, weekday, past_tense) if full_year else None
        if resolved is None and language is Locale.EN and full_year and first > 12:
            # "14/12/2026" with its full year can only be D/M/Y.
            resolved = _resolve(m["y"], second, first, reference, weekday, past_tense)
        add(DayMention(start, m.end(), DayKind.EXPLICIT, resolved, needs_clock=not has_context, clock=clock))
    for m in _DOTTED_BARE.finditer(sentence):
        if not (1 <= int(m["d"]) <= 31 and 1 <= int(m["m"]) <= 12):
            continue
        start, weekday, bare = _weekday_before(sentence, m.start())
        # "Do 01.06" without the weekday's dot is a date beside a time only, as the gate sees it too.
        has_context = (weekday is not None and not bare) or _CONTEXT_BEFORE.search(sentence, 0, m.start()) is not None
        # Without a year "5.12" is not offered (and in English mail it is as often May 12th as 5 December); it is
        # still found, so the numbers are not read as a time.
        add(DayMention(start, m.end(), DayKind.EXPLICIT, None, needs_clock=not has_context))
    return found


def _spoken_date(sentence: str, m: re.Match[str], month_first: bool) -> bool:
    """ "march eighteenth nine thirty", "march twenty second at seven p m": a lower-case month with a spoken
    ordinal is a date when a time follows it at once ("we march fifth avenue at 9am" is a walk, "you may first"
    a verb)."""
    if not month_first or not m["dw"] or ORDINAL_WORDS[" ".join(m["dw"].lower().split())] <= 3:
        return False
    return _TIME_RIGHT_AFTER.match(sentence, m.end()) is not None


def _day_ranges(sentence: str, reference: date, past_tense: bool) -> list[DayMention]:
    """ "22-23 Feb", "26.–28. Oktober", "Feb 22-23, 2027", "06.09.-07.09.2017": the first day, with the last
    kept as the range's end. Such a range is an event's days only beside a time ("22-23 Feb at 7pm");
    alone it is a stay or a season, and is not read."""
    found: list[DayMention] = []
    for m in _DAY_RANGE_MONTH.finditer(sentence):
        name = m["mon"] or m["mon2"]
        if name.lower() in MONTHS_NEEDING_A_NUMBER and not name[0].isupper():
            continue
        month = MONTHS.get(name.lower()) or MONTH_ABBREVIATIONS[name.lower()]
        first, last = (int(m["d1"]), int(m["d2"])) if m["d1"] else (int(m["e1"]), int(m["e2"]))
        start_day = _resolve(m["y"] or m["y2"], month, first, reference, None, past_tense)
        last_day = valid_date(start_day.year, month, last) if start_day is not None else None
        found.append(_range_mention(m, start_day, last_day))
    for m in _DAY_RANGE_DOTTED.finditer(sentence):
        year = m["y1"] or m["y"]
        if year is None:
            found.append(_range_mention(m, None, None))  # "26.–28.10." has no year: not offered
            continue
        start_day = _resolve(year, int(m["m1"] or m["m2"]), int(m["d1"]), reference, None, past_tense)
        last_day = None
        if start_day is not None:
            last_day = valid_date(int(m["y"]) if m["y"] else start_day.year, int(m["m2"]), int(m["d2"]))
        found.append(_range_mention(m, start_day, last_day))
    return found


def _range_mention(m: re.Match[str], first: date | None, last: date | None) -> DayMention:
    if first is None or last is None or not timedelta(0) < last - first <= timedelta(days=_MAX_RANGE_DAYS):
        first = last = None
    return DayMention(m.start(), m.end(), DayKind.EXPLICIT, first, needs_clock=True, last_day=last)


def find_days(
    sentence: str, reference: date, language: Locale, *, relative_refused: bool = False, past_tense: bool = False,
    booking: bool = False, month_written: bool = True,
) -> list[DayMention]:
    """Every day the sentence names, in order.

    `relative_refused` says "today" is not known for this sentence (it is in the past tense, or the writer's
    day differs from the user's), so relative words and weekdays are recognised but not resolved;
    `past_tense` does the same for year-less dates, whose year a report about the past leaves open; `booking`
    (a request to book) makes one that is neither the near past nor the near future the next; `month_written`
    (the message names a month somewhere) leaves "the 15th" open, as it may be that month's."""
    mentions = _explicit(sentence, reference, language, past_tense, booking)
    taken = [(d.start, d.end) for d in mentions]
    counted: dict[int, int] = {}  # "in zwei Wochen": the mention's start -> its weeks (0: a count of days)
    for m in _IN_DAYS.finditer(sentence):
        if _overlaps(m.start(), m.end(), taken):
            continue
        count = int(m["n"]) if m["n"].isdigit() else _COUNT_WORDS[m["n"].lower()]
        weeks = m["unit"].lower().startswith("w")
        ahead = count * (7 if weeks else 1)
        base = _RELATIVE_OFFSET[m["base"].lower()] if m["base"] else 0
        day = None if relative_refused or not 0 < ahead <= _MAX_DAYS_AHEAD else reference + timedelta(days=ahead + base)
        mentions.append(DayMention(m.start(), m.end(), DayKind.RELATIVE, day))
        taken.append((m.start(), m.end()))
        if not m["base"]:
            counted[m.start()] = count if weeks else 0
    for m in _RELATIVE.finditer(sentence):
        if _overlaps(m.start(), m.end(), taken):
            continue
        word = m["rel"].lower()
        if (word == "morgen" and _MORNING_NOUN_BEFORE.search(sentence, 0, m.start())
                and not _SPAN_TO_TOMORROW.search(sentence, 0, m.start())):
            continue
        part_word = (m["part"] or ("tonight" if word == "tonight" else "")).lower()
        # "tomorrow week", British: a week from tomorrow
        week_on = 7 if word in ("today", "tomorrow") and _A_WEEK_ON.match(sentence, m.end()) else 0
        day = None if relative_refused else reference + timedelta(days=_RELATIVE_OFFSET[word] + week_on)
        mentions.append(DayMention(m.start(), m.end(), DayKind.RELATIVE, day, _PART_BY_WORD.get(part_word)))
        taken.append((m.start(), m.end()))
    for m in _THIS_PART.finditer(sentence):
        if not _overlaps(m.start(), m.end(), taken):
            day = None if relative_refused else reference
            mentions.append(DayMention(m.start(), m.end(), DayKind.RELATIVE, day, _PART_BY_WORD[m["part"].lower()]))
            taken.append((m.start(), m.end()))
    for m in _WEEKDAY.finditer(sentence):
        if _overlaps(m.start("wd"), m.end("wd"), taken):
            continue
        part = _PART_BY_WORD.get((m["part"] or m["part2"] or "").lower())
        weeks_on = 2 if m["wan"] else int(bool(m["nwb"] or m["nwa"]))
        found = count_beside(sentence, m, mentions, counted)
        beside, touching = found if found is not None else (None, False)
        if beside is not None:
            mentions.remove(beside)
            if weeks_on or m["mod"] or not 0 < counted[beside.start] * 7 <= _MAX_DAYS_AHEAD:
                # "in zwei Wochen am nächsten Dienstag", "in 3 Tagen am Dienstag", in two months: unclear
                both = (min(m.start(), beside.start), max(m.end(), beside.end)) if touching else (m.start(), m.end())
                mentions.append(DayMention(*both, DayKind.WEEKDAY, None))
                continue
            weeks_on = counted[beside.start]
        mention = weekday_mention(WEEKDAYS[m["wd"].lower()], m, m["mod"] or "", weeks_on, part,
                                   sentence, reference, relative_refused, past_tense, abbreviated=False)
        if beside is not None and touching:
            mention = replace(mention, start=min(mention.start, beside.start), end=max(mention.end, beside.end))
        mentions.append(mention)
        taken.append((mention.start, mention.end))
    for m in _WEEKDAY_SHORT.finditer(sentence):
        if _overlaps(m.start(), m.end(), taken):
            continue
        # "next week Mon 9 am", "nächste Woche Mo um 9": the weekday of the week after the message's.
        mention = weekday_mention(WEEKDAY_ABBREVIATIONS[m["wd"].lower()], m, m["mod"] or "", int(bool(m["nwb"])),
                                   None, sentence, reference, relative_refused, past_tense, abbreviated=True)
        mentions.append(mention)
        taken.append((mention.start, mention.end))
    for m in _DAY_OF_THE_MONTH.finditer(sentence):
        if not _overlaps(m.start(), m.end(), taken):
            unknown = relative_refused or past_tense or month_written
            day = None if unknown else next_day_of_the_month(int(m["en"] or m["de"]), reference)
            mentions.append(DayMention(m.start(), m.end(), DayKind.EXPLICIT, day, needs_clock=True))
            taken.append((m.start(), m.end()))
    return sorted(mentions, key=lambda d: d.start)


def next_day_of_the_month(number: int, reference: date) -> date | None:
    """ "the 15th" is this month's from the message day on, else next month's if that is at most two weeks ahead:
    written on the 3rd, "am 2." is more likely yesterday, in a sentence whose past tense we did not see, than a
    month on. A day its month lacks ("the 31st" written in September) is left unread rather than moved."""
    if number >= reference.day:
        return valid_date(reference.year, reference.month, number)
    year, month = (reference.year + 1, 1) if reference.month == 12 else (reference.year, reference.month + 1)
    found = valid_date(year, month, number)
    return found if found is not None and found - reference <= timedelta(days=_NEXT_MONTH_DAYS) else None
