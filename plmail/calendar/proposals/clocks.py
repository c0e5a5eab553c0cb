"""Times of day and time ranges written in digits, and parts of the day (words: clock_words.py; zones: zones.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import timedelta

from plmail.calendar.proposals.clock_mentions import (
    APPROX,
    GERMAN_AM_FOLLOWER,
    ClockMention,
    PartMention,
    changed_by,
    deadline_before,
    evening_occasion,
    morning_after_at,
    overlaps,
    refused_as_start,
    text_end,
    written_meridiem,
)
from plmail.calendar.proposals.clock_words import bare_word_clocks, phrase_clocks, spoken_clocks, word_clocks
from plmail.calendar.proposals.durations import MAX_DURATION, MIN_DURATION
from plmail.calendar.proposals.vocabulary import (
    DAY_PART_WORDS,
    LETTER,
    MONTH_ABBREVIATIONS,
    MONTHS,
    WEEKDAYS,
    DayPart,
    alternation,
)
from plmail.calendar.proposals.zones import zone_after

_DAY = 24 * 60
# An hour before this, written without am/pm or a part of the day, is the afternoon (see resolve_hour).
AFTERNOON_BEFORE = 6


@dataclass(frozen=True, slots=True)
class _Read:
    hour: int
    minute: int
    fixed: bool
    explicit: bool  # a colon, "Uhr"/"h"/"o'clock" or am/pm: the digits are a time whatever stands before
    meridiem: str
    uhr: bool = False
    minutes_written: bool = False


def _clock(tag: str) -> str:
    return (
        rf"(?P<{tag}h>\d{{1,2}})(?:(?P<{tag}sep>[:.])(?P<{tag}m>\d{{2}})(?::(?P<{tag}s>\d{{2}}))?)?"
        rf"(?:(?P<{tag}suf>\s?uhr|\s?o'?clock|\s?h(?![{LETTER}]))(?:\s?(?P<{tag}m2>\d{{2}})(?![\d.:]))?)?"
        rf"(?:\s?(?P<{tag}mer>a\.\s?m\.?|p\.\s?m\.?|am|pm)(?![{LETTER}])|(?P<{tag}mer1>[ap])(?![{LETTER}\d]))?"
        # A timetable's "07:35+1": the day after the date written; "14 Uhr +1 Gast" is a guest.
        rf"(?P<{tag}next>\+1(?![\d{LETTER}])|\s\+1(?!\s*[\d{LETTER}]))?"
    )
_EDGE = r"(?<![\w.,:/+\-])"
# "May/22(Tue)-11:30 AM": a time glued with a dash to the bracket closing its day's weekday.
_GLUED_EDGE = rf"(?:{_EDGE}|(?<=[{LETTER}]\)-))"
# A time glued to an airport code is a timetable's ("09.07. 14:15WAW", "1410-1745ECO"), not a word or an amount.
_AIRPORT = rf"(?-i:[A-Z]{{3}})(?![{LETTER}\d])"
_NOT_AN_AMOUNT = rf"(?!(?!{_AIRPORT})[\d{LETTER}]|[.:,]\d|\s?(?:%|€|\$|eur\b|euro|prozent|percent))"
_SINGLE = re.compile(
    rf"{_GLUED_EDGE}(?:(?P<pre>um|gegen|at|ab|from|@)\s*)?(?:(?P<apx>{APPROX})\s*)?{_GLUED_EDGE}{_clock('a')}"
    rf"(?P<ish>-?ish(?![{LETTER}]))?{_NOT_AN_AMOUNT}",  # "10ish" is "around 10"
    re.IGNORECASE,
)
_RANGE = re.compile(
    rf"{_GLUED_EDGE}(?:(?P<win>zwischen|between)\s+|(?P<span>von|from|vom)\s+|(?P<after>later\s+than|after|nach)\s+)?"
    rf"(?:{APPROX}\s+)?{_clock('a')}\s*"
    rf"(?P<conn>-|–|—|bis|to|until|untill|till|til|and|und|(?P<before>,?\s*(?:but|aber)\s+(?:before|vor)))"
    rf"\s*(?:{APPROX}\s+)?{_clock('b')}"
    rf"{_NOT_AN_AMOUNT}(?!/\d)",  # "10:00 to 01/21/2021 12:00": the far side is a date, not an hour
    re.IGNORECASE,
)
_EARLIEST_MORNING = 6
_RANGE_TO_NOON = re.compile(
    rf"{_GLUED_EDGE}(?:(?P<span>von|from|vom)\s+)?{_clock('a')}\s*(?:-|–|—|bis|to|until|till|til)\s*"
    rf"(?:12\s+)?(?:noon|midday|[Mm]ittag)(?![{LETTER}])",
    re.IGNORECASE,
)
_BARE_PREFIXES = frozenset({"um", "gegen", "at", "@"})
# What _read is told instead of a written prefix: a range side, or a dotted time right after its day.
_SYNTHETIC_PREFIXES = frozenset({"range", "adjacent"})
_NOON = re.compile(r"\b(?:at|um|around|about)\s+noon\b|\b12\s+noon\b|\bgegen\s+[Mm]ittag(?![a-zäöüß])", re.IGNORECASE)
# "Friday noon", "tomorrow noon": without "at" a noon is read only right after its day, or right before it.
_BARE_NOON = re.compile(rf"(?<![{LETTER}])noon(?![{LETTER}])", re.IGNORECASE)
_NOON_BEFORE_DAY = re.compile(
    rf"(?<![{LETTER}])noon(?=\s+(?:on\s+)?(?:tomorrow|today|this|next|{alternation(WEEKDAYS)})(?![{LETTER}]))",
    re.IGNORECASE,
)
_SPAN_CONNECTORS = frozenset({"-", "–", "—", "bis", "to", "until", "untill", "till", "til"})
# Four digits are a 24-hour time ("1430 Uhr", "0935-1101", "12 Nov 1115"), three only with am/pm ("830am").
_COMPACT_RANGE = re.compile(
    rf"{_EDGE}(?:(?P<win>zwischen|between)\s+|(?P<pre>von|from|vom|at|um|@)\s*)?"
    r"(?P<ah>[01]\d|2[0-3])(?P<am>[0-5]\d)\s*(?P<conn>-|–|—|bis|to|until|till|til)\s*"
    r"(?P<bh>[01]\d|2[0-3])(?P<bm>[0-5]\d)(?:\s?\+\s?1)?"
    rf"(?:\s?(?P<suf>uhr|h(?![{LETTER}])))?(?!(?!{_AIRPORT})[\d{LETTER}]|[.:,]\d)",
    re.IGNORECASE,
)
_COMPACT_SINGLE = re.compile(
    rf"{_EDGE}(?:(?P<pre>um|gegen|at|ab|from|@)\s*)?(?:(?P<apx>{APPROX})\s*)?{_EDGE}"
    r"(?P<h>[01]?\d|2[0-3])(?P<m>[0-5]\d)"
    rf"(?:\s?(?P<suf>uhr|h(?![{LETTER}]))|\s?(?P<mer>a\.\s?m\.?|p\.\s?m\.?|am|pm)(?![{LETTER}]))?"
    rf"(?![\d{LETTER}]|[.:,]\d|\s?(?:%|€|\$|eur\b|euro|prozent|percent))",
    re.IGNORECASE,
)
_YEARLIKE = re.compile(r"(?:19|20)\d\d")
# "8 tonight", "9 tomorrow morning", "see you 9 tomorrow": a bare hour opening its clause right before its day.
_BEFORE_DAY_WORD = re.compile(
    r"\s+(?:tonight|today|tomorrow|this\s+(?:morning|afternoon|evening))\b",
    re.IGNORECASE,
)
_CLAUSE_START = re.compile(r"(?:^|[,;:(\-–—]|\bsee\s+you)\s*$", re.IGNORECASE)  # not "building 4"
# "ca. 12", "gg 9", "around 7 tonight": an approximate bare hour ends its clause or touches a day or part word.
_APPROX_BARE_END = re.compile(
    rf"\s*(?:[,;!?)]|\.(?!\d)|$)|\s+(?:(?:am|in\s+the)\s+)?(?:{alternation(DAY_PART_WORDS)}|tonight|today|tomorrow"
    rf"|heute|morgen|übermorgen)(?![{LETTER}])",
    re.IGNORECASE,
)
_ENGLISH_APPROX = frozenset({"around", "about", "approx", "approx.", "approximately"})
_PART = re.compile(
    rf"(?<![{LETTER}])(?<!guten\s)(?<!gute\s)(?<!good\s)(?:(?:am|in\s+the|at)\s+)?"
    rf"(?P<word>{alternation(DAY_PART_WORDS)})(?![{LETTER}])",
    re.IGNORECASE,
)
_PART_RIGHT_AFTER = re.compile(
    rf"\s+(?:(?:am|in\s+the)\s+)?(?:{alternation(DAY_PART_WORDS)})(?![{LETTER}])", re.IGNORECASE
)
# "next Monday morning 6-8", "Freitag abends 7-9": the part of the day written right before two numbers.
_PART_RIGHT_BEFORE = re.compile(rf"(?<![{LETTER}])(?:{alternation(DAY_PART_WORDS)})\s+$", re.IGNORECASE)
# After a bare "um 14", these make it an amount or a day ("um 14 Prozent", "at 14 Main Street",
# "at 18 and 19 June").
_MONTH_RIGHT_AFTER = (rf"(?:\.|st|nd|rd|th)?\s*(?:of\s+)?(?:{alternation(MONTHS)}|{alternation(MONTH_ABBREVIATIONS)})"
                      rf"(?![{LETTER}])")
_AMOUNT_AFTER = re.compile(
    r"\s*(?:%|€|\$|prozent|percent|euro|eur|dollar|cent|minuten|minutes|min|mins|stunden|hours|tage|days|wochen|"
    r"weeks|monate|months|jahre|jahren|years|mal|times|stück|grad|degrees|punkte|points|km|kg|mb|gb|personen|"
    r"people|leute|plätze|seats|[\wäöü]*stra(?:ß|ss)e|[A-Z]\w+\s+(?:street|st\.|road|avenue|ave\.?)(?!\w)|"
    rf"(?:and|und|to|bis|-|–)\s*\d|{_MONTH_RIGHT_AFTER})",
    re.IGNORECASE,
)
# "14 Uhr bis 7. August": a bare number at a range's far end with its month after it is the next day, not an hour.
_DAY_OF_A_MONTH_AFTER = re.compile(_MONTH_RIGHT_AFTER, re.IGNORECASE)


def _read(m: re.Match[str], tag: str, sentence: str, prefix: str) -> _Read | None:
    """One clock's hour and minute, or None when the digits are not a time."""
    hour_text = m[f"{tag}h"]
    hour, minute = int(hour_text), int(m[f"{tag}m"] or m[f"{tag}m2"] or 0)
    raw_suffix = m[f"{tag}suf"] or ""
    sep, suffix = m[f"{tag}sep"], raw_suffix.strip().lower()
    if raw_suffix.startswith(" ") and suffix == "h" and not sep:
        return None  # "2 h" is a length, "14h" and "18.00 h" are times
    meridiem = (m[f"{tag}mer"] or "").lower().replace(".", "").replace(" ", "")
    # German "am" is a preposition ("um 3 am Nachmittag", "10 am Montag", "18 Uhr am Bahnhof", "18:00 am Tor"), not
    # a.m. ("9am ET", "9am Monday"); after "Uhr" or an hour past 12 it can be nothing else.
    german_am = (prefix in ("um", "gegen", "ab") or suffix == "uhr" or hour > 12
                 or GERMAN_AM_FOLLOWER.match(sentence, m.end(f"{tag}mer")))
    if meridiem == "am" and german_am:
        meridiem = ""
    if m[f"{tag}mer1"]:
        if prefix not in ("at", "@", "from", "range"):
            return None  # "Zimmer 12a" is a room; "at 9a" and "9a to 11a" are times
        meridiem = m[f"{tag}mer1"].lower() + "m"
    if sep == "." and not (suffix or meridiem or prefix):
        return None
    if minute > 59:
        return None
    written_prefix = prefix not in _SYNTHETIC_PREFIXES and bool(prefix)
    explicit = sep == ":" or bool(suffix) or bool(meridiem) or (sep == "." and written_prefix)
    if meridiem:
        if not 1 <= hour <= 12:
            return None
        return _Read(hour % 12 + (12 if meridiem == "pm" else 0), minute, True, True, meridiem)
    if hour > 23:
        return None
    fixed = hour >= 13 or hour == 0 or (len(hour_text) == 2 and hour_text.startswith("0"))
    minutes_written = bool(m[f"{tag}m"] or m[f"{tag}m2"])
    return _Read(hour, minute, fixed, explicit, "", suffix in ("uhr", "h"), minutes_written)


