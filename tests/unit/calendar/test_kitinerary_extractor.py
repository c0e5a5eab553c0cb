"""The KItinerary extractor over KItinerary's own inputs, each as the mail that would carry it.

Expected times, zones and places come from KItinerary's expected output beside each input (read with
Python's ISO parser, not ours). Tests that need `kitinerary-extractor` are skipped where it is not
installed; the ones about its absence, its sandbox and the cheap `supports()` run everywhere.
"""

from __future__ import annotations

import json
import os
import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from plmail.calendar.extraction import (
    AttachmentFacts,
    EventExtractionRunner,
    EventKind,
    ExtractedEvent,
    ExtractionContext,
    KItineraryEngine,
    KItineraryError,
    KItineraryExtractor,
    booking_signals,
    context_from_mime,
    default_registry,
    structured_events,
)
from plmail.calendar.extraction.kitinerary_engine import find_kitinerary, network_isolation
from tests.unit.calendar.corpus import KITINERARY_EXTRACTORDATA, kitinerary_mail

BINARY = find_kitinerary()
needs_binary = pytest.mark.skipif(BINARY is None, reason="kitinerary-extractor is not installed")


def gold(relative: str) -> list[dict[str, Any]]:
    return list(json.loads((KITINERARY_EXTRACTORDATA / f"{relative}.json").read_text()))


def instant(value: dict[str, Any] | str) -> datetime:
    raw = value["@value"] if isinstance(value, dict) else value
    return datetime.fromisoformat(raw).astimezone(UTC)


async def extracted(relative: str, *, subject: str | None = None) -> list[ExtractedEvent]:
    ctx = context_from_mime(kitinerary_mail(KITINERARY_EXTRACTORDATA / relative, subject=subject))
    result = await EventExtractionRunner(default_registry(KItineraryEngine(BINARY))).run(ctx)
    assert result.failures == ()
    return sorted(result.events, key=lambda event: str(event.start))


