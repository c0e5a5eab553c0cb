"""Runs every extractor that supports a message and keeps the first claim per dedup key."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from plmail.calendar.extraction.protocol import ExtractorRegistry
from plmail.domain.calendar import ExtractedEvent, ExtractionContext
from plmail.domain.ports import EventExtractor

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ExtractorFailure:
    extractor: str
    error_type: str
    message: str


@dataclass(frozen=True, slots=True)
class ExtractionResult:
    """Winning claims in the order they were made, the duplicates that lost, and what broke."""

    events: tuple[ExtractedEvent, ...]
    superseded: tuple[ExtractedEvent, ...]
    failures: tuple[ExtractorFailure, ...]
    ran: tuple[str, ...]
    stopped_by: str | None


class EventExtractionRunner:
    """First claim per dedup key wins, and extractors run highest priority first, so on a collision
    the more trustworthy source speaks. The loser is not an error: two extractors agreeing about
    one booking is the system working. Each extractor is guarded, because a broken one must cost
    neither the message nor the events the others found.
    """

    __slots__ = ("_registry",)

    def __init__(self, extractors: ExtractorRegistry | Iterable[EventExtractor]) -> None:
        self._registry = extractors if isinstance(extractors, ExtractorRegistry) else ExtractorRegistry(extractors)

    @property
    def registry(self) -> ExtractorRegistry:
        return self._registry

    async def run(self, ctx: ExtractionContext) -> ExtractionResult:
        by_key: dict[str, ExtractedEvent] = {}
        superseded: list[ExtractedEvent] = []
        failures: list[ExtractorFailure] = []
        ran: list[str] = []
        stopped_by: str | None = None
        for extractor in self._registry.ordered():
            name = extractor.name
            try:
                if not extractor.supports(ctx):
                    continue
                ran.append(name)
                claims = await extractor.extract(ctx)
                stops = extractor.stops_cascade()
            except Exception as error:
                log.exception("extractor %s failed on message %s", name, ctx.message_id)
                failures.append(ExtractorFailure(name, type(error).__name__, str(error)[:500]))
                continue
            for claim in claims:
                if by_key.setdefault(claim.dedup_key, claim) is not claim:
                    superseded.append(claim)
            # Only an extractor that actually claimed something may end the cascade: an invitation
            # part that turned out empty must not silence the booking markup beside it.
            if claims and stops:
                stopped_by = name
                break
        return ExtractionResult(tuple(by_key.values()), tuple(superseded), tuple(failures), tuple(ran), stopped_by)