def _range(a: _Read, b: _Read) -> tuple[int, int, bool, timedelta] | None:
    """Carry am/pm from the end to the start ("2-4pm", "8-9am"); the length survives a later shift."""
    if b.meridiem == "am" and b.hour == 0 and a.meridiem != "pm" and 0 < a.hour < 12:
        b = replace(b, hour=12)  # "10am-12am" ends at noon: a morning that runs to midnight is no appointment
    hour, fixed = a.hour, a.fixed
    if not a.fixed and b.fixed and not b.meridiem and a.hour < b.hour < a.hour + 12:
        fixed = True  # "6:10 - 13:35", "9-17 Uhr": a start twelve hours later would come after the end
    elif not a.fixed and b.meridiem == "pm" and a.hour < 12:
        hour = a.hour + 12 if a.hour + 12 <= b.hour else a.hour
        fixed = True
    elif not a.fixed and b.meridiem == "am" and a.hour <= b.hour:
        fixed = True
    start, end = hour * 60 + a.minute, b.hour * 60 + b.minute
    if end <= start and hour <= 12 and b.hour < 12 and not b.fixed and b.hour + 12 > hour:
        end += 12 * 60  # "10:30 to 3", "12-4"
    length = timedelta(minutes=(end - start) % _DAY)
    if not MIN_DURATION <= length <= MAX_DURATION:
        return None
    return hour, a.minute, fixed, length


