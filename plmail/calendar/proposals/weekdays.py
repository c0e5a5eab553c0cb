"""Which day a weekday names: the coming one, the one a count of weeks on, the nth of a month, the date a day of
the month beside it agrees on, or none where the sentence counts it from something else."""

from __future__ import annotations

import re
from datetime import date, timedelta

from plmail.calendar.proposals.day_mentions import ORDINAL_PATTERN, DayKind, DayMention, day_number, day_of_month
from plmail.calendar.proposals.vocabulary import LETTER, WEEKDAYS, DayPart, alternation

# Holidays and ordinals turn a weekday into another day: "Easter Monday", "first Monday of next month".
_WEEKDAY_NOT_ITSELF_BEFORE = re.compile(
    r"\b(?:easter|cyber|black|good|super|ash|holy|maundy|palm|whit|blue|mini|giga|mega|tsunami)\s*-?\s*$"
    # "the following Tuesday", "am darauffolgenden Dienstag": the Tuesday after some other day, not the coming one
    r"|\b(?:following|(?:darauf|nach)?folgenden?)\s+$",
    re.IGNORECASE,
)
_WEEKDAY_NOT_ITSELF_AFTER = re.compile(
    r"\s+(?:of|in|im)\s+(?:the\s+)?(?:next\s+|this\s+|nächsten\s+|kommenden\s+|diesem\s+)?(?:month|monat)"
    # "Tuesday after next", "Tuesday before Christmas", "Dienstag nach Ostern", "Dienstag darauf", "Tuesday week":
    # a Tuesday counted from something else. After a comma ("Tuesday, after lunch, at 1:30pm") or before a time
    # ("Dienstag nach 15 Uhr") the Tuesday is the coming one.
    r"|\s+(?:after|before|nach|vor)\s+(?!\d)|\s+(?:darauf|danach|drauf|week)(?![\w])",
    re.IGNORECASE,
)
# "the first Monday of next month", "am ersten Montag im nächsten Monat", and with the weekday's time between
# them, "the first Monday 1pm to 3pm of next month": the nth such weekday of that month.
_NTH = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "erste": 1, "zweite": 2, "dritte": 3,
        "vierte": 4}  # fmt: skip
_OF_MONTH_AFTER = re.compile(
    r"(?:\s*(?:[\d:.\-–]+|(?:[ap]\.?m\.?|uhr|h|to|bis|and|und|at|um|from|von|between|zwischen)\b|@))*?\s*,?\s+"
    r"(?:of|in|im|des)\s+(?:the\s+)?(?P<which>next|coming|this|n(?:ä|ae)chsten|kommenden|diesem)\s+(?:month|monats?)\b",
    re.IGNORECASE,
)
# "in der letzten Woche am Donnerstag", "the week before on Monday": a week we do not resolve names the weekday.
# A count of weeks beside a weekday that no rule reads ("letzte Woche am Dienstag", "two weeks from now on Tuesday",
# "Dienstag zwei Wochen später") moves it to a week we do not know: the weekday alone would be this week's.
_WEEK_BEFORE = re.compile(
    r"\b(?:wochen?|weeks?)(?:\s+(?:from\s+(?:now|today)|later|später|danach|ahead|out))?[\s,]+(?:(?:am|on)\s+)?$",
    re.IGNORECASE,
)
# "early next week, say Tuesday", "Anfang nächster Woche, etwa Dienstag": a later week named apart from the weekday.
# Which week the weekday is in is then the writer's, not the coming one; a weekday it is joined to is read above.
_ANOTHER_WEEK_IN_THE_SENTENCE = re.compile(
    r"\b(?:next\s+week|week\s+after\s+next|(?:n(?:ä|ae)chste[nr]?|kommende[nr]?|übern(?:ä|ae)chste[nr]?)\s+woche)\b",
    re.IGNORECASE,
)
_WEEKS_AFTER = re.compile(
    r"[\s,]+(?:in\s+)?(?:\d{1,2}|a|one|two|three|four|five|six|einer|eine|zwei|drei|vier|fünf|sechs)\s+(?:wochen?|weeks?)\b",
    re.IGNORECASE,
)

