"""Markup written by an attacker: bounded time and memory, capped output, nothing escapes."""

from __future__ import annotations

import json
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

import pytest

from plmail.calendar.extraction import (
    EventExtractionRunner,
    ExtractedEvent,
    ExtractionContext,
    StructuredResult,
    default_registry,
    structured_events,
)
from plmail.calendar.extraction.claims import jscalendar
from plmail.calendar.extraction.markup import read_markup
from plmail.calendar.extraction.structured import MAX_EVENTS

SECONDS = 2.0
MEGABYTES = 150


@pytest.fixture(scope="module", autouse=True)
def _markup_readers_loaded() -> None:
    """The bounds are for reading hostile markup. The markup libraries load once per process, on first use, so
    one harmless page is read first."""
    read_markup('<script type="application/ld+json">{}</script><div itemscope></div><p typeof="Event">x</p>')


def script(payload: object) -> str:
    return f'<script type="application/ld+json">{json.dumps(payload)}</script>'


def flight(index: int) -> dict[str, object]:
    return {
        "@type": "FlightReservation",
        "reservationNumber": f"R{index}",
        "reservationFor": {
            "@type": "Flight",
            "flightNumber": str(index),
            "airline": {"iataCode": "LH"},
            "departureAirport": {"iataCode": "FRA"},
            "departureTime": "2025-01-01T10:00:00Z",
            "arrivalTime": "2025-01-01T12:00:00Z",
        },
    }


@contextmanager
def bounded() -> Iterator[None]:
    tracemalloc.start()
    began = time.perf_counter()
    try:
        yield
    finally:
        elapsed = time.perf_counter() - began
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    print(f"\n  {elapsed * 1000:.0f} ms, peak {peak / 1e6:.1f} MB")
    assert elapsed < SECONDS
    assert peak < MEGABYTES * 1e6


def read(html: str) -> StructuredResult:
    with bounded():
        result = structured_events(html, sender="attacker@evil.example")
    for event in result.events:
        json.dumps(event.source_payload, allow_nan=False)
        json.dumps(jscalendar(event), allow_nan=False)
    return result


def test_ten_thousand_reservations_in_one_block_are_capped() -> None:
    result = read(script([flight(i) for i in range(10_000)]))
    assert len(result.events) == MAX_EVENTS == 25


def test_ten_thousand_blocks_are_capped() -> None:
    result = read("".join(script(flight(i)) for i in range(10_000)))
    assert len(result.events) == MAX_EVENTS
    assert "JSON-LD blocks after the first 50 not read" in result.errors


def test_ten_thousand_microdata_items_are_capped() -> None:
    item = (
        '<div itemscope itemtype="http://schema.org/EventReservation"><meta itemprop="reservationNumber" content="{i}">'
        '<div itemprop="reservationFor" itemscope itemtype="http://schema.org/Event">'
        '<meta itemprop="name" content="E{i}">'
        '<meta itemprop="startDate" content="2025-01-01T10:00:00Z"></div></div>'
    )
    result = read("".join(item.format(i=i) for i in range(10_000)))
    assert len(result.events) == MAX_EVENTS


def test_five_megabyte_strings_are_cut_to_the_caps() -> None:
    huge = "A" + " word" * 1_000_000
    booking = {
        "@type": "EventReservation",
        "reservationNumber": "N1",
        "underName": {"name": huge[:1_000_000]},
        "reservationFor": {
            "@type": "Event",
            "name": huge,
            "startDate": "2025-01-01T10:00:00Z",
            "location": {"name": "x" * 300_000, "address": huge[:300_000]},
        },
    }
    (event,) = read(script(booking)).events
    assert event.title is not None and len(event.title) == 200
    assert event.location is not None and len(event.location) <= 300
    assert event.description is not None and len(event.description) <= 2_000
    assert len(json.dumps(event.source_payload)) < 100_000


def test_a_block_larger_than_the_parser_reads_costs_only_itself() -> None:
    # libxml2 stops a text node at 10 MB, and past 8 MB a block is not read: that block is lost, not its sibling.
    huge = {**flight(1), "underName": {"name": "x" * 5_000_000}, "description": "y" * 5_000_000}
    result = read(script(huge) + script(flight(2)))
    assert [event.title for event in result.events] == ["Flight LH2 FRA"]
    assert len(result.errors) == 1 and result.errors[0].startswith("JSON-LD block 0")