def _end_fixes_the_half(a: _Read, b: _Read) -> bool:
    """Two plain hours whose end says which half of the day the start is in: a 24-hour end after a morning
    start ("9-17", "11-14"), or an end before a start of 7 to 12, which only an afternoon end allows ("11-4",
    "12-4", "9-5"). "3-8" or "6-8" could be either half and stays unread."""
    if a.fixed or a.minutes_written or b.minutes_written:
        return False
    if b.fixed:
        return 7 <= a.hour < b.hour <= 23
    return 7 <= a.hour <= 12 and 1 <= b.hour < a.hour


# "Johannes 3:16", "1 Corinthians 13:12", "Ps 23:4": chapter and verse, written as a clock is.
_BOOKS = (
    "genesis|exodus|levitikus|leviticus|numeri|numbers|deuteronomium|deuteronomy|richter|judges|könige|koenige"
    "|kings|chronik|chronicles|esra|ezra|nehemia|nehemiah|hiob|ijob|psalms?|psalmen|ps|sprüche|sprueche|proverbs"
    "|prediger|kohelet|ecclesiastes|jesaja|isaiah|jeremia|jeremiah|klagelieder|lamentations|hesekiel|ezechiel"
    "|ezekiel|obadja|obadiah|habakuk|habakkuk|zefanja|zephaniah|haggai|sacharja|zechariah|maleachi|malachi"
    "|matthäus|matthaeus|matthew|mt|mk|lk|joh|apostelgeschichte|acts|apg|römer|roemer|romans|röm|korinther"
    "|corinthians|kor|cor|galater|galatians|epheser|ephesians|philipper|philippians|kolosser|colossians"
    "|thessalonicher|thessalonians|hebräer|hebraeer|hebrews|offenbarung|revelation"
)
# Books that are first names too: "call John 10:30" is a time, so these take a verse only where no appointment
# would be: minutes off the five-minute grid ("John 3:16"), a numbered book ("1 John 4:8") or a verse range.
_NAMED_BOOKS = (
    "john|johannes|mark|markus|luke|lukas|daniel|james|jakobus|peter|petrus|ruth?|joel|amos|titus|jude|judas"
    "|samuel|esther?|jonah?|micah?|hosea|joshua|josua|timothy|timotheus|philemon|job|nahum"
)
_BOOK_BEFORE = re.compile(
    rf"(?<![{LETTER}])(?P<n>[1-3]\.?\s*)?(?:(?P<book>{_BOOKS})|(?P<named>{_NAMED_BOOKS}))\.?\s+$", re.IGNORECASE
)


