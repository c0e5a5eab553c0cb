"""The extractor axis: one Protocol, and a registry that orders implementations by priority."""

from __future__ import annotations

from collections.abc import Iterable

from plmail.domain.ports import EventExtractor


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
