"""The three public time-expression corpora as detector cases, and how a detector scores on them.

Shared by `test_corpus_accuracy.py` and `benchmarks/proposal_accuracy.py`. A case is one text with its
reference time and every gold reading it admits (Recognizers-Text lists the past and the future reading
of an underspecified date; both count). A candidate is
- exact when its day (and, if timed, its start time) equals a gold reading of the same granularity,
- partial when the day is right but one side has a time and the other does not,
- wrong otherwise, including any candidate for a text whose gold names no day at all.
Precision is exact / all candidates (partial counts against it); recall is gold day+time readings
(or day readings) found exactly / all such readings in texts that name a concrete day.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, time
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

# Only to choose which Duckling texts name a concrete day (Duckling's gold fills in a day for "15:20").
_NAMES_A_DAY = re.compile(
    r"\b(?:(?:mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)(?:day)?|montag|dienstag|mittwoch|donnerstag|freitag|samstag|"
    r"sonntag|(?:mo|di|mi|do|fr|sa|so)(?=[.,])|jan(?:uary|uar)?|feb(?:ruary|ruar)?|mar(?:ch)?|märz|apr(?:il)?|may|mai|"
    r"june?|juni|july?|juli|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|okt(?:ober)?|nov(?:ember)?|dec(?:ember)?|"
    r"dez(?:ember)?|today|tomorrow|tonight|heute|morgen|übermorgen)\b(?![\s.]*(?:uhr|um\b))|\d{1,2}[./]\d{1,2}|"
    r"\d{4}-\d{2}-\d{2}|\d{1,2}(?:st|nd|rd|th|te)\b",
    re.IGNORECASE,
)
_NAMES_A_TIME = re.compile(r"\d|\bnoon\b", re.IGNORECASE)


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
    mistakes: list[tuple[str, str, str]] = field(default_factory=list)
    misses: list[tuple[str, str, str]] = field(default_factory=list)  # gold day+time readings not found

    @property
    def precision(self) -> float:
        return self.exact / self.candidates if self.candidates else 1.0

    @property
    def timed_recall(self) -> float:
        return self.timed_found / self.timed_gold if self.timed_gold else 0.0

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
                timed = names_day and _NAMES_A_TIME.search(record["text"]) is not None
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
            if re.search(r"T(?:MO|AF|EV|NI|DT)", timex) or timex == "PRESENT_REF":
                recall = False  # a part of the day or "now": no clock time was written
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
                gold = (Gold(frozenset({reading}), reading.day is not None and not open_start),)
        yield Case("ctparse", record["text"], reference, "UTC", _language(record.get("language", "de")), gold)


def all_cases() -> dict[str, list[Case]]:
    return {"duckling": list(duckling_cases()), "recognizers": list(recognizers_cases()),
            "ctparse": list(ctparse_cases())}  # fmt: skip


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
        for gold in case.gold:
            if not gold.counts_for_recall:
                continue
            timed = any(r.clock is not None for r in gold.readings)
            hit = any(_matches(r, found) for r in gold.readings)
            if timed:
                score.timed_gold += 1
                score.timed_found += hit
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