def _scripture(sentence: str, m: re.Match[str], written_prefix: str, *, verses: bool = False) -> bool:
    """A bare "3:16" right after a book of the Bible is its chapter and verse; "John at 3:16pm" is still a time.

    `verses`: the match goes on to a bare number, as "2:10-12" does, a range of verses."""
    bare = not (written_prefix or m["asuf"] or m["amer"] or m["amer1"]) and m["asep"] == ":"
    book = _BOOK_BEFORE.search(sentence, max(0, m.start() - 40), m.start()) if bare else None
    if book is None:
        return False
    return bool(book["book"] or book["n"] or verses or int(m["am"]) % 5)


def _odd_seconds(m: re.Match[str], tag: str) -> bool:
    """"8:00:31" is a log line or a timestamp, not an appointment."""
    return bool(m[f"{tag}s"]) and m[f"{tag}s"] != "00"


def _ranges(sentence: str, taken: list[tuple[int, int]]) -> Iterator[ClockMention]:
    for m in _RANGE.finditer(sentence):
        if overlaps(m.start(), m.end(), taken):
            continue
        a, b = _read(m, "a", sentence, "range"), _read(m, "b", sentence, "range")
        if a is None or b is None or bool(m["after"]) != bool(m["before"]):
            continue  # "after 9:30 but before 11:00" is a window like "between"; "after 9 to 11" is no range
        if not b.explicit and _DAY_OF_A_MONTH_AFTER.match(sentence, m.end()):
            continue
        adjacent_only = adjacent_any = False
        date_like: tuple[int, int] | None = None
        if not (a.explicit or b.explicit):
            if m["span"] and m["conn"].lower() in _SPAN_CONNECTORS and not _AMOUNT_AFTER.match(sentence, m.end()):
                pass  # "von 9 bis 11", "from 9 to 11": "von … bis" between two numbers is a span of hours
            elif m["win"] and m["conn"].lower() in ("and", "und") and not _AMOUNT_AFTER.match(sentence, m.end()):
                pass  # "zwischen 9 und 11", "between 9 and 11": so is "zwischen … und"
            elif m["conn"] in ("-", "–") and (
                _PART_RIGHT_AFTER.match(sentence, m.end()) or _PART_RIGHT_BEFORE.search(sentence, 0, m.start())
            ):
                pass  # "Friday 5-6 in the evening", "Monday morning 6-8": a part of the day makes two numbers hours
            elif m["asep"] == "." and m["bsep"] == ".":
                adjacent_only = True  # "17.05-18.15" is a span of time only right after its day
            elif a.fixed and b.fixed:
                adjacent_any = True  # "27.10.2017 20-21": two 24-hour hours right after their day
            elif m["conn"] in ("-", "–") and _end_fixes_the_half(a, b):
                adjacent_any = True  # "Montag 9-17", "Monday 11-4": hours right after their day, unless its date
                date_like = (a.hour, b.hour)
            else:
                continue
        resolved = _range(a, b)
        # "between 2 and 4pm", "zwischen 14 und 16 Uhr": both ends written, the event's span like "14–16 Uhr".
        # "and" without "between" joins two choices ("um 9 und 10 Uhr"), not two ends.
        # "after 9:30 but before 11:00", "nach 9:30 aber vor 11:00" bound the same span.
        choices = m["conn"].lower() in ("and", "und") and not m["win"]
        zone, end = zone_after(sentence, text_end(sentence, m, "bmer", b.meridiem), bool(m["amer"] or m["bmer"]))
        if resolved is None:
            yield ClockMention(m.start(), end, a.hour, a.minute, a.fixed, refused=True, adjacent_only=adjacent_only,
                               adjacent_any_day=adjacent_any)
            continue
        hour, minute, fixed, length = resolved
        verses = not (m["bsep"] or m["bsuf"] or m["bmer"] or m["bmer1"])
        refused = (choices or zone.unknown or deadline_before(sentence, m.start())
                   or _odd_seconds(m, "a") or _odd_seconds(m, "b")
                   or _scripture(sentence, m, m["win"] or m["span"] or m["after"] or "", verses=verses))
        yield ClockMention(m.start(), end, hour, minute, fixed, length, zone.zone, zone.region, refused, adjacent_only,
                           adjacent_any_day=adjacent_any, uhr=a.uhr or b.uhr, minutes_written=a.minutes_written,
                           next_day=m["anext"] is not None, date_like=date_like)


