"""Extraction of calendar events from mail: iCalendar invitations, schema.org booking markup, and what
KDE's KItinerary reads in plain-text mail, PDF tickets and Apple Wallet passes.

Extractors make claims (:class:`ExtractedEvent`); the runner keeps the first claim per dedup key
across extractors ordered by priority; whether a claim becomes a calendar row is decided later,
by the reconciler.
"""

from plmail.calendar.extraction.claims import DEDUP_KEY_VERSION, anchored, nominal_end, override_key
from plmail.calendar.extraction.context import CALENDAR_CONTENT_TYPES
from plmail.calendar.extraction.domains import registrable_domain
from plmail.calendar.extraction.ics import IcsEventExtractor, is_meeting_message
from plmail.calendar.extraction.ics_parse import ICS_EXTRACTOR, IcsParseResult, ics_dedup_key, parse_ics
from plmail.calendar.extraction.kitinerary import KITINERARY_EXTRACTOR, KItineraryExtractor, booking_signals
from plmail.calendar.extraction.kitinerary_engine import EngineStatus, KItineraryEngine, KItineraryError
from plmail.calendar.extraction.mime import calendar_parts_from_mime, context_from_mime
from plmail.calendar.extraction.protocol import DuplicateExtractorError, ExtractorRegistry
from plmail.calendar.extraction.registry import default_extractors, default_registry
from plmail.calendar.extraction.runner import EventExtractionRunner, ExtractionResult, ExtractorFailure
from plmail.calendar.extraction.structured import (
    STRUCTURED_DATA_EXTRACTOR,
    StructuredDataEventExtractor,
    StructuredResult,
    schema_claims,
    structured_dedup_key,
    structured_events,
)
from plmail.domain.calendar import (
    AttachmentFacts,
    CalendarPart,
    EventKind,
    EventStatus,
    ExtractedEvent,
    ExtractionContext,
    ItipMethod,
    Participant,
    RawMimeLoader,
)
from plmail.domain.ports import EventExtractor

__all__ = [
    "CALENDAR_CONTENT_TYPES",
    "DEDUP_KEY_VERSION",
    "ICS_EXTRACTOR",
    "KITINERARY_EXTRACTOR",
    "STRUCTURED_DATA_EXTRACTOR",
    "AttachmentFacts",
    "CalendarPart",
    "DuplicateExtractorError",
    "EngineStatus",
    "EventExtractionRunner",
    "EventExtractor",
    "EventKind",
    "EventStatus",
    "ExtractedEvent",
    "ExtractionContext",
    "ExtractionResult",
    "ExtractorFailure",
    "ExtractorRegistry",
    "IcsEventExtractor",
    "IcsParseResult",
    "ItipMethod",
    "KItineraryEngine",
    "KItineraryError",
    "KItineraryExtractor",
    "Participant",
    "RawMimeLoader",
    "StructuredDataEventExtractor",
    "StructuredResult",
    "anchored",
    "booking_signals",
    "calendar_parts_from_mime",
    "context_from_mime",
    "default_extractors",
    "default_registry",
    "ics_dedup_key",
    "is_meeting_message",
    "nominal_end",
    "override_key",
    "parse_ics",
    "registrable_domain",
    "schema_claims",
    "structured_dedup_key",
    "structured_events",
]
