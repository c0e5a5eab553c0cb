"""Times written in words: "halb vier", "Viertel nach 3", "quarter past ten", "nine thirty", "acht Uhr"."""

from __future__ import annotations

import re
from collections.abc import Iterator

from plmail.calendar.proposals.clock_mentions import (
    APPROX,
    ClockMention,
    changed_by,
    morning_after_at,
    overlaps,
    refused_as_start,
    text_end,
    written_meridiem,
)
from plmail.calendar.proposals.vocabulary import (
    ENGLISH_HOUR_WORDS,
    GERMAN_SPOKEN_MINUTES,
    HOUR_WORDS,
    LETTER,
    SPOKEN_MINUTES,
    alternation,
)
from plmail.calendar.proposals.zones import zone_after

# Spoken, "a m" and "p . m ." may come apart: "nine a m", "seven p . m .".
_SPOKEN_MERIDIEM = rf"[ap]\s?\.?\s?m(?![{LETTER}])(?:\s?\.)?"
_HOUR = rf"(?:\d{{1,2}}|{alternation(HOUR_WORDS)})"
# "um acht Uhr", "at six pm": an hour word is a time only with its "Uhr", "o'clock" or am/pm.
_WORD_CLOCK = re.compile(
    rf"(?<![{LETTER}\d])(?:(?P<pre>um|gegen|at|ab|@)\s+)?(?:(?P<apx>{APPROX})\s+)?"
    rf"(?P<h>{alternation(HOUR_WORDS)})"
    rf"(?:\s?(?P<suf>uhr|o'?clock)(?:\s+(?-i:(?P<min>{alternation(GERMAN_SPOKEN_MINUTES)})))?(?![{LETTER}])"
    rf"|\s?(?P<mer>{_SPOKEN_MERIDIEM}))",
    re.IGNORECASE,
)
# "halb vier" (3:30), "Viertel nach 3", "dreiviertel 8", "quarter to 5", "half past ten", "20 minutes to 2pm".
_PHRASE_CLOCK = re.compile(
    rf"(?<![{LETTER}\d])(?:(?P<pre>um|gegen|at|ab|@)\s+)?(?:(?P<apx>{APPROX})\s+)?"
    r"(?:(?P<half>halb)|(?P<qpast>viertel\s+nach|(?:a\s+)?quarter\s+(?:past|after))"
    r"|(?P<qto>viertel\s+vor|dreiviertel|drei\s*viertel|(?:a\s+)?quarter\s+(?:to|of|before))|(?P<hpast>half\s+past)"
    r"|(?P<n>\d{1,2}|fünf|zehn|zwanzig|five|ten|twenty)\s+(?P<unit>(?:minuten|minutes|mins?)\s+)?"
    r"(?P<dir>nach|vor|past|after|to|before))"
    rf"\s+(?P<h>{_HOUR})(?:\s?(?P<suf>uhr|o'?clock)|\s?(?P<mer>a\.\s?m\.?|p\.\s?m\.?|am|pm))?"
    rf"(?![{LETTER}\d]|[.:,]\d)",
    re.IGNORECASE,
)
# "nine thirty", "seven twenty-seven", "at five-thirty", "one thirty p m": an English time spoken with its minutes.
_SPOKEN_CLOCK = re.compile(
    rf"(?<![{LETTER}\d\-])(?:(?P<pre>at|@|around|about)\s+)?"
    rf"(?P<h>{alternation(ENGLISH_HOUR_WORDS)})[\s-](?P<m>{alternation(SPOKEN_MINUTES)})(?:\s+minutes)?"
    rf"(?:\s?(?P<mer>{_SPOKEN_MERIDIEM}))?(?![{LETTER}\d\-])",
    re.IGNORECASE,
)
_PHRASE_MINUTES = {"fünf": 5, "five": 5, "zehn": 10, "ten": 10, "zwanzig": 20, "twenty": 20}
# "um drei", "at three": an hour word without "Uhr" or am/pm, after "um" or "at", where what follows makes it a time
# of day (a day, a part of the day, the end of the clause, "Zeit"); "at three locations", "um drei Prozent" are
# counts. "ein" and "one" are articles and numbers far more often than hours ("at one point").
_BARE_WORD_CLOCK = re.compile(
    rf"(?<![{LETTER}\d])(?P<pre>um|at)\s+(?P<h>{alternation([w for w in HOUR_WORDS if w not in ('ein', 'one')])})"
    r"(?=\s*(?:$|[,;!?)]|\.(?!\d)|(?:tomorrow|today|tonight|on|this|next|in\s+the|morgen|heute|übermorgen|am|"
    rf"nachmittags?|abends?|morgens|vormittags?|früh|zeit|time)(?![{LETTER}])))",
    re.IGNORECASE,
)