def _ranges_to_noon(sentence: str, taken: list[tuple[int, int]]) -> Iterator[ClockMention]:
    """ "from 10 till noon", "10am to noon", "von 10 Uhr bis Mittag": the end is noon, so the start is the morning."""
    for m in _RANGE_TO_NOON.finditer(sentence):
        if overlaps(m.start(), m.end(), taken):
            continue
        start = _read(m, "a", sentence, "range")
        # Before noon and not in the night: "from 2 till noon" would be ten hours from 02:00.
        if start is None or start.meridiem == "pm" or not (_EARLIEST_MORNING <= start.hour < 12 or start.meridiem):
            continue
        if not (m["span"] or start.explicit):
            continue  # "10 to noon" alone may be a count; "from 10" or "10am", "10 Uhr" is a time
        refused = deadline_before(sentence, m.start()) or _odd_seconds(m, "a")
        length = timedelta(hours=12) - timedelta(hours=start.hour, minutes=start.minute)
        yield ClockMention(m.start(), m.end(), start.hour, start.minute, True, length, refused=refused,
                           uhr=start.uhr, minutes_written=start.minutes_written)


def _compact_ranges(sentence: str, taken: list[tuple[int, int]]) -> Iterator[ClockMention]:
    """ "0935-1101", "1845-1955 Uhr": without "Uhr" or "at" only right after a day (else they may be years)."""
    for m in _COMPACT_RANGE.finditer(sentence):
        if overlaps(m.start(), m.end(), taken):
            continue
        hour, minute = int(m["ah"]), int(m["am"])
        first, last = hour * 60 + minute, int(m["bh"]) * 60 + int(m["bm"])
        length = timedelta(minutes=(last - first) % _DAY)  # "2205-0455" runs past midnight
        written = bool(m["suf"]) or (m["pre"] or "").lower() in ("at", "um", "@")
        zone, end = zone_after(sentence, m.end(), False)
        if not MIN_DURATION <= length <= MAX_DURATION:
            yield ClockMention(m.start(), end, hour, minute, True, refused=True, adjacent_any_day=not written)
            continue
        refused = zone.unknown or deadline_before(sentence, m.start())
        yield ClockMention(m.start(), end, hour, minute, True, length, zone.zone, zone.region, refused,
                           adjacent_any_day=not written)


