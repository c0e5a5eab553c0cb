"""`plmail extract`: the extractors over message files, without a database, as people debug extraction.

Each file gives one JSON object. Times are ISO 8601 in UTC (all-day events give dates); floating
times are read in ``--tz``, as they would be in the user's zone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from plmail.calendar.extraction import (
    CalendarPart,
    EventExtractionRunner,
    ExtractedEvent,
    ExtractionContext,
    anchored,
    context_from_mime,
    default_registry,
)
from plmail.calendar.timezones import zone
from plmail.domain.errors import ValidationError

MAX_FILE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ExtractOptions:
    me: str | None = None  # the reader's address: the proposer's "addressed to me" rule reads it
    lang: str = "en"  # the reader's language, for reading dates in prose
    tz: str = "UTC"  # the reader's zone: floating times are read in it


def iso(value: datetime | date | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    return value.isoformat()


def claim_json(claim: ExtractedEvent, tz: str) -> dict[str, Any]:
    shown = anchored(claim, tz)
    return {
        "uid": shown.uid, "dedup_key": shown.dedup_key, "title": shown.title, "start": iso(shown.start),
        "end": iso(shown.end), "time_zone": shown.time_zone, "all_day": shown.all_day, "status": shown.status.value,
        "kind": shown.kind.value, "extractor": shown.extractor, "confidence": shown.confidence,
        "sequence": shown.sequence, "location": shown.location,
    }


def context_for_file(data: bytes) -> ExtractionContext:
    """A bare iCalendar file is read as one calendar part; anything else as an RFC 822 message."""
    if data.lstrip()[:15].upper() == b"BEGIN:VCALENDAR":
        return ExtractionContext(calendar_parts=(CalendarPart("text/calendar", data),))

    async def raw() -> bytes:
        return data

    return context_from_mime(data, raw_mime_loader=raw)


class FileExtractor:
    def __init__(self, options: ExtractOptions, runner: EventExtractionRunner | None = None) -> None:
        if zone(options.tz) is None:
            raise ValidationError(f"Unknown time zone {options.tz!r}; use an IANA name such as Europe/Berlin.")
        if options.lang not in ("de", "en"):
            raise ValidationError("--lang must be de or en.")
        self.options = options
        self.runner = runner or EventExtractionRunner(default_registry())

    async def extract(self, path: Path) -> dict[str, Any]:
        shown: dict[str, Any] = {"file": str(path), "events": [], "proposals": []}
        try:
            data = await asyncio.to_thread(_read, path)
        except (OSError, ValidationError) as error:
            return {**shown, "error": str(error)}
        result = await self.runner.run(context_for_file(data))
        shown["events"] = [claim_json(claim, self.options.tz) for claim in result.events]
        if result.failures:
            shown["failures"] = [f"{f.extractor}: {f.error_type}: {f.message}" for f in result.failures]
        return shown

    async def extract_all(self, paths: Sequence[Path]) -> list[dict[str, Any]]:
        return [await self.extract(path) for path in paths]


def _read(path: Path) -> bytes:
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ValidationError(f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MB")
    return path.read_bytes()


def human_lines(shown: dict[str, Any]) -> list[str]:
    """The same facts for a terminal: one line per file, one per event."""
    lines = [f"{shown['file']}: {len(shown['events'])} event(s)" + (f" — {shown['error']}" if "error" in shown else "")]
    for event in shown["events"]:
        lines.append(f"  {event['start']} – {event['end']}  {event['title'] or '(no title)'}  "
                     f"[{event['extractor']} {event['status']} seq {event['sequence']}]")
    return lines
