"""Precision and recall of the deterministic detector on Duckling, Recognizers-Text and ctparse.

Usage: .venv/bin/python benchmarks/proposal_accuracy.py [--mistakes N] [--misses N]

How a case is scored is documented in tests/unit/proposals/corpora.py: precision counts every reading
the detector makes (partial ones, right day but wrong granularity, count against it); recall counts the
gold expressions that name a concrete day and time ("day+time") or a concrete day ("day") that were read.
Cases whose gold contradicts their own text are left out, each listed with its reason in corpora.WRONG_GOLD.

Issue 37 refuses numeric dates without their four-digit year ("04.08.", "04.08.26", "8/4"), yet the corpora's
gold has many ("am 26.08. zwischen ..."). Two day+time recall columns are printed: over all gold, as before,
and over "the forms the issue allows", which leaves out the cases whose only written day is such a date
(corpora.names_a_day_only_without_its_year; the count left out is printed per corpus). The issue's recall
targets are judged on the second column; the first is printed beside it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from plmail.calendar.proposals import DeterministicDateDetector
from tests.unit.proposals.corpora import Score, all_cases, evaluate

# Issue 37: precision at least 0.97 and day+time recall at least 0.9 on each corpus, none below 0.85 (recall
# on the forms the issue allows, since it refuses year-less numeric dates).
TARGET_PRECISION = 0.97
TARGET_RECALL = 0.9
RECALL_FLOOR = 0.85


def row(name: str, score: Score, seconds: float) -> str:
    return (
        f"{name:12} {score.cases:6d} {score.candidates:7d} {score.exact:5d} {score.partial:5d} {score.wrong:5d} "
        f"{score.precision:6.3f}  {score.timed_recall:18.3f} ({score.timed_found:4d}/{score.timed_gold:4d})  "
        f"{score.allowed_timed_recall:18.3f} ({score.allowed_timed_found:4d}/{score.allowed_timed_gold:4d}) "
        f"{score.yearless_cases:8d}  "
        f"{score.day_recall:6.3f} ({score.day_found:4d}/{score.day_gold:4d})  {score.cases / seconds:8,.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mistakes", type=int, default=0, help="print up to N readings that were not exact")
    parser.add_argument("--misses", type=int, default=0, help="print up to N day+time readings per corpus not found")
    args = parser.parse_args()
    detector = DeterministicDateDetector()
    cases = all_cases()
    left_out = sum(map(len, all_cases(keep_wrong_gold=True).values())) - sum(map(len, cases.values()))
    # offered: every reading made; right: readings that are exact; recall day+time is (found/expected).
    print(f"{'corpus':12} {'cases':>6} {'offered':>7} {'right':>5} {'part':>5} {'wrong':>5} {'prec':>6}  "
          f"{'recall day+time, all gold':>32}  {'recall, forms the issue allows':>31} {'left out':>8}  "
          f"{'recall day':>20}  {'cases/s':>8}")  # fmt: skip
    scores = []
    for name, group in cases.items():
        started = time.perf_counter()
        score = evaluate(detector, group, keep_mistakes=args.mistakes, keep_misses=args.misses)
        print(row(name, score, time.perf_counter() - started))
        scores.append((name, score))
    started = time.perf_counter()
    total = evaluate(detector, [c for group in cases.values() for c in group])
    print(row("all", total, time.perf_counter() - started))
    print(f"left out: {left_out} cases whose gold contradicts their own text (corpora.py WRONG_GOLD, a reason each)")
    print("left out of 'recall, forms the issue allows' only: cases whose only written day is a numeric date "
          "without its four-digit year, which issue 37 refuses (corpora.names_a_day_only_without_its_year)")
    for name, score in scores:
        for text, read, gold in score.mistakes:
            print(f"  {name}: {text!r} read {read}, gold {gold}")
    for name, score in scores:
        for text, read, gold in score.misses:
            print(f"  {name} missed: {text!r} read {read}, gold {gold}")
    scores.append(("all", total))
    imprecise = [name for name, score in scores if score.precision < TARGET_PRECISION]
    short = [name for name, score in scores if score.allowed_timed_recall < TARGET_RECALL]
    far_short = [name for name, score in scores if score.allowed_timed_recall < RECALL_FLOOR]
    allowed = "(forms the issue allows)"
    for label, target, below in (("precision", TARGET_PRECISION, imprecise),
                                 (f"day+time recall {allowed}", TARGET_RECALL, short),
                                 (f"day+time recall floor {allowed}", RECALL_FLOOR, far_short)):  # fmt: skip
        print(f"{label} target {target}: " + (f"MISSED by {', '.join(below)}" if below else "met by all"))
    print("day+time recall over all gold (not judged; year-less numeric dates count as misses): "
          + ", ".join(f"{name} {score.timed_recall:.3f}" for name, score in scores))


if __name__ == "__main__":
    main()