def _compact_singles(sentence: str, taken: list[tuple[int, int]]) -> Iterator[ClockMention]:
    """ "1430 Uhr", "0845am", "830am", and a bare "1115" right after its day ("12 Nov 1115")."""
    for m in _COMPACT_SINGLE.finditer(sentence):
        if overlaps(m.start(), m.end(), taken):
            continue
        prefix = (m["pre"] or m["apx"] or "").lower()
        hour, minute = int(m["h"]), int(m["m"])
        meridiem = written_meridiem(m, sentence, prefix)
        if meridiem and 1 <= hour <= 12:
            hour = hour % 12 + (12 if meridiem == "pm" else 0)
        elif meridiem and not (hour >= 13 and meridiem == "pm"):
            continue  # "1515pm" says 15:15 twice; "1430am" contradicts itself
        elif not meridiem and len(m["h"]) == 1:
            continue  # three digits are a time only with am/pm
        written = bool(m["suf"] or meridiem)
        if not written and (_YEARLIKE.fullmatch(m["h"] + m["m"]) or _AMOUNT_AFTER.match(sentence, m.end())):
            continue  # "Sunday 2015" is a year as often as a time
        zone, end = zone_after(sentence, text_end(sentence, m, "mer", meridiem), bool(meridiem))
        refused = refused_as_start(sentence, m, zone)
        yield ClockMention(m.start(), end, hour, minute, True, None, zone.zone, zone.region, refused,
                           adjacent_any_day=not written)