def phrase_clocks(sentence: str, taken: list[tuple[int, int]]) -> Iterator[ClockMention]:
    """ "halb vier" is 3:30, "Viertel vor 8" 7:45, "quarter past ten" 10:15, "20 minutes to 2pm" 13:40."""
    for m in _PHRASE_CLOCK.finditer(sentence):
        prefix = (m["pre"] or "").lower()
        if overlaps(m.start(), m.end(), taken) or (m["n"] and not (m["unit"] or prefix)):
            continue  # "5 vor 12" is an idiom; "um 5 vor 12" and "5 Minuten vor 12" are times
        text = m["h"].lower()
        hour = int(text) if text.isdigit() else HOUR_WORDS[text]
        meridiem = written_meridiem(m, sentence, prefix)
        if meridiem:
            if not 1 <= hour <= 12:
                continue
            hour = hour % 12 + (12 if meridiem == "pm" else 0)
        elif hour > 23:
            continue
        fixed = bool(meridiem) or hour >= 13
        if m["half"] or m["qto"]:
            back, minute = 1, 30 if m["half"] else 45
        elif m["qpast"] or m["hpast"]:
            back, minute = 0, 15 if m["qpast"] else 30
        else:
            count = int(m["n"]) if m["n"].isdigit() else _PHRASE_MINUTES[m["n"].lower()]
            if not 0 < count < 60:
                continue
            forward = m["dir"].lower() in ("nach", "past", "after")
            back, minute = (0, count) if forward else (1, 60 - count)
        hour -= back
        if hour == 0 and back and not fixed:
            hour = 12  # "halb eins" is half past twelve, whichever twelve the rest of the sentence says
        zone, end = zone_after(sentence, text_end(sentence, m, "mer", meridiem), bool(meridiem))
        refused = refused_as_start(sentence, m, zone)
        morning_default = prefix not in ("at", "@") or morning_after_at(hour % 24, sentence)
        yield ClockMention(m.start(), end, hour % 24, minute, fixed, zone=zone.zone, zone_region=zone.region,
                           refused=refused, morning_default=morning_default)


def spoken_clocks(sentence: str, taken: list[tuple[int, int]]) -> Iterator[ClockMention]:
    """ "nine thirty" is 9:30, "seven twenty-seven" 7:27: a time after "at" or with am/pm, else only right after
    its day ("march eighteenth nine thirty"), where two number words are no count of anything."""
    for m in _SPOKEN_CLOCK.finditer(sentence):
        if overlaps(m.start(), m.end(), taken):
            continue
        prefix = (m["pre"] or "").lower()
        meridiem = "".join(c for c in (m["mer"] or "").lower() if c in "apm")
        hour, minute = ENGLISH_HOUR_WORDS[m["h"].lower()], SPOKEN_MINUTES[" ".join(m["m"].lower().split())]
        if meridiem:
            hour = hour % 12 + (12 if meridiem == "pm" else 0)
        zone, end = zone_after(sentence, m.end(), bool(meridiem))
        # As for "at 8": "at seven thirty" is dinner as often as breakfast; "at nine thirty" the morning.
        morning_default = not prefix or morning_after_at(hour, sentence)
        yield ClockMention(m.start(), end, hour, minute, bool(meridiem), zone=zone.zone, zone_region=zone.region,
                           refused=refused_as_start(sentence, m, zone), morning_default=morning_default,
                           adjacent_any_day=not (prefix or meridiem), minutes_written=True)


def word_clocks(sentence: str, taken: list[tuple[int, int]]) -> Iterator[ClockMention]:
    for m in _WORD_CLOCK.finditer(sentence):
        if overlaps(m.start(), m.end(), taken):
            continue
        prefix = (m["pre"] or m["apx"] or "").lower()
        meridiem = written_meridiem(m, sentence, prefix)
        if not (meridiem or m["suf"]):
            continue
        hour = HOUR_WORDS[m["h"].lower()]
        if meridiem:
            hour = hour % 12 + (12 if meridiem == "pm" else 0)
        zone, end = zone_after(sentence, text_end(sentence, m, "mer", meridiem), bool(meridiem))
        refused = refused_as_start(sentence, m, zone)
        # "acht Uhr dreißig" is 8:30, not 8:00 with a word left over.
        minute = GERMAN_SPOKEN_MINUTES[m["min"].lower()] if m["min"] else 0
        yield ClockMention(m.start(), end, hour, minute, bool(meridiem), None, zone.zone, zone.region, refused,
                           minutes_written=bool(m["min"]))


def bare_word_clocks(sentence: str, taken: list[tuple[int, int]]) -> Iterator[ClockMention]:
    """ "Dienstag Nachmittag um drei" is 15:00, "morgen um drei" too, as "um 3" is. Spoken, "um sieben" is dinner as
    often as breakfast, in German as in English: six to eight stay open without a part of the day, nine to eleven
    are the morning unless the sentence is about an evening (as for "at 9")."""
    for m in _BARE_WORD_CLOCK.finditer(sentence):
        if overlaps(m.start(), m.end(), taken) or changed_by(sentence, m["pre"].lower()):
            continue
        zone, end = zone_after(sentence, m.end(), False)
        yield ClockMention(m.start(), end, HOUR_WORDS[m["h"].lower()], 0, False, zone=zone.zone,
                           zone_region=zone.region, refused=refused_as_start(sentence, m, zone),
                           morning_default=morning_after_at(HOUR_WORDS[m["h"].lower()], sentence))