# "Friday the 26th", "Wed 31th", "Freitag, den 26.": a weekday with a day of the month and no month.
_ORDINAL_AFTER = re.compile(
    rf"\s*,?\s*(?:(?:the|den|dem)\s+(?:(?P<d>\d{{1,2}})(?:st|nd|rd|th|\.)|(?P<dw>{ORDINAL_PATTERN}))|(?P<d2>\d{{1,2}})(?:st|nd|rd|th))"
    rf"(?![\d{LETTER}]|\.\d)",
    re.IGNORECASE,
)
# "Friday 23 at 4": a bare number after a weekday is its day of the month only where it can be no hour (13 to 31)
# and no time, range or count follows; "Wed 5 at 10am" stays a weekday and a stray number.
_BARE_DAY_AFTER = re.compile(
    rf",?\s+(?P<d>1[3-9]|2\d|3[01])(?![\d{LETTER}]|\.\d|\s*(?:[:\-–/%€$]|h\b|uhr|o'?clock|[ap]\.?\s?m\b|bis\b|to\b"
    r"|until\b|till\b|and\b|und\b|or\b|oder\b|people|persons|personen|leute|gäste|guests|minutes|minuten|hours"
    r"|stunden|mal\b|times\b))",
    re.IGNORECASE,
)


def _nth_weekday(target: int, nth: int, reference: date, months_on: int) -> date | None:
    """The nth `target` weekday of the month `months_on` after the message's; None if it has no such day."""
    years, month = divmod(reference.month - 1 + months_on, 12)
    first = date(reference.year + years, month + 1, 1)
    found = first + timedelta(days=(target - first.weekday()) % 7 + 7 * (nth - 1))
    return found if found.month == first.month else None


def _weekday_day(
    target: int, modifier: str, next_week: int, sentence: str, span: tuple[int, int], reference: date,
    relative_refused: bool,
) -> date | None:
    """The next occurrence strictly after the message day; the message's own weekday, bare, is refused.

    "next Thursday" said on a Tuesday is this week's for some writers and next week's for others (the
    corpora disagree too), so inside the current week it is refused; "kommenden"/"coming" is unambiguous.
    """
    nth = _NTH.get(modifier.lower().rstrip("nmrs"))
    of_month = _OF_MONTH_AFTER.match(sentence, span[1]) if nth else None
    if nth and of_month:
        this_month = of_month["which"].lower().startswith(("this", "dies"))
        return None if relative_refused else _nth_weekday(target, nth, reference, 0 if this_month else 1)
    if _WEEKDAY_NOT_ITSELF_BEFORE.search(sentence, 0, span[0]) or _WEEKDAY_NOT_ITSELF_AFTER.match(sentence, span[1]):
        return None
    ahead = (target - reference.weekday()) % 7 or 7
    coming = reference + timedelta(days=ahead)
    if next_week:
        monday_next_week = reference + timedelta(days=7 - reference.weekday())
        return monday_next_week + timedelta(days=target + 7 * (next_week - 1))  # "übernächste Woche": 2
    modifier = modifier.lower()
    if modifier.startswith(("next", "nächste", "naechste")):
        return coming if target <= reference.weekday() else None
    if modifier.startswith(("this", "diese")):
        return coming if target > reference.weekday() else None
    if modifier.startswith(("coming", "upcoming", "kommende")):
        return coming
    if (modifier or _WEEK_BEFORE.search(sentence, 0, span[0]) or _WEEKS_AFTER.match(sentence, span[1])
            or _ANOTHER_WEEK_IN_THE_SENTENCE.search(sentence, 0, span[0])):
        return None  # last, previous, übernächste, first, zweiten, "letzte Woche am": not the coming one
    if target == reference.weekday():
        return None  # "on Thursday" written on a Thursday: today to some writers, a week on to others
    return None if relative_refused else coming


# "in zwei Wochen am Dienstag", "in two weeks on Tuesday", "Dienstag in zwei Wochen": the weekday of the week that
# many weeks on; read alone, the weekday would be this week's and the count a day that is no Tuesday.
_COUNT_THEN_WEEKDAY = re.compile(r"[\s,]*(?:(?:am|on)\s+)?", re.IGNORECASE)
_WEEKDAY_THEN_COUNT = re.compile(r"[\s,]*")
# "Dienstag um 10 Uhr, also in zwei Wochen", "Tuesday at 10am, i.e. in two weeks": the count, set apart after the
# time, says which Tuesday; read alone, the weekday would be this week's.
_WEEKDAY_THEN_COUNT_APART = re.compile(
    r"[^,;.!?]{0,30},\s*(?:also|so|sprich|d\.\s?h\.|das\s+heißt|das\s+heisst|i\.\s?e\.|that\s+is|which\s+is"
    r"|meaning)[\s,]+",
    re.IGNORECASE,
)