def _singles(sentence: str, taken: list[tuple[int, int]]) -> Iterator[ClockMention]:
    for m in _SINGLE.finditer(sentence):
        if overlaps(m.start(), m.end(), taken):
            continue
        written_prefix, approx = (m["pre"] or "").lower(), (m["apx"] or "").lower()
        approx = approx or ("around" if m["ish"] else "")
        read = _read(m, "a", sentence, written_prefix or approx)
        adjacent_only = False
        if read is None:
            if m["asep"] != "." or m["asuf"] or m["amer"] or m["amer1"] or written_prefix or approx \
                    or sentence.startswith(".", m.end()):
                continue
            read = _read(m, "a", sentence, "adjacent")
            if read is None:
                continue
            adjacent_only = True  # "6. August 11.05": a dotted time only right after its day
        elif not read.explicit:
            bare = (written_prefix in _BARE_PREFIXES and not _AMOUNT_AFTER.match(sentence, m.end())
                    and not changed_by(sentence, written_prefix))
            approximate = not written_prefix and approx and _APPROX_BARE_END.match(sentence, m.end())
            before_day = (not (written_prefix or approx) and _BEFORE_DAY_WORD.match(sentence, m.end())
                          and _CLAUSE_START.search(sentence, 0, m.start()))
            if not (bare or approximate or before_day):
                continue
        # English "at 8" (or "around 8") is dinner at 20:00 as often as a meeting at 08:00; German "um 8" is 08:00.
        zone, end = zone_after(sentence, text_end(sentence, m, "amer", read.meridiem), bool(m["amer"] or m["amer1"]))
        # "at 8 GMT": a time given in a zone is a clock reading for readers elsewhere, as written.
        morning_default = (read.explicit or (written_prefix not in ("at", "@") and approx not in _ENGLISH_APPROX)
                           or morning_after_at(read.hour, sentence) or zone.zone is not None)
        refused = (refused_as_start(sentence, m, zone) or _odd_seconds(m, "a")
                   or _scripture(sentence, m, written_prefix or approx))
        yield ClockMention(m.start(), end, read.hour, read.minute, read.fixed, None, zone.zone, zone.region, refused,
                           adjacent_only, morning_default, uhr=read.uhr, minutes_written=read.minutes_written,
                           next_day=m["anext"] is not None, evening_occasion=evening_occasion(sentence))


def _noons(sentence: str, taken: list[tuple[int, int]]) -> Iterator[ClockMention]:
    for m in _NOON.finditer(sentence):
        if not overlaps(m.start(), m.end(), taken):
            yield ClockMention(m.start(), m.end(), 12, 0, True)
    for m in _NOON_BEFORE_DAY.finditer(sentence):
        if not overlaps(m.start(), m.end(), taken):
            yield ClockMention(m.start(), m.end(), 12, 0, True, refused=deadline_before(sentence, m.start()))
    for m in _BARE_NOON.finditer(sentence):
        if not overlaps(m.start(), m.end(), taken):
            yield ClockMention(m.start(), m.end(), 12, 0, True, refused=deadline_before(sentence, m.start()),
                               adjacent_any_day=True)
_FINDERS = (phrase_clocks, spoken_clocks, _ranges_to_noon, _ranges, _compact_ranges, _compact_singles, word_clocks,
            bare_word_clocks, _singles, _noons)


def find_clocks(sentence: str) -> list[ClockMention]:
    """Every time the sentence writes, phrases and ranges first; refused ones stay so their digits are not re-read."""
    clocks: list[ClockMention] = []
    taken: list[tuple[int, int]] = []
    for finder in _FINDERS:
        for mention in finder(sentence, taken):
            clocks.append(mention)
            taken.append((mention.start, mention.end))
    return _join_zoned_windows(sentence, sorted(clocks, key=lambda c: c.start))
_WINDOW_JOINT = re.compile(r"\s*(?P<conn>-|–|—|bis|to|until|till|and|und)\s*", re.IGNORECASE)
_WINDOW_OPENER = re.compile(r"\b(?:between|zwischen)\s+$", re.IGNORECASE)


