"""The extractors plmail runs, in one place."""

from __future__ import annotations

from plmail.calendar.extraction.ics import IcsEventExtractor
from plmail.calendar.extraction.kitinerary import KItineraryExtractor
from plmail.calendar.extraction.kitinerary_engine import KItineraryEngine
from plmail.calendar.extraction.protocol import ExtractorRegistry
from plmail.calendar.extraction.structured import StructuredDataEventExtractor
from plmail.domain.ports import EventExtractor


def default_extractors(kitinerary: KItineraryEngine | None = None) -> tuple[EventExtractor, ...]:
    """Every extractor, fresh instances; adding one is writing its class and listing it here. KItinerary's
    engine is found on the machine unless one is given (tests and benchmarks choose theirs)."""
    return (IcsEventExtractor(), StructuredDataEventExtractor(), KItineraryExtractor(kitinerary))


def default_registry(kitinerary: KItineraryEngine | None = None) -> ExtractorRegistry:
    return ExtractorRegistry(default_extractors(kitinerary))
