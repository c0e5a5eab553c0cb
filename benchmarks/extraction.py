"""Messages per second through the event-extraction runner, and what KItinerary adds.

Usage: .venv/bin/python benchmarks/extraction.py [--rounds 5]

First, KItinerary's own test inputs (`../shared/corpus/kitinerary-autotests/extractordata`, each file as the
mail that would carry it: see tests/unit/calendar/corpus.py): how many of those messages give at least one
event without the KItinerary extractor and with it (when `kitinerary-extractor` is installed).

Reads the whole SpamAssassin public corpus (straight from its tarballs) and the Thunderbird
invitation mails plus KItinerary's JSON-LD booking mail, builds one ExtractionContext per message
(timed separately: that parse is the pipeline's job, not the runner's), then times
`EventExtractionRunner.run` over
  - plain mail: no calendar part and no markup, where `supports()` must make the runner cheap
    (target: at least 2,000 messages/s),
  - the whole SpamAssassin corpus as it is,
  - invitations and booking markup, where the extractors really parse.
Best of ``--rounds`` for each figure.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tarfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from plmail.calendar.extraction import (
    EventExtractionRunner,
    ExtractionContext,
    KItineraryEngine,
    context_from_mime,
    default_registry,
)
from tests.unit.calendar.corpus import kitinerary_inputs, kitinerary_mail

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
ARCHIVES = ("easy_ham", "easy_ham_2", "hard_ham", "spam", "spam_2")
TARGET = 2_000


def spamassassin() -> list[bytes]:
    messages: list[bytes] = []
    for name in ARCHIVES:
        with tarfile.open(CORPUS / "spamassassin-public-corpus" / f"{name}.tar.gz") as tar:
            for member in tar:
                handle = tar.extractfile(member) if member.isfile() else None
                if handle is not None and not member.name.endswith("/cmds"):
                    messages.append(handle.read())
    return messages


def calendar_mail() -> list[bytes]:
    folder = CORPUS / "thunderbird-calendar-invitations" / "browser" / "invitations" / "data"
    invitations = sorted(folder.glob("*.eml"))
    booking = CORPUS / "kitinerary-autotests" / "extractordata" / "synthetic" / "flight-booking.eml"
    return [path.read_bytes() for path in [*invitations, booking]]


async def rate(runner: EventExtractionRunner, contexts: list[ExtractionContext], rounds: int) -> tuple[float, int]:
    best = float("inf")
    events = 0
    for _ in range(rounds):
        began = time.perf_counter()
        events = 0
        for ctx in contexts:
            events += len((await runner.run(ctx)).events)
        best = min(best, time.perf_counter() - began)
    return len(contexts) / best, events


def report(label: str, count: int, per_second: float, events: int) -> None:
    print(f"  {label:<44} {count:>6} messages  {per_second:>10,.0f} messages/s  {events:>4} events")


async def with_events(runner: EventExtractionRunner, contexts: list[ExtractionContext]) -> int:
    found = 0
    for ctx in contexts:
        found += bool((await runner.run(ctx)).events)
    return found


async def kitinerary_corpus() -> None:
    contexts = [context_from_mime(kitinerary_mail(path)) for path in kitinerary_inputs()]
    engine = KItineraryEngine.discover()
    without = await with_events(EventExtractionRunner(default_registry(KItineraryEngine(None))), contexts)
    print(f"KItinerary autotest inputs as mail: {len(contexts)} messages")
    print(f"  with at least one event, without KItinerary: {without:>4}")
    if not engine.available:
        print("  with KItinerary: not measured, kitinerary-extractor is not installed (libkpimitinerary-bin)")
        return
    began = time.perf_counter()
    found = await with_events(EventExtractionRunner(default_registry(engine)), contexts)
    seconds = time.perf_counter() - began
    print(f"  with at least one event, with KItinerary:    {found:>4}   ({engine.binary}, {seconds:.1f} s)")


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    await kitinerary_corpus()

    raw_corpus = spamassassin()
    raw_calendar = calendar_mail()
    began = time.perf_counter()
    corpus = [context_from_mime(raw) for raw in raw_corpus]
    parse_rate = len(corpus) / (time.perf_counter() - began)
    calendar = [context_from_mime(raw) for raw in raw_calendar] * 20

    runner = EventExtractionRunner(default_registry())
    extractors = runner.registry.ordered()
    plain = [ctx for ctx in corpus if not any(extractor.supports(ctx) for extractor in extractors)]
    supported = len(corpus) - len(plain)

    print(f"extraction runner over {', '.join(runner.registry.names())}, best of {args.rounds}")
    print(f"  (building contexts from raw MIME, not part of the runner: {parse_rate:,.0f} messages/s)")
    plain_rate, plain_events = await rate(runner, plain, args.rounds)
    report("plain mail (no calendar part, no markup)", len(plain), plain_rate, plain_events)
    corpus_rate, corpus_events = await rate(runner, corpus, args.rounds)
    report(f"SpamAssassin corpus ({supported} with markup)", len(corpus), corpus_rate, corpus_events)
    calendar_rate, calendar_events = await rate(runner, calendar, args.rounds)
    report("invitations + booking markup (x20)", len(calendar), calendar_rate, calendar_events)
    verdict = "meets" if plain_rate >= TARGET else "MISSES"
    print(f"plain mail {verdict} the {TARGET:,} messages/s target ({plain_rate:,.0f})")
    return 0 if plain_rate >= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
