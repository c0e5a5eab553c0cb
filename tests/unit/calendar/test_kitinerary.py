"""KDE KItinerary's structured-data cases: our start, end and key fields against its expected reservations.

Cases: every ``structureddata/*.html``, ``jsonlddata/*.in.json`` and ``extractordata`` .html/.eml file
with JSON-LD or microdata whose expected output names a reservation. Expected values are read from
KItinerary's JSON with Python's own ISO parser (not ours) and our documented conventions applied to
them: a missing or non-positive end is the nominal hour (a day for dates), a date-only hotel stay
includes its checkout day, and a time with neither offset nor zone stays floating.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from plmail.calendar.extraction import (
    EventExtractionRunner,
    EventKind,
    EventStatus,
    ExtractedEvent,
    context_from_mime,
    default_registry,
    structured_events,
)
from tests.unit.calendar.corpus import KITINERARY

Moment = datetime | date
KINDS = {
    "FlightReservation": EventKind.FLIGHT,
    "EventReservation": EventKind.TICKET,
    "LodgingReservation": EventKind.LODGING,
    "TrainReservation": EventKind.TRAIN,
    "BusReservation": EventKind.BUS,
    "FoodEstablishmentReservation": EventKind.DINING,
    "RentalCarReservation": EventKind.RENTAL,
}
# Share of cases that must match in full; 15 of the 16 cases do (see the report in the test output).
REQUIRED_SHARE = 15 / 16


@dataclass(frozen=True)
class Expected:
    kind: EventKind
    start: Moment | None
    end: Moment | None
    cancelled: bool
    number: str
    label: str  # a field the title must contain: flight designator, event or hotel name


def reference_time(value: object) -> Moment | None:
    if isinstance(value, dict):
        value = value.get("@value")
    if not isinstance(value, str):
        return None
    text = re.sub(r"([+-])(\d):(\d\d)$", r"\g<1>0\2:\3", value.strip())  # "+0:00" is what the sender wrote
    try:
        return date.fromisoformat(text) if len(text) == 10 else _utc(datetime.fromisoformat(text))
    except ValueError:
        return None


def _utc(value: datetime) -> datetime:
    return value.astimezone(UTC) if value.tzinfo is not None else value


def shown_end(start: Moment, end: Moment | None) -> Moment:
    if end is not None and isinstance(end, datetime) == isinstance(start, datetime):
        try:
            if end > start:  # type: ignore[operator]
                return end
        except TypeError:
            pass
    return start + (timedelta(hours=1) if isinstance(start, datetime) else timedelta(days=1))


def expected_events(reservation: dict[str, object]) -> list[Expected]:
    kind_name = str(reservation["@type"])
    number = str(reservation.get("reservationNumber") or "")
    cancelled = str(reservation.get("reservationStatus", "")).endswith("Cancelled")
    targets = reservation.get("reservationFor")
    found: list[Expected] = []
    for target in targets if isinstance(targets, list) else [targets]:
        assert isinstance(target, dict)
        if kind_name == "FlightReservation":
            start, end = reference_time(target.get("departureTime")), reference_time(target.get("arrivalTime"))
            airline = target.get("airline")
            code = airline.get("iataCode", "") if isinstance(airline, dict) else ""
            label = f"{code}{target.get('flightNumber', '')}"
        elif kind_name == "LodgingReservation":
            start, end = reference_time(reservation.get("checkinDate")), reference_time(reservation.get("checkoutDate"))
            if isinstance(end, date) and not isinstance(end, datetime):
                end += timedelta(days=1)
            label = str(target.get("name", ""))
        else:
            start, end = reference_time(target.get("startDate")), reference_time(target.get("endDate"))
            label = str(target.get("name", ""))
        found.append(Expected(KINDS[kind_name], start, end, cancelled, number, label))
    return found


def matches(ours: ExtractedEvent, expected: Expected) -> bool:
    if expected.start is None or ours.start != expected.start:
        return False
    return (
        ours.end == shown_end(expected.start, expected.end)
        and ours.kind is expected.kind
        and (ours.status is EventStatus.CANCELLED) == expected.cancelled
        and expected.label in (ours.title or "")
        and f"Booking reference: {expected.number}" in (ours.description or "")
    )


def reservations(expected_json: Path) -> list[dict[str, object]]:
    data = json.loads(expected_json.read_text())
    return [item for item in data if str(item.get("@type", "")).endswith("Reservation")]


def has_markup(path: Path) -> bool:
    text = path.read_text(errors="replace")
    return "application/ld+json" in text or "itemscope" in text


def cases() -> list[tuple[str, Path, Path]]:
    found: list[tuple[str, Path, Path]] = []
    for source in sorted((KITINERARY / "structureddata").glob("*.html")):
        found.append(("html", source, source.with_suffix(".json")))
    for source in sorted((KITINERARY / "jsonlddata").glob("*.in.json")):
        found.append(("json", source, source.with_name(source.name.replace(".in.json", ".out.json"))))
    for source in sorted((KITINERARY / "extractordata").rglob("*")):
        if source.suffix in {".html", ".eml"} and has_markup(source):
            found.append(
                ("eml" if source.suffix == ".eml" else "html", source, source.with_name(source.name + ".json"))
            )
    return [case for case in found if case[2].exists() and reservations(case[2])]


async def our_events(kind: str, source: Path) -> list[ExtractedEvent]:
    if kind == "eml":
        result = await EventExtractionRunner(default_registry()).run(context_from_mime(source.read_bytes()))
        return list(result.events)
    html = source.read_text(errors="replace")
    if kind == "json":
        html = f'<script type="application/ld+json">{html}</script>'
    return list(structured_events(html, sender="noreply@kitinerary.example").events)


async def test_kitinerary_reservations_share() -> None:
    all_cases = cases()
    assert len(all_cases) == 16
    matched_cases = matched_events = total_events = 0
    report: list[str] = []
    for kind, source, expected_json in all_cases:
        expected = [event for reservation in reservations(expected_json) for event in expected_events(reservation)]
        ours = await our_events(kind, source)
        hits = sum(1 for want in expected if any(matches(event, want) for event in ours))
        complete = hits == len(expected) and len(ours) == len(expected)
        matched_cases += complete
        matched_events += hits
        total_events += len(expected)
        report.append(
            f"{'ok  ' if complete else 'MISS'} {source.relative_to(KITINERARY)}: "
            f"{hits}/{len(expected)}, ours {len(ours)}"
        )
    share = matched_cases / len(all_cases)
    print("\nKItinerary structured data:", *report, sep="\n  ")
    print(f"  cases {matched_cases}/{len(all_cases)} = {share:.0%}, events {matched_events}/{total_events}")
    assert share >= REQUIRED_SHARE


@pytest.mark.parametrize(
    ("name", "start", "end"),
    [
        (
            "google-flight-reservation-json-ld",
            datetime(2027, 3, 5, 4, 15, tzinfo=UTC),
            datetime(2027, 3, 5, 11, 30, tzinfo=UTC),
        ),
        ("hotel-json-ld-fallback", datetime(2017, 6, 15, 14, tzinfo=UTC), datetime(2017, 6, 18, 11, tzinfo=UTC)),
        ("eventbrite-broken-json", datetime(2020, 12, 11, 16, tzinfo=UTC), datetime(2020, 12, 12, 16, tzinfo=UTC)),
    ],
)
def test_named_cases(name: str, start: datetime, end: datetime) -> None:
    (event,) = structured_events(
        (KITINERARY / "structureddata" / f"{name}.html").read_text(), sender="noreply@kitinerary.example"
    ).events
    assert (event.start, event.end) == (start, end)
