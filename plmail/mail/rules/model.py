"""What a rule may say: the condition vocabulary (shared with JMAP's filters) and the actions."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from plmail.domain.enums import Category
from plmail.domain.errors import ValidationError
from plmail.mail.repos.filter_sql import RULE_VOCABULARY, FilterCompiler, Params

LABEL_ACTIONS = ("applyLabel", "removeLabel")
PLAIN_ACTIONS = ("archive", "trash", "markSpam", "star", "markRead")
ACTION_TYPES = (*LABEL_ACTIONS, *PLAIN_ACTIONS, "fileIntoCategory")


@dataclass(frozen=True, slots=True)
class RuleDraft:
    name: str
    account_id: int | None
    conditions: dict[str, Any]
    actions: list[dict[str, Any]]
    is_enabled: bool = True
    stop_processing: bool = False


def validate_actions(actions: Iterable[Any], owned_labels: set[int]) -> list[dict[str, Any]]:
    """Normalise the action list; an unknown or incomplete action is refused when the rule is saved."""
    clean: list[dict[str, Any]] = []
    for action in actions:
        if not isinstance(action, dict) or action.get("type") not in ACTION_TYPES:
            raise ValidationError(f"Unknown action {action!r}.")
        kind = action["type"]
        if kind in LABEL_ACTIONS:
            try:
                label = int(action.get("labelId", 0))
            except (TypeError, ValueError):
                label = 0
            if label not in owned_labels:
                raise ValidationError("Choose one of your labels for that action.")
            clean.append({"type": kind, "labelId": label})
        elif kind == "fileIntoCategory":
            category = action.get("category")
            if category not in Category._value2member_map_:
                raise ValidationError("Choose an inbox tab to file into.")
            clean.append({"type": kind, "category": category})
        else:
            clean.append({"type": kind})
    if not clean:
        raise ValidationError("A rule needs at least one action.")
    return clean


def validate_conditions(conditions: Any) -> dict[str, Any]:
    """The tree must compile; a malformed condition is refused loudly, never matched silently."""
    if not isinstance(conditions, dict):
        raise ValidationError("Conditions must be an object.")
    FilterCompiler(RULE_VOCABULARY).compile(conditions, Params())
    return conditions