def test_a_huge_booking_number_does_not_make_a_huge_key() -> None:
    (event,) = read(script({**flight(1), "reservationNumber": "9" * 5_000_000})).events
    assert len(event.dedup_key) == 71


@pytest.mark.parametrize(
    "broken",
    [
        {"reservationNumber": {"@id": "x"}},
        {"reservationNumber": ["A", "B"]},
        {"reservationNumber": True},
        {"reservationNumber": None},
        {"reservationFor": "a string"},
        {"reservationFor": 42},
        {"reservationFor": [None, 1, "x", []]},
        {"reservationFor": {"departureTime": 1735725600}},
        {"reservationFor": {"departureTime": ["2025-01-01T10:00:00Z"] * 3, "departureAirport": 7}},
        {"reservationFor": {"departureTime": {"@value": {"@value": "2025"}}}},
        {"reservationFor": {"departureTime": "2025-13-45T99:99:99Z"}},
        {"reservationFor": {"departureTime": "2025-01-01T10:00:00+99:00"}},
        {"@type": 7},
        {"@type": [{"x": 1}, None]},
        {"reservationStatus": {"x": ["Cancelled"]}},
        {"underName": [[[["deep"]]]]},
    ],
)
def test_wrong_types_never_raise(broken: dict[str, object]) -> None:
    booking = {**flight(1), **broken}
    result = read(script(booking) + script([broken, [broken], {"@graph": broken}]))
    for event in result.events:
        assert isinstance(event.start, datetime) and event.start.tzinfo is UTC


def test_non_finite_numbers_and_odd_characters_stay_json_safe() -> None:
    html = (
        '<script type="application/ld+json">{"@type": "EventReservation", "reservationNumber": "N\\u0000\\ud800",'
        ' "partySize": NaN, "price": Infinity, "reservationFor": {"@type": "Event", "name": "Gig\\u0007\\udfff",'
        ' "startDate": "2025-01-01T10:00:00Z"}}</script>'
    )
    (event,) = read(html).events
    assert event.title == "Gig"
    assert event.source_payload["partySize"] is None and event.source_payload["price"] is None


def test_javascript_urls_never_reach_a_claim_field() -> None:
    booking = {
        **flight(1),
        "url": "javascript:alert(1)",
        "checkinUrl": "javascript:alert(2)",
        "modifyReservationUrl": "JaVaScRiPt:alert(3)",
        "potentialAction": {"@type": "CheckInAction", "target": "javascript:alert(4)"},
    }
    (event,) = read(script(booking)).events
    shown = " ".join(filter(None, (event.title, event.location, event.description)))
    assert "javascript" not in shown.lower()


@pytest.mark.parametrize(
    "html",
    [
        '<script type="application/ld+json">' + '{"a":' * 100_000 + "1" + "}" * 100_000 + "</script>",
        '<script type="application/ld+json">' + "[" * 100_000 + "]" * 100_000 + "</script>",
        script(
            {
                "@type": "FlightReservation",
                "reservationNumber": "X",
                "reservationFor": json.loads("[" * 900 + "]" * 900),
            }
        ),
        script({"@graph": json.loads("[" * 900 + "]" * 900)}),
        '<div itemscope itemtype="http://schema.org/Thing"><div itemprop="x" itemscope>' * 3_000
        + "</div></div>" * 3_000,
        "<div>" * 200_000,
    ],
)
def test_deep_nesting_is_bounded(html: str) -> None:
    assert read(html).events == ()


def test_deep_nesting_does_not_hide_a_sibling_block() -> None:
    deep = '<script type="application/ld+json">' + "[" * 100_000 + "]" * 100_000 + "</script>"
    result = read(deep + script(flight(7)))
    assert [event.title for event in result.events] == ["Flight LH7 FRA"]


async def test_the_runner_survives_hostile_markup_end_to_end() -> None:
    html = script([flight(i) for i in range(10_000)]) + '<script type="application/ld+json">{"broken":</script>'
    with bounded():
        result = await EventExtractionRunner(default_registry()).run(
            ExtractionContext(sender="x@evil.example", body_html=html)
        )
    assert len(result.events) == MAX_EVENTS and result.failures == ()
    assert all(isinstance(event, ExtractedEvent) for event in result.events)