def flights(expected: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted((item["reservationFor"] for item in expected), key=lambda leg: instant(leg["departureTime"]))


@needs_binary
async def test_a_plain_text_swiss_booking_gives_both_legs_with_their_zones() -> None:
    events = await extracted("swiss/swiss_one-leg-return.txt")
    legs = flights(gold("swiss/swiss_one-leg-return.txt"))
    assert len(events) == len(legs) == 2
    for event, leg in zip(events, legs, strict=True):
        assert event.extractor == "kitinerary" and event.kind is EventKind.FLIGHT and event.confidence == 90
        assert event.start == instant(leg["departureTime"])
        assert event.end == instant(leg["arrivalTime"])
        # KItinerary names the zone beside the time, so the event keeps it (an offset alone would not).
        assert event.time_zone == leg["departureTime"]["timezone"]
        assert f"{leg['airline']['iataCode']}{leg['flightNumber']}" in (event.title or "")
        airport = leg["departureAirport"]
        assert (event.location or "").startswith(f"{airport['name']} ({airport['iataCode']})")
    # One booking number, two legs: two keys, both the structured-data formula over the sender's domain.
    assert len({event.dedup_key for event in events}) == 2
    assert all(event.dedup_key.startswith("jsonld:") for event in events)


@needs_binary
async def test_a_pdf_boarding_pass_is_read_from_its_barcode() -> None:
    events = await extracted("synthetic/iata-bcbp-demo.pdf", subject="Documents")
    [leg] = flights(gold("synthetic/iata-bcbp-demo.pdf"))
    [event] = events
    assert (event.start, event.end) == (instant(leg["departureTime"]), instant(leg["arrivalTime"]))
    assert event.time_zone == leg["departureTime"]["timezone"]
    assert f"{leg['airline']['iataCode']}{leg['flightNumber']}" in (event.title or "")
    assert (event.location or "").startswith(leg["departureAirport"]["name"])


@needs_binary
async def test_an_apple_wallet_pass_gives_its_stay() -> None:
    [expected] = gold("motel-one/20231130-motel-one-synthetic.pkpass")
    [event] = await extracted("motel-one/20231130-motel-one-synthetic.pkpass", subject="Ihre Unterlagen")
    assert event.start == instant(expected["checkinTime"])
    # Debian's KItinerary (22.12) reads this pass without Motel One's script: it names the hotel in the
    # event's name and no booking number, so the pass's own type and serial number are its identity.
    hotel = expected["reservationFor"]["name"]
    assert hotel in f"{event.title} {event.location or ''}"
    assert event.dedup_key.startswith("jsonld:")


@needs_binary
async def test_the_sender_markup_wins_a_collision_and_kitinerary_is_the_loser() -> None:
    ctx = context_from_mime((KITINERARY_EXTRACTORDATA / "synthetic" / "flight-booking.eml").read_bytes())
    result = await EventExtractionRunner(default_registry(KItineraryEngine(BINARY))).run(ctx)
    assert result.ran == ("structured_data", "kitinerary")
    assert [event.extractor for event in result.events] == ["structured_data"]
    assert [event.extractor for event in result.superseded] == ["kitinerary"]
    assert result.superseded[0].dedup_key == result.events[0].dedup_key


async def test_without_the_binary_nothing_is_supported_and_nothing_fails() -> None:
    absent = KItineraryExtractor(KItineraryEngine(None))
    assert absent.status().available is False and absent.status().detail == "not installed"
    ctx = context_from_mime(kitinerary_mail(KITINERARY_EXTRACTORDATA / "swiss" / "swiss_one-leg-return.txt"))
    assert booking_signals(ctx.sender, ctx.subject, ctx.attachments)
    assert absent.supports(ctx) is False
    result = await EventExtractionRunner([absent]).run(ctx)
    assert (result.events, result.failures, result.ran) == ((), (), ())


def test_off_and_a_missing_path_mean_absent(tmp_path: Path) -> None:
    assert find_kitinerary("off") is None
    assert find_kitinerary(str(tmp_path / "nowhere")) is None


@pytest.mark.parametrize(
    ("sender", "subject", "attachments", "supported"),
    [
        ("noreply@swiss.com", "Hello", (), True),
        ("booking@mail.lufthansa.com", "", (), True),  # any subdomain of a known sender
        ("anna@example.org", "Ihre Buchungsbestätigung", (), True),
        ("anna@example.org", "Your e-ticket", (), True),
        ("anna@example.org", "Boarding pass", (), True),
        ("anna@example.org", "Coffee on Friday?", (AttachmentFacts("application/vnd.apple.pkpass", None),), True),
        ("anna@example.org", "Fwd", (AttachmentFacts("application/octet-stream", "Pass.PKPASS"),), True),
        ("anna@example.org", "Fwd", (AttachmentFacts("application/pdf", "scan.pdf"),), True),
        ("anna@example.org", "Coffee on Friday?", (), False),
        ("support@helpdesk.example", "Ticket #1234 updated", (), False),  # a support ticket is not a trip
        ("anna@example.org", "Minutes", (AttachmentFacts("image/png", "chart.png"),), False),
        (None, None, (), False),
    ],
)
def test_supports_is_a_cheap_look_at_sender_subject_and_attachment_types(
    sender: str | None, subject: str | None, attachments: tuple[AttachmentFacts, ...], supported: bool
) -> None:
    assert booking_signals(sender, subject, attachments) is supported
    present = KItineraryExtractor(KItineraryEngine(Path("/bin/true")))
    assert present.supports(ExtractionContext(sender=sender, subject=subject, attachments=attachments)) is supported


def fake_engine(tmp_path: Path, script: str) -> KItineraryEngine:
    """A stand-in binary (a shell script) to drive the sandbox's failure paths; not KItinerary itself."""
    path = tmp_path / "kitinerary-extractor"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return KItineraryEngine(path, timeout=1.0)


async def test_a_run_that_hangs_is_killed_at_the_timeout(tmp_path: Path) -> None:
    engine = fake_engine(tmp_path, "exec sleep 30\n")
    with pytest.raises(KItineraryError, match="longer than 1 s"):
        await engine.extract(b"From: a@b.example\n\nhi\n")


async def test_output_that_is_not_json_or_a_crash_is_an_error_for_that_message(tmp_path: Path) -> None:
    with pytest.raises(KItineraryError, match="no JSON"):
        await fake_engine(tmp_path, "cat >/dev/null; echo 'not json'\n").extract(b"x")
    with pytest.raises(KItineraryError, match="status 3"):
        await fake_engine(tmp_path, "exit 3\n").extract(b"x")


async def test_the_child_gets_no_network_no_environment_and_a_memory_limit(tmp_path: Path) -> None:
    os.environ["PLMAIL_SECRET_FOR_TEST"] = "leak"
    try:
        engine = fake_engine(tmp_path, "cat >/dev/null; printf '[{\"env\": \"%s\", \"mem\": \"%s\", "
                                       "\"net\": \"%s\"}]' \"$PLMAIL_SECRET_FOR_TEST\" \"$(ulimit -v)\" "
                                       "\"$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ' ')\"\n")
        [seen] = await engine.extract(b"x")
    finally:
        del os.environ["PLMAIL_SECRET_FOR_TEST"]
    assert isinstance(seen, dict)
    assert seen["env"] == ""
    assert seen["mem"] == str(engine.memory // 1024)
    if network_isolation() is not None:
        assert seen["net"].split() == ["lo"]


def test_a_named_zone_is_kept_and_one_that_contradicts_its_offset_is_not() -> None:
    def booking(departs: object) -> str:
        item = {"@type": "FlightReservation", "reservationNumber": "ZN1", "reservationFor": {
            "@type": "Flight", "flightNumber": "1", "airline": {"iataCode": "LX"}, "departureTime": departs}}
        return f'<script type="application/ld+json">{json.dumps(item)}</script>'

    [named] = structured_events(booking(
        {"@type": "QDateTime", "@value": "2027-07-01T06:45:00+02:00", "timezone": "Europe/Zurich"}),
        sender="x@swiss.com").events
    assert (named.start, named.time_zone) == (datetime(2027, 7, 1, 4, 45, tzinfo=UTC), "Europe/Zurich")
    [wrong] = structured_events(booking(
        {"@type": "QDateTime", "@value": "2027-07-01T06:45:00+05:00", "timezone": "Europe/Zurich"}),
        sender="x@swiss.com").events
    assert (wrong.start, wrong.time_zone) == (datetime(2027, 7, 1, 1, 45, tzinfo=UTC), None)
    [wall] = structured_events(booking(
        {"@type": "QDateTime", "@value": "2027-01-10T06:45:00", "timezone": "Europe/Zurich"}),
        sender="x@swiss.com").events
    assert (wall.start, wall.time_zone, wall.is_floating) == (datetime(2027, 1, 10, 5, 45, tzinfo=UTC),
                                                              "Europe/Zurich", False)
    [offset_only] = structured_events(booking("2027-07-01T06:45:00+02:00"), sender="x@swiss.com").events
    assert offset_only.time_zone is None