def _one_half(first: ClockMention, second: ClockMention) -> bool:
    """Both hours fixed ("2pm", "14:00"), or both open and in order ("9 Uhr UTC und 11 Uhr UTC")."""
    return (first.fixed and second.fixed) or (not first.fixed and not second.fixed and first.hour < second.hour)


def _join_zoned_windows(sentence: str, clocks: list[ClockMention]) -> list[ClockMention]:
    """ "2:00 PM EST - 3:00 PM EST", "between 830am ET and 9am ET", "von 14:00 MEZ bis 15:00 MEZ": two times
    that carry the same zone, joined as a range, are one time and its length, not two times for one day."""
    joined: list[ClockMention] = []
    for clock in clocks:
        first = joined[-1] if joined else None
        if first is None or first.zone is None or first.length or clock.length or not _one_half(first, clock):
            joined.append(clock)
            continue
        joint = _WINDOW_JOINT.fullmatch(sentence, first.end, clock.start)
        same_zone = (first.zone, first.zone_region) == (clock.zone, clock.zone_region)
        # "and" joins two ends only after "between" ("at 2pm ET and 3pm ET" are two choices).
        window = joint is not None and (
            joint["conn"].lower() not in ("and", "und") or _WINDOW_OPENER.search(sentence, 0, first.start) is not None
        )
        length = timedelta(minutes=(clock.hour * 60 + clock.minute - first.hour * 60 - first.minute) % _DAY)
        if not (same_zone and window and MIN_DURATION <= length <= MAX_DURATION):
            joined.append(clock)
            continue
        joined[-1] = replace(first, end=clock.end, length=length)
    return joined


def find_parts(sentence: str) -> list[PartMention]:
    return [PartMention(m.start(), m.end(), DAY_PART_WORDS[m["word"].lower()]) for m in _PART.finditer(sentence)]


def resolve_hour(clock: ClockMention, part: DayPart | None, *, german: bool = False) -> int | None:
    """The 24-hour hour, or None when the writing leaves it open ("um 3" is 03:00 or 15:00).

    Without a part of day, 7 to 12 read as written (the 24-hour convention of German mail, and English
    "9:00" or "10 o'clock"); a bare English "at 8" is a dinner as often as a meeting and stays open, and
    so does a 6. An hour before six is the afternoon ("Freitag um 3", "Friday at 5"), as Thunderbird's
    calExtract reads it: a time in the night is written with am or a part of the day. One exception: a
    clock reading of 5 or 6 written the German way ("5:30 Uhr", or "6:38" in German mail) is the morning,
    since an evening there is written 17 or 18 and 05:xx-06:xx is when early trains, flights and shifts leave.
    """
    hour = clock.hour
    if clock.fixed:
        consistent = {
            None: True,
            DayPart.MORNING: hour < 12,
            DayPart.NOON: 11 <= hour <= 14,
            DayPart.AFTERNOON: 12 <= hour <= 18,
            DayPart.EVENING: 16 <= hour <= 23,
            DayPart.NIGHT: hour >= 20 or hour <= 5,
        }[part]
        return hour if consistent else None
    if part is None:
        early = hour in (5, 6) and (clock.uhr or (german and clock.minutes_written))
        if clock.evening_occasion and (early or 6 <= hour <= 11):
            return None  # "Dinner on Saturday at 7:30": not 07:30, and 19:30 only if the writer says so
        if early:
            return hour
        if 1 <= hour < AFTERNOON_BEFORE:
            return hour + 12
        return hour if 7 <= hour <= 12 and (clock.morning_default or hour == 12) else None
    if part is DayPart.MORNING:
        return hour if hour <= 11 else None
    if part is DayPart.NOON:
        return hour if hour in (11, 12) else hour + 12 if hour <= 2 else None
    if part is DayPart.AFTERNOON:
        return hour + 12 if hour <= 6 else None
    if part is DayPart.EVENING:
        return hour + 12 if 5 <= hour <= 11 else None
    return hour if hour <= 5 else hour + 12 if 8 <= hour <= 11 else None