def count_beside(sentence: str, m: re.Match[str], mentions: list[DayMention], counted: dict[int, int]
                  ) -> tuple[DayMention, bool] | None:
    """The count of weeks that says which of its weekdays is meant, and whether it touches the weekday (its text
    then joins the weekday's) or stands apart after the weekday's time."""
    for mention in mentions:
        if mention.start not in counted:
            continue
        if mention.end <= m.start() and _COUNT_THEN_WEEKDAY.fullmatch(sentence, mention.end, m.start()):
            return mention, True
        if m.end() <= mention.start and _WEEKDAY_THEN_COUNT.fullmatch(sentence, m.end(), mention.start):
            return mention, True
        if m.end() <= mention.start and _WEEKDAY_THEN_COUNT_APART.fullmatch(sentence, m.end(), mention.start):
            return mention, False
    return None


def weekday_mention(
    target: int, m: re.Match[str], modifier: str, next_week: int, part: DayPart | None, sentence: str,
    reference: date, relative_refused: bool, past_tense: bool, *, abbreviated: bool,
) -> DayMention:
    """A weekday, or with a day of the month after it ("Friday the 26th") the date both agree on."""
    ordinal = _ORDINAL_AFTER.match(sentence, m.end())
    past = past_tense or modifier.lower().startswith(("last", "letzte", "vergangene", "previous"))
    bare = _BARE_DAY_AFTER.match(sentence, m.end()) if ordinal is None else None
    if bare is not None:
        # Only where both agree: a Friday that is no 23rd leaves the number to mean something else.
        agreed = day_of_month(int(bare["d"]), target, reference, past)
        if agreed is not None:
            return DayMention(m.start(), bare.end(), DayKind.EXPLICIT, agreed, part, needs_clock=True)
    if ordinal is None:
        span = (m.start(), m.end())
        day = _weekday_day(target, modifier, next_week, sentence, span, reference, relative_refused)
        if_passed = None
        itself = not (_WEEKDAY_NOT_ITSELF_BEFORE.search(sentence, 0, span[0])
                      or _WEEKDAY_NOT_ITSELF_AFTER.match(sentence, span[1]))  # fmt: skip
        if day is None and target == reference.weekday() and itself and not (modifier or next_week or relative_refused):
            if_passed = reference + timedelta(days=7)
        return DayMention(m.start(), m.end(), DayKind.WEEKDAY, day, part, if_passed=if_passed)
    number = int(ordinal["d2"]) if ordinal["d2"] else day_number(ordinal)
    day = day_of_month(number, target, reference, past)
    # An abbreviation is a day only beside a time: "Wed 31th" alone says too little to be an all-day matter.
    return DayMention(m.start(), ordinal.end(), DayKind.EXPLICIT, day, part, needs_clock=abbreviated)


# "Nächsten Dienstag, 11. August": the date says which Tuesday is meant, so "next" before it is no bound.
_NEXT_BEFORE = re.compile(r"\b(?:next|n(?:ä|ae)chste[nmrs]?)\s+$", re.IGNORECASE)
_WEEKDAY_FIRST = re.compile(rf"(?:{alternation(WEEKDAYS)})(?![{LETTER}])", re.IGNORECASE)


def next_weekday_with_its_date(sentence: str, day: DayMention, reference: date) -> bool:
    """ "next Tuesday, August 11": the date, that weekday within two weeks, settles which Tuesday "next" means."""
    if day.kind is not DayKind.EXPLICIT or day.day is None or not _NEXT_BEFORE.search(sentence, 0, day.start):
        return False
    weekday = _WEEKDAY_FIRST.match(sentence, day.start)
    return (weekday is not None and WEEKDAYS[weekday[0].lower()] == day.day.weekday()
            and timedelta(0) < day.day - reference <= timedelta(days=14))
