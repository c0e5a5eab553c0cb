"""The extractors plmail runs, in one place."""

from __future__ import annotations

from plmail.calendar.extraction.ics import IcsEventExtractor
from plmail.calendar.extraction.protocol import ExtractorRegistry
from plmail.calendar.extraction.structured import StructuredDataEventExtractor
from plmail.domain.ports import EventExtractor


def default_extractors() -> tuple[EventExtractor, ...]:
    """Every extractor, fresh instances; adding one is writing its class and listing it here."""
    return (IcsEventExtractor(), StructuredDataEventExtractor())


def default_registry() -> ExtractorRegistry:
    return ExtractorRegistry(default_extractors())
