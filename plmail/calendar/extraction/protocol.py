"""The extractor axis: one Protocol, and a registry that orders implementations by priority."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from plmail.calendar.extraction.claims import ExtractedEvent
from plmail.calendar.extraction.context import ExtractionContext


@runtime_checkable
class EventExtractor(Protocol):
    """Reads one kind of machine-made event data out of a message; adding one is writing a class."""

    @property
    def name(self) -> str:
        """Stable identifier, stored on every source link the extractor's claims produce."""
        ...

    def supports(self, ctx: ExtractionContext) -> bool:
        """Cheap enough to call for every message; anything expensive belongs in ``extract``."""
        ...

    async def extract(self, ctx: ExtractionContext) -> list[ExtractedEvent]: ...

    def stops_cascade(self) -> bool:
        """Whether claims from this extractor make lower-priority extractors pointless for the message."""
        ...

    def priority(self) -> int: ...


class DuplicateExtractorError(ValueError):
    pass


class ExtractorRegistry:
    """Extractors by name, handed out highest priority first (registration order breaks ties)."""

    __slots__ = ("_extractors",)

    def __init__(self, extractors: Iterable[EventExtractor] = ()) -> None:
        self._extractors: list[EventExtractor] = []
        for extractor in extractors:
            self.register(extractor)

    def register(self, extractor: EventExtractor) -> None:
        if any(existing.name == extractor.name for existing in self._extractors):
            raise DuplicateExtractorError(f"an extractor named {extractor.name!r} is already registered")
        self._extractors.append(extractor)

    def get(self, name: str) -> EventExtractor | None:
        return next((extractor for extractor in self._extractors if extractor.name == name), None)

    def ordered(self) -> tuple[EventExtractor, ...]:
        return tuple(sorted(self._extractors, key=lambda extractor: -extractor.priority()))

    def names(self) -> tuple[str, ...]:
        return tuple(extractor.name for extractor in self.ordered())

    def __len__(self) -> int:
        return len(self._extractors)
