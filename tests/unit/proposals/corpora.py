"""The three public time-expression corpora as detector cases, and how a detector scores on them.

Shared by `test_corpus_accuracy.py` and `benchmarks/proposal_accuracy.py`. A case is one text with its
reference time and every gold reading it admits (Recognizers-Text lists the past and the future reading
of an underspecified date; both count). A candidate is
- exact when its day (and, if timed, its start time) equals a gold reading of the same granularity,
- partial when the day is right but one side has a time and the other does not,
- wrong otherwise, including any candidate for a text whose gold names no day at all.
Precision is exact / all candidates (partial counts against it); recall is gold day+time readings
(or day readings) found exactly / all such readings in texts that name a concrete day.

Issue 37 keeps the refusal of numeric dates without their four-digit year ("04.08.", "04.08.26", "8/4",
"22.-23.10."): the detector must not offer them. Recall over all gold counts those as misses and is kept as it
is; a second day+time recall, "the forms the issue allows", leaves out of its denominator (and numerator) the
cases whose only written day is such a date (`names_a_day_only_without_its_year`), and counts them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from plmail.domain.calendar import DetectionRequest, ProposalCandidate
from plmail.domain.enums import Locale
from plmail.domain.ports import ProposalDetector

CORPUS_ROOT = Path(__file__).resolve().parents[4] / "shared" / "corpus"
DUCKLING = CORPUS_ROOT / "duckling-time-corpus" / "duckling_time_en_de.jsonl"
RECOGNIZERS = CORPUS_ROOT / "recognizers-text-datetime"
CTPARSE = CORPUS_ROOT / "ctparse-timeparse-corpus"
# The end-to-end specs; the split-date/time, tasks and calendar modes resolve the same text differently.
RECOGNIZERS_FILES = ("DateTimeModel.json", "DateTimeModelComplexCalendar.json",
                     "DateTimeModelExperimentalMode.json", "DateTimeModelExtendedTypes.json")  # fmt: skip

# Which texts name a concrete day (Duckling's and ctparse's gold fill in a day for a bare "15:20"). Finnish and
# Dutch month names count too: ctparse's corpus has them ("12 loka 13:10"), and a day they name is a day missed.
_NAMES_A_DAY = re.compile(
    r"(?:\b|(?<=\d[ap]m))(?:(?:mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)(?:day)?|montag|dienstag|mittwoch|donnerstag|"
    r"freitag|samstag|sonntag|(?:mo|di|mi|do|fr|sa|so)(?=[.,])|(?-i:(?:Mo|Di|Mi|Do|Fr|Sa)(?=\s+um\b))|"
    r"jan(?:uary|uar|uari)?|feb(?:ruary|ruar|ruari)?|mar(?:ch)?|märz|apr(?:il)?|may|mai|"
    r"june?|juni|july?|juli|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|okt(?:ober)?|nov(?:ember)?|dec(?:ember)?|"
    r"dez(?:ember)?|today|tomorrow|tonight|heute|morgen|übermorgen|tammi|helmi|maalis|huhti|touko|kesä|heinä|elo|"
    r"syys|loka|marras|joulu)\b(?![\s.]*uhr\b)|(?<=\d)(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\b|"
    r"(?<![\d.])(?<!\bum\s)(?<!\bat\s)\d{1,2}[./]\s?\d{1,2}|\bam\s+\d{1,2}\.(?!\d)|"
    r"\d{4}-\d{2}-\d{2}|\d{1,2}(?:st|nd|rd|th|te)\b",
    re.IGNORECASE,
)
_NAMES_A_TIME = re.compile(r"\d|\bnoon\b", re.IGNORECASE)
# The digits of a day or a year are no time: "february the 15th in the morning", "morgens am 15. februar" and
# "last weekend of October 2017" write no clock, though Duckling's gold starts them at 00:00, 03:00 or 18:00.
_MONTH_WORD = (r"(?:jan(?:uary|uar)?|feb(?:ruary|ruar)?|mar(?:ch)?|märz|apr(?:il)?|may|mai|june?|juni|july?|juli|"
               r"aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|okt(?:ober)?|nov(?:ember)?|dec(?:ember)?|dez(?:ember)?)\b")
_DATE_DIGITS = re.compile(
    rf"\b\d{{1,2}}(?:st|nd|rd|th|te|\.)?\s*(?:of\s+)?(?={_MONTH_WORD})|\b\d{{1,2}}(?:st|nd|rd|th)\b|\b(?:19|20)\d\d\b",
    re.IGNORECASE,
)


# A numeric date, dotted or slashed, with what follows it: "04.08.", "4.8", "8/4", "04.08.26", "22.-23.10.", and
# "10.08.2026", "24.07. 2017" or "05/31/2024" (whose four-digit year, 19xx or 20xx as the detector reads it, the
# issue allows; "02.08. 1845-1955" is a year-less date and a time range). A weekday written before it belongs to
# it ("Dienstag, den 04.08."): it names the same day, and the detector refuses the pair too. Day and month are
# checked in code; a pair that can be no date ("06.45", "10.30", "11.00") is a time.
_WEEKDAY_WORD = (r"(?:montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag|monday|tuesday|wednesday|thursday|"
                 r"friday|saturday|sunday|mon|tues?|wed|thu(?:rs?)?|fri|sat|sun|mo|di|mi|do|fr|sa|so)")
_NUMERIC_DATE = re.compile(
    rf"(?P<weekday>\b{_WEEKDAY_WORD}\.?,?\s*(?:den\s+)?)?"
    r"(?<![\d.,/])(?:\d{1,2}\.(?:\d{1,2}\.)?\s?[-–]\s?)?(?P<a>\d{1,2})(?P<sep>[./])\s?(?P<b>\d{1,2})"
    r"(?:[./](?P<year>\s?(?:19|20)\d{2}(?!\d)|\d{2}(?!\d))?)?(?!\d)",
    re.IGNORECASE,
)


def names_a_day_only_without_its_year(text: str) -> bool:
    """The text writes a numeric date without a four-digit year, and no other day (issue 37 refuses those).

    Year-less numeric dates (day and month each possible in either order, with a weekday written before them)
    and dotted times are blanked out; if the text then no longer names a day (`_NAMES_A_DAY`, the rule that
    decides which gold counts for recall), the year-less date was its only written day. Dates with their
    four-digit year are kept, so "vom 04.08. bis 06.08.2026" still counts.
    """
    yearless_found = False

    def blank(m: re.Match[str]) -> str:
        nonlocal yearless_found
        a, b = int(m["a"]), int(m["b"])
        # Dots are day first in any language; a slash is either way round.
        month_fits = b <= 12 if m["sep"] == "." else (a <= 12 or b <= 12)
        if not (min(a, b) >= 1 and month_fits and max(a, b) <= 31):
            return (m["weekday"] or "") + " "  # "06.45", "Sonntag 10.30": a time, no day
        if m["year"] is not None and len(m["year"].strip()) == 4:
            return m[0]
        yearless_found = True
        return " "

    stripped = _NUMERIC_DATE.sub(blank, text)
    return yearless_found and _NAMES_A_DAY.search(stripped) is None


def _writes_a_time(text: str) -> bool:
    return _NAMES_A_TIME.search(_DATE_DIGITS.sub(" ", text)) is not None


# Cases whose gold contradicts their own text, left out of every score (precision and recall), each with its
# reason. Keyed by corpus, text and reference time (minutes). Only answers a reader can check from the text
# alone are listed; a reading the corpus merely prefers (the second of two times, a bare "jetzt") is not.
_SAME_TEXT_SAYS = "the text says otherwise"
WRONG_GOLD: dict[tuple[str, str, str], str] = {
    ("duckling", "this morning at 3", "2013-02-12T04:30"): "gold is tomorrow; 'this morning' is the message's day",
    ("duckling", "tonight at 2", "2013-02-12T04:30"): "gold is 14:00, an afternoon; the text says tonight",
    ("duckling", "tonight @ 3:20", "2013-02-12T04:30"): "gold is 15:20, an afternoon; the text says tonight",
    ("recognizers", "Hi Cortana, Please send a 30-minute Skype meeting invite for tomorrow at 1p PT.",
     "2018-06-19T00:00"): "gold puts PT at UTC-8 on 20 June; Pacific time is then PDT, UTC-7",
    ("recognizers", "Cortana, schedule 30 minutes next Tuesday around 3pm pacific for us to Skype.",
     "2018-06-19T00:00"): "gold puts pacific at UTC-8 on 26 June; Pacific time is then PDT, UTC-7",
    ("recognizers", "Cortana please set up a call today for 10 minutes and also set up a 30 minute call Wednesday "
     "at 7 PM Eastern.", "2018-06-19T00:00"): "gold puts Eastern at UTC-5 on 20 June; Eastern time is then EDT, UTC-4",
    ("recognizers", "Book a meeting for Monday 21 between 9:30 and 3:00 pm PST.",
     "2019-02-27T00:00"): "gold starts 9:30 UTC; the text says PST, UTC-8 (its ComplexCalendar twin: 17:30 UTC)",
    ("recognizers", "I'll leave on May/22(Tue)-11:30 AM PT.", "2018-07-30T20:00"): "gold is 11:30 UTC, PT left out; "
     "Pacific time on 22 May is PDT, UTC-7 (its ComplexCalendar twin, not read, puts PT at UTC-8)",
    ("recognizers", "book my time for swimming every Tuesday and Thursday 19:00 - 21:00.",
     "2019-03-01T00:00"): "gold is one Thursday; the text says every Tuesday and Thursday, a set",
    ("ctparse", "12 Nov 1115", "2017-08-25T12:15"): "gold is 13 Nov; the text says 12 Nov",
    ("ctparse", "1 Nov 1015", "2017-08-25T12:23"): "gold is 2 Nov; the text says 1 Nov",
    ("ctparse", "8 Nov 1015", "2017-08-25T12:15"): "gold is 9 Nov; the text says 8 Nov",
    ("ctparse", "Mon, Dec 11 6:40 PM - 8:20 PM", "2017-11-24T11:13"): "gold starts 18:49; the text says 6:40 PM",
    ("ctparse", "Wed, Oct 11 8:30 PM - 9:47 PM", "2017-09-19T17:01"): "gold starts 08:30; the text says 8:30 PM",
    ("ctparse", "11.10.17 10.50-11.35 Uhr", "2017-10-09T13:18"): "gold starts 10:00; the text says 10.50",
    ("ctparse", "Montag, 30.10 14:52h bis 19:14h", "2017-10-27T14:09"): "gold starts 15:52; the text says 14:52h",
    ("ctparse", "11.6., 23:10", "2017-06-07T10:41"): "gold is 23:20; the text says 23:10",
    ("ctparse", "June 29th at 7am", "2017-06-20T08:23"): "gold is 29 May; the text says June 29th",
    ("ctparse", "Do., 28.09.2017 06:45", "2017-09-07T12:32"): "gold is 29.09.; the text says Do., 28.09.2017",
    ("ctparse", "am Mittwoch den 19.07. gegen 17:30", "2017-07-14T10:58"): "gold is 17.07.; the text says 19.07.",
    ("ctparse", "07.10.2017 ca. 9.00", "2017-08-07T07:58"): "gold is 01.10.; the text says 07.10.2017",
    ("ctparse", "05.11.2017 15:40", "2017-10-16T08:39"): "gold is 06.11.; the text says 05.11.2017",
    ("ctparse", "10.10., 19:20", "2017-10-09T09:40"): "gold is 2018; 10 October is the day after the message",
    ("ctparse", "am Freitag, 26.01.2018 - ab 15.00 Uhr", "2017-09-26T12:18"): "gold is 2017; the text says 2018",
    ("ctparse", "06.09.2016 - Nachmittags ab 16:00", "2017-09-01T14:07"): "gold is 2017; the text says 2016",
    ("ctparse", "Thurs 2 Nov 2015", "2017-10-29T18:23"): "gold has 2017 and 20:15; the text has 2015 and no time",
    ("ctparse", "Donnerstag gegen 18:30", "2017-11-07T10:12"): "gold skips a week: the coming Thursday is 9 Nov",
    ("ctparse", "am Donnerstag gegen 21 Uhr", "2017-09-18T07:48"): "gold skips a week: the coming Thursday is 21 Sep",
    ("ctparse", "Fr um 16:25 Uhr", "2017-11-29T13:42"): "gold skips a week: the coming Friday is 1 Dec",
    ("ctparse", "am Freitag ab 17.00 Uhr", "2017-10-19T06:03"): "gold is three weeks on: the coming Friday is 20 Oct",
    ("ctparse", "Donnerstag 3:30", "2017-06-02T14:46"): "gold is four weeks on: the coming Thursday is 8 Jun",
    ("ctparse", "heute bis 14:00 Uhr", "2017-09-07T07:10"): "gold starts 08:00; the text writes only an end",
    ("ctparse", "morgen selben Uhrzeit", "2017-09-27T11:38"): "gold is 17:00; the text names no hour",
    ("ctparse", "21.09 Uhr", "2017-10-11T12:42"): "gold is 18 Oct 21:09; the text names no day",
    ("ctparse", "31.9 around 0720", "2017-08-25T13:44"): "gold is 1 Oct; 31 September does not exist",
    ("ctparse", "vom 22. bis 23. August 17-18 Uhr", "2017-08-14T09:16"): "gold is the last day; issue 37: the first",
    ("ctparse", "06.09.-07.09.2017 19:40 Uhr", "2017-08-23T09:05"): "gold is the last day; issue 37: the first",
    ("ctparse", "12.09.17 - 14.09.17 18:00 - 20:00", "2017-08-11T11:31"): "gold is the last day; issue 37: the first",
    ("ctparse", "12.09.17 - 14.09.17 14:00 - 16:00", "2017-08-11T11:31"): "gold is the last day; issue 37: the first",
    # The text contradicts itself: the weekday written is not the date's. Refusing is the right answer.
    ("recognizers", "Tune in tomorrow, 13/04/21, at 7 PM CET for episode 3 of Decentralized",
     "2018-06-06T00:00"): "tomorrow is 7 June 2018; 13/04/21 is April 2021",
    ("ctparse", "Dienstag, den 12.08.2017 gegen 7:25 Uhr", "2017-09-06T13:42"): "12.08.2017 is a Saturday",
    ("ctparse", "Samstag, den 30.10. gegen 19:00 Uhr", "2017-09-26T03:49"): "30.10.2017 is a Monday",
    ("ctparse", "22 July Sunday 1650", "2017-07-18T04:43"): "22 July 2017 is a Saturday",
    ("ctparse", "24.8. Monday 10.00", "2017-07-02T10:36"): "24.8.2017 is a Thursday",
    ("ctparse", "10:40 - 11:50 am Dienstag 3.12.", "2017-11-28T08:15"): "3.12.2017 is a Sunday",
    ("ctparse", "Friday 28/06 around 15:20", "2017-07-20T15:24"): "28/06/2017 is a Wednesday",
    ("ctparse", "Mitwoch 3 Januari 2017 15:55", "2017-11-03T14:08"): "3 January 2017 is a Tuesday; gold is 2018",
    ("ctparse", "Mon, Nov 13 1:30 PM - 3:35 PM", "2018-03-07T00:00"): "13 Nov 2018 is a Tuesday",
    ("ctparse", "Montag, 13. November von 13:30 bis 15:35", "2018-03-07T00:00"): "13 Nov 2018 is a Tuesday",
    ("ctparse", "Mon, Nov 13 11:30 PM - 3:35 AM", "2018-03-07T00:00"): "13 Nov 2018 is a Tuesday",
    ("ctparse", "am 31. ca 17 Uhr", "2017-11-15T18:32"): "gold is 30 Nov; November has no 31st",
    ("ctparse", "22.10.", "2017-10-10T17:20"): "gold is 20.10.; the text says 22.10.",
    ("ctparse", "15.09. 14:21 Uhr", "2017-09-07T10:19"): "gold drops the time the text writes",
    ("ctparse", "13:00 Uhr 28.11.2017", "2017-11-26T19:22"): "gold drops the time the text writes",
    ("ctparse", "29.10.2017 21.00", "2017-10-10T16:05"): "gold drops the time the text writes",
    ("ctparse", "20.11.2017 morgens 10 Uhr", "2017-10-26T07:42"): "gold ends at 10:00; the text writes no 'bis'",
    ("ctparse", "24.10.17 12 Uhr", "2017-10-17T07:04"): "gold ends at 12:00; the text writes no 'bis'",
    ("ctparse", "Jul 26th between 20 and 21", "2018-07-26T00:00"): "gold drops the day the text writes",
    ("ctparse", "Jul 26th between 8 and 9", "2018-07-26T00:00"): "gold drops the day the text writes",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Reading:
    day: date | None  # None: any day (gold without a day, e.g. a bare "15:20")
    clock: time | None
    year_known: bool = True


@dataclass(frozen=True, slots=True)
class Gold:
    readings: frozenset[Reading]  # alternatives for one expression
    counts_for_recall: bool  # the text names a concrete day (and, for timed gold, a time)


@dataclass(frozen=True, slots=True)
class Case:
    corpus: str
    text: str
    reference: datetime
    zone: str
    language: Locale
    gold: tuple[Gold, ...]


@dataclass(slots=True)
class Score:
    cases: int = 0
    candidates: int = 0
    exact: int = 0
    partial: int = 0
    wrong: int = 0
    timed_gold: int = 0
    timed_found: int = 0
    day_gold: int = 0
    day_found: int = 0
    # Issue 37's second column: day+time gold outside the cases whose only day is a year-less numeric date.
    allowed_timed_gold: int = 0
    allowed_timed_found: int = 0
    yearless_cases: int = 0  # cases left out of that column (with day+time gold that counts for recall)
    mistakes: list[tuple[str, str, str]] = field(default_factory=list)
    misses: list[tuple[str, str, str]] = field(default_factory=list)  # gold day+time readings not found

    @property
    def precision(self) -> float:
        return self.exact / self.candidates if self.candidates else 1.0

    @property
    def timed_recall(self) -> float:
        return self.timed_found / self.timed_gold if self.timed_gold else 0.0

    @property
    def allowed_timed_recall(self) -> float:
        return self.allowed_timed_found / self.allowed_timed_gold if self.allowed_timed_gold else 0.0

    @property
    def day_recall(self) -> float:
        return self.day_found / self.day_gold if self.day_gold else 0.0


def _language(code: str) -> Locale:
    """ "de"/"de-DE" (Duckling, ctparse) or the folder name "German" (Recognizers-Text)."""
    return Locale.DE if code.lower().startswith(("de", "german")) else Locale.EN


def duckling_cases() -> Iterator[Case]:
    for line in DUCKLING.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        reference = datetime.fromisoformat(record["ref_time"])
        gold: tuple[Gold, ...] = ()
        grain, kind = record.get("grain"), record["kind"]
        if kind in ("instant", "interval") and grain in ("day", "hour", "minute"):
            value = datetime.fromisoformat(record["value"])
            names_day = _NAMES_A_DAY.search(record["text"]) is not None
            if grain == "day":
                gold = (Gold(frozenset({Reading(value.date(), None)}), names_day),)
            else:
                timed = names_day and _writes_a_time(record["text"])
                gold = (Gold(frozenset({Reading(value.date(), value.time())}), timed),)
        elif kind == "open_interval" or grain in ("second", "week", "month", "quarter", "year"):
            gold = (Gold(frozenset({Reading(None, None)}), False),)  # names something, but no proposal
        yield Case("duckling", record["text"], reference, "Etc/GMT+2", _language(record["lang"]), gold)


def _recognizers_gold(result: dict[str, object]) -> Gold | None:
    type_name = str(result.get("TypeName", ""))
    resolution = result.get("Resolution")
    values = resolution.get("values", []) if isinstance(resolution, dict) else []
    readings: set[Reading] = set()
    recall = _NAMES_A_DAY.search(str(result.get("Text", ""))) is not None
    for value in values:
        if not isinstance(value, dict):
            continue
        if value.get("Mod") in ("before", "after", "since", "until", "start", "end", "mid"):
            recall = False
        timex = str(value.get("timex", ""))
        raw = value.get("value") or value.get("start")
        if type_name in ("datetimeV2.datetime", "datetimeV2.datetimerange") and isinstance(raw, str) and " " in raw:
            moment = datetime.fromisoformat(raw)
            offset = value.get("utcOffsetMins")
            if isinstance(offset, str) and re.fullmatch(r"-?\d+", offset):
                # "3:30pm AEST": the value is the wall clock of the zone written; the cases are read in UTC.
                moment -= timedelta(minutes=int(offset))
            if re.search(r"T(?:MO|AF|EV|NI|DT)", timex) or timex == "PRESENT_REF" or timex.endswith("T23:59:59"):
                recall = False  # a part of the day, "now" or "end of today": no clock time was written
            readings.add(Reading(moment.date(), moment.time()))
        elif type_name == "datetimeV2.date" and isinstance(raw, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", raw):
            readings.add(Reading(date.fromisoformat(raw), None))
    if not readings:
        return Gold(frozenset({Reading(None, None)}), False)
    return Gold(frozenset(readings), recall)


def recognizers_cases() -> Iterator[Case]:
    seen: set[tuple[str, str]] = set()
    for language in ("English", "German"):
        for name in RECOGNIZERS_FILES:
            path = RECOGNIZERS / language / name
            if not path.exists():
                continue
            for record in json.loads(path.read_text(encoding="utf-8-sig")):
                reference_text = record.get("Context", {}).get("ReferenceDateTime")
                if not reference_text or (record["Input"], reference_text) in seen:
                    continue
                seen.add((record["Input"], reference_text))
                reference = datetime.fromisoformat(reference_text[:19]).replace(tzinfo=ZoneInfo("UTC"))
                gold = tuple(g for g in map(_recognizers_gold, record.get("Results", [])) if g is not None)
                yield Case("recognizers", record["Input"], reference, "UTC", _language(language), gold)


_CT_POINT = re.compile(r"(?P<y>\d{4}|X)-(?P<m>\d{2}|X)-(?P<d>\d{2}|X) (?P<H>\d{2}|X):(?P<M>\d{2}|X)")


def _ctparse_reading(text: str, reference: datetime) -> Reading | None:
    m = _CT_POINT.search(text)
    if not m:
        return None
    clock = time(int(m["H"]), int(m["M"])) if m["H"] != "X" and m["M"] != "X" else None
    if m["m"] == "X" or m["d"] == "X":
        return Reading(None, clock)
    year_known = m["y"] != "X"
    return Reading(date(int(m["y"]) if year_known else reference.year, int(m["m"]), int(m["d"])), clock, year_known)


def ctparse_cases() -> Iterator[Case]:
    records = json.loads((CTPARSE / "timeparse_corpus.json").read_text(encoding="utf-8"))
    rules = [json.loads(line) for line in (CTPARSE / "rule_corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    for record in [*records, *rules]:
        reference = datetime.fromisoformat(record["ref_time"]).replace(tzinfo=ZoneInfo("UTC"))
        parse = record["gold_parse"]
        gold: tuple[Gold, ...]
        if parse.startswith("Duration"):
            gold = (Gold(frozenset({Reading(None, None)}), False),)
        else:
            first = parse.split(" - ")[0] if parse.startswith("Interval") else parse
            reading = _ctparse_reading(first, reference) if "None" not in first.split("{")[1][:5] else None
            if reading is None:
                gold = (Gold(frozenset({Reading(None, None)}), False),)
            else:
                open_start = parse.startswith("Interval") and parse.rstrip("}").endswith("None")
                # As for the other corpora, recall counts only texts that name a day: ctparse's gold fills one in
                # for a bare "18 Uhr" or "jetzt" from context the text does not carry.
                names_day = _NAMES_A_DAY.search(record["text"]) is not None
                gold = (Gold(frozenset({reading}), reading.day is not None and not open_start and names_day),)
        yield Case("ctparse", record["text"], reference, "UTC", _language(record.get("language", "de")), gold)


def wrong_gold(case: Case) -> str | None:
    """Why the case's gold contradicts its text, if it is listed in WRONG_GOLD."""
    return WRONG_GOLD.get((case.corpus, case.text, case.reference.strftime("%Y-%m-%dT%H:%M")))


