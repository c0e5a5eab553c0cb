"""The cascade: priority order, first claim per dedup key, guarded extractors, and when it stops."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from plmail.calendar.extraction import (
    CalendarPart,
    DuplicateExtractorError,
    EventExtractionRunner,
    EventExtractor,
    EventKind,
    EventStatus,
    ExtractedEvent,
    ExtractionContext,
    ExtractionResult,
    ExtractorRegistry,
    IcsEventExtractor,
    StructuredDataEventExtractor,
    default_extractors,
    default_registry,
)

START = datetime(2024, 3, 1, 9, tzinfo=UTC)


def claim(key: str, extractor: str, title: str = "") -> ExtractedEvent:
    return ExtractedEvent(
        uid=key,
        dedup_key=key,
        extractor=extractor,
        confidence=50,
        kind=EventKind.EVENT,
        status=EventStatus.CONFIRMED,
        start=START,
        end=None,
        all_day=False,
        title=title or extractor,
    )


@dataclass
class StandIn:
    """An in-memory extractor: claims the given keys, or raises, and records that it ran."""

    name: str
    rank: int
    keys: tuple[str, ...] = ()
    stops: bool = False
    supported: bool = True
    error: Exception | None = None
    calls: list[str] = field(default_factory=list)

    def supports(self, ctx: ExtractionContext) -> bool:
        return self.supported

    async def extract(self, ctx: ExtractionContext) -> list[ExtractedEvent]:
        self.calls.append(self.name)
        if self.error is not None:
            raise self.error
        return [claim(key, self.name) for key in self.keys]

    def stops_cascade(self) -> bool:
        return self.stops

    def priority(self) -> int:
        return self.rank


async def run(*extractors: EventExtractor, ctx: ExtractionContext | None = None) -> tuple[list[str], ExtractionResult]:
    result = await EventExtractionRunner(extractors).run(ctx or ExtractionContext())
    return [f"{event.dedup_key}<-{event.extractor}" for event in result.events], result


def test_stand_ins_and_real_extractors_satisfy_the_protocol() -> None:
    assert isinstance(StandIn("x", 1), EventExtractor)
    assert all(isinstance(extractor, EventExtractor) for extractor in default_extractors())


async def test_higher_priority_runs_first_and_wins_a_shared_key() -> None:
    low = StandIn("low", 10, keys=("k1", "k2"))
    high = StandIn("high", 90, keys=("k1",))
    events, result = await run(low, high)
    assert events == ["k1<-high", "k2<-low"]
    assert [(e.dedup_key, e.extractor) for e in result.superseded] == [("k1", "low")]
    assert result.ran == ("high", "low")


async def test_independent_claims_all_survive() -> None:
    events, _ = await run(StandIn("a", 50, keys=("flight-leg-1", "flight-leg-2")), StandIn("b", 40, keys=("parcel",)))
    assert events == ["flight-leg-1<-a", "flight-leg-2<-a", "parcel<-b"]


async def test_a_failing_extractor_costs_neither_the_message_nor_the_others() -> None:
    broken = StandIn("broken", 95, error=RuntimeError("parser exploded"))
    events, result = await run(StandIn("first", 99, keys=("a",)), broken, StandIn("last", 10, keys=("b",)))
    assert events == ["a<-first", "b<-last"]
    failures = result.failures
    assert [(f.extractor, f.error_type, f.message) for f in failures] == [("broken", "RuntimeError", "parser exploded")]


async def test_stopping_extractor_that_claimed_something_ends_the_cascade() -> None:
    lower = StandIn("lower", 10, keys=("b",))
    events, result = await run(StandIn("authority", 100, keys=("a",), stops=True), lower)
    assert events == ["a<-authority"] and lower.calls == []
    assert result.stopped_by == "authority"


async def test_stopping_extractor_that_claimed_nothing_does_not_stop() -> None:
    lower = StandIn("lower", 10, keys=("b",))
    events, result = await run(StandIn("authority", 100, stops=True), lower)
    assert events == ["b<-lower"] and lower.calls == ["lower"]
    assert result.stopped_by is None


async def test_earlier_claims_do_not_let_a_silent_stopper_end_the_cascade() -> None:
    lower = StandIn("lower", 10, keys=("c",))
    events, _ = await run(StandIn("first", 200, keys=("a",)), StandIn("stopper", 100, stops=True), lower)
    assert events == ["a<-first", "c<-lower"]


async def test_a_failing_stopper_does_not_stop() -> None:
    lower = StandIn("lower", 10, keys=("b",))
    events, _ = await run(StandIn("stopper", 100, stops=True, error=ValueError("bad part")), lower)
    assert events == ["b<-lower"]


async def test_unsupported_extractors_are_not_run() -> None:
    skipped = StandIn("skipped", 50, keys=("x",), supported=False)
    events, result = await run(skipped)
    assert events == [] and skipped.calls == [] and result.ran == ()


def test_registry_orders_by_priority_and_refuses_duplicate_names() -> None:
    registry = ExtractorRegistry([StandIn("b", 5), StandIn("a", 50), StandIn("c", 5)])
    assert registry.names() == ("a", "b", "c")
    with pytest.raises(DuplicateExtractorError):
        registry.register(StandIn("a", 1))
    assert registry.get("b") is not None and registry.get("zzz") is None
    assert default_registry().names() == ("ics", "structured_data", "kitinerary")


INVITE = (
    b"BEGIN:VCALENDAR\r\nMETHOD:REQUEST\r\nBEGIN:VEVENT\r\nUID:dinner-42\r\nDTSTART:20240301T180000Z\r\n"
    b"SUMMARY:Dinner\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
)
MARKUP = """<html><head><script type="application/ld+json">
{"@context": "https://schema.org", "@type": "FoodEstablishmentReservation", "reservationNumber": "T-1",
 "reservationFor": {"@type": "FoodEstablishment", "name": "Chez Test"}, "startTime": "2024-03-01T19:00:00+01:00"}
</script></head><body>Your table</body></html>"""


async def test_an_invitation_makes_booking_markup_beside_it_pointless() -> None:
    ctx = ExtractionContext(
        sender="bookings@mail.example.co.uk",
        calendar_parts=(CalendarPart("text/calendar", INVITE),),
        body_html=MARKUP,
    )
    result = await EventExtractionRunner(default_registry()).run(ctx)
    assert [(e.extractor, e.title) for e in result.events] == [("ics", "Dinner")]
    assert result.stopped_by == IcsEventExtractor.NAME and result.ran == ("ics",)


async def test_an_empty_calendar_part_leaves_the_markup_to_be_read() -> None:
    ctx = ExtractionContext(
        sender="bookings@mail.example.co.uk",
        calendar_parts=(CalendarPart("text/calendar", b""),),
        body_html=MARKUP,
    )
    result = await EventExtractionRunner(default_registry()).run(ctx)
    assert [(e.extractor, e.title, e.start) for e in result.events] == [
        (StructuredDataEventExtractor.NAME, "Chez Test", datetime(2024, 3, 1, 18, tzinfo=UTC))
    ]
    assert result.ran == ("ics", "structured_data") and result.stopped_by is None


async def test_plain_mail_runs_no_extractor() -> None:
    ctx = ExtractionContext(sender="a@example.org", body_html="<p>See you at 5?</p>")
    result = await EventExtractionRunner(default_registry()).run(ctx)
    assert result.ran == () and result.events == ()
