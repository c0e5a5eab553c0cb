"""A parsed search: what the search box asked for (`mail/search.py` parses it, the view repository runs it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from plmail.domain.enums import LabelRole


@dataclass(slots=True)
class SearchQuery:
    text: str = ""
    conditions: list[dict[str, Any]] = field(default_factory=list)  # filter-compiler conditions, ANDed
    labels: list[str] = field(default_factory=list)  # label:… names (paths with "/")
    roles: list[LabelRole] = field(default_factory=list)
    unread: bool | None = None
    starred: bool | None = None

    @property
    def includes_trash(self) -> bool:
        return LabelRole.TRASH in self.roles or LabelRole.SPAM in self.roles

    @property
    def empty(self) -> bool:
        return not (self.text or self.conditions or self.labels or self.roles or self.unread is not None
                    or self.starred is not None)