def all_cases(*, keep_wrong_gold: bool = False) -> dict[str, list[Case]]:
    groups = {"duckling": list(duckling_cases()), "recognizers": list(recognizers_cases()),
              "ctparse": list(ctparse_cases())}  # fmt: skip
    if keep_wrong_gold:
        return groups
    return {name: [c for c in group if wrong_gold(c) is None] for name, group in groups.items()}


def _classify(candidate: ProposalCandidate, case: Case) -> str:
    zone = ZoneInfo(case.zone)
    local = candidate.start.astimezone(zone)
    clock = None if candidate.all_day else local.time()
    outcome = "wrong"
    for gold in case.gold:
        for reading in gold.readings:
            if reading.day is None:
                continue
            same_day = reading.day == local.date() or (
                not reading.year_known and (reading.day.month, reading.day.day) == (local.month, local.day)
            )
            if not same_day:
                continue
            if reading.clock == clock:
                return "exact"
            if reading.clock is None or clock is None:
                outcome = "partial"
    return outcome


def evaluate(detector: ProposalDetector, cases: list[Case], keep_mistakes: int = 0, keep_misses: int = 0) -> Score:
    score = Score()
    for case in cases:
        score.cases += 1
        request = DetectionRequest(case.text, "", case.reference, case.zone, case.language)
        candidates = detector.detect(request)
        found: set[Reading] = set()
        for candidate in candidates:
            score.candidates += 1
            outcome = _classify(candidate, case)
            if outcome == "exact":
                score.exact += 1
                local = candidate.start.astimezone(ZoneInfo(case.zone))
                found.add(Reading(local.date(), None if candidate.all_day else local.time()))
            elif outcome == "partial":
                score.partial += 1
            else:
                score.wrong += 1
            if outcome != "exact" and len(score.mistakes) < keep_mistakes:
                expected = "; ".join(sorted(f"{r.day} {r.clock}" for g in case.gold for r in g.readings))
                read = candidate.start.isoformat() + (" all-day" if candidate.all_day else "")
                score.mistakes.append((case.text, read, expected))
        yearless = names_a_day_only_without_its_year(case.text)
        counted_as_yearless = False
        for gold in case.gold:
            if not gold.counts_for_recall:
                continue
            timed = any(r.clock is not None for r in gold.readings)
            hit = any(_matches(r, found) for r in gold.readings)
            if timed:
                score.timed_gold += 1
                score.timed_found += hit
                if yearless:
                    score.yearless_cases += not counted_as_yearless
                    counted_as_yearless = True
                else:
                    score.allowed_timed_gold += 1
                    score.allowed_timed_found += hit
                if not hit and len(score.misses) < keep_misses:
                    expected = "; ".join(sorted(f"{r.day} {r.clock}" for r in gold.readings))
                    read = "; ".join(sorted(f"{f.day} {f.clock}" for f in found)) or "nothing"
                    score.misses.append((case.text, read, expected))
            else:
                score.day_gold += 1
                score.day_found += hit
    return score


def _matches(reading: Reading, found: set[Reading]) -> bool:
    if reading.year_known:
        return reading in found
    return any(f.day is not None and reading.day is not None and (f.day.month, f.day.day, f.clock)
               == (reading.day.month, reading.day.day, reading.clock) for f in found)  # fmt: skip
