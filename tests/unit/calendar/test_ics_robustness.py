"""Every .ics of the public iCalendar corpora goes through the extractor: claims or reasons, never an exception."""

from __future__ import annotations

import json
import time
from collections import Counter
from datetime import UTC, datetime

import pytest

from plmail.calendar.extraction import CalendarPart, ExtractionContext, IcsEventExtractor, parse_ics
from plmail.calendar.extraction.claims import jscalendar
from plmail.calendar.recurrence import materialise_occurrences
from tests.unit.calendar.corpus import ICS_CORPORA, ics_files

REFERENCE = datetime(2024, 1, 1, tzinfo=UTC)
# Claims found today (icalendar 7.3); fewer would mean the extractor lost events it used to read.
AT_LEAST = {
    "icalendar-python-tests": 96,
    "ical4j-samples": 2_600,
    "khal-test-ics": 57,
    "node-ical-fixtures": 537,
    "libical-test-data": 63,
}


@pytest.mark.parametrize("corpus", [*ICS_CORPORA, "libical-test-data"])
async def test_every_calendar_file_is_read_or_skipped_with_a_reason(corpus: str) -> None:
    files = ics_files(corpus)
    assert files, corpus
    counts: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    extractor = IcsEventExtractor()
    began = time.perf_counter()
    for path in files:
        data = path.read_bytes()
        result = parse_ics(data)
        counts["files"] += 1
        counts["claims"] += len(result.events)
        counts["skipped"] += len(result.skipped)
        counts["files without claims"] += not result.events
        reasons.update(reason.split(":")[0] for reason in result.skipped)
        for event in result.events:
            json.dumps(event.source_payload)
            json.dumps(jscalendar(event))
            counts["refused rules"] += event.raw_rrule is not None
            if event.start is not None:
                occurrences = materialise_occurrences(
                    event.start,
                    event.end,
                    rules=event.recurrence_rules,
                    excluded=event.excluded_dates,
                    overrides=event.recurrence_overrides,
                    time_zone=event.time_zone,
                    reference=REFERENCE,
                )
                counts["occurrences"] += len(occurrences)
        # The same bytes as a message part, through the extractor itself (one claim per UID, capped).
        claims = await extractor.extract(ExtractionContext(calendar_parts=(CalendarPart("text/calendar", data),)))
        counts["message claims"] += len(claims)
    elapsed = time.perf_counter() - began
    print(f"\n{corpus}: {dict(counts)} in {elapsed:.2f}s; skipped: {dict(reasons)}")
    assert counts["claims"] >= AT_LEAST[corpus]
    assert elapsed < 60
