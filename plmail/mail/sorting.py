"""A user's sorting preferences: who sorts (the assistant or the rules alone) and which tabs are switched off.

Every change re-sorts stored mail with the same backfill `plmail backfill category` runs, as a job, so
the settings page answers at once and a phone learns of the moved threads through the change log.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from plmail.db.repos.users import UserRepository
from plmail.domain.enums import Category
from plmail.domain.errors import ValidationError
from plmail.domain.jobs import RESORT_MAIL
from plmail.domain.ports import Enqueuer

SORTING_CHOICES = ("assistant", "rules")


@dataclass(frozen=True, slots=True)
class SortingPreferences:
    sorting: str  # "assistant" (when the administrator set up a model) or "rules"
    disabled: frozenset[Category]


class SortingService:
    def __init__(self, users: UserRepository, queues: Enqueuer) -> None:
        self.users = users
        self.queues = queues

    async def load(self, user_id: int) -> SortingPreferences:
        settings = await self.users.settings(user_id)
        sorting = settings.get("sorting")
        raw = settings.get("categories_disabled")
        disabled = frozenset(Category(c) for c in raw if c in Category._value2member_map_) \
            if isinstance(raw, list) else frozenset()
        return SortingPreferences(sorting if sorting in SORTING_CHOICES else "assistant", disabled)

    async def save(self, user_id: int, *, sorting: str, disabled: Collection[str]) -> bool:
        """Store the preferences; returns True when they changed and a re-sort was queued."""
        if sorting not in SORTING_CHOICES:
            raise ValidationError("Choose who sorts your mail.")
        unknown = [c for c in disabled if c not in Category._value2member_map_]
        if unknown or Category.GENERAL.value in disabled:
            raise ValidationError("The General tab cannot be switched off.")
        wanted = SortingPreferences(sorting, frozenset(Category(c) for c in disabled))
        if wanted == await self.load(user_id):
            return False
        await self.users.merge_settings(user_id, {
            "sorting": sorting, "categories_disabled": sorted(c.value for c in wanted.disabled),
        })
        await self.queues.enqueue(RESORT_MAIL, user_id=user_id)
        return True
