"""ClassificationHold: a list of reasons *not* to hold new mail for the assistant.

For someone who lets the assistant sort, the rules' category is a guess about to be replaced: shown at
once, the mail appeared under General and jumped to Promotions seconds later. Where the verdict can
still change the answer, the message waits instead (its new thread gets no category, so it is in no
tab) — but only then.
"""

from __future__ import annotations

from enum import StrEnum

from plmail.assistant.settings import AssistantSettingsStore
from plmail.domain.ingest import HoldQuestion


class NoHold(StrEnum):
    SWITCHED_OFF = "switched_off"  # no model, or holding is off on the admin page
    USER_SORTS_BY_RULES = "rules_only"
    IMPORT = "import"  # the account is still bringing in its mailbox
    OLD = "old"
    OWN_SENT_COPY = "own_sent_copy"
    ALREADY_DECIDED = "already_decided"  # a Gmail label or a known correspondent settles it


def reasons_not_to_hold(facts: HoldQuestion) -> list[NoHold]:
    reasons: list[NoHold] = []
    if not facts.holding_enabled:
        reasons.append(NoHold.SWITCHED_OFF)
    if facts.user_sorts_by_rules:
        reasons.append(NoHold.USER_SORTS_BY_RULES)
    if not facts.live:
        reasons.append(NoHold.IMPORT)
    if not facts.recent:
        reasons.append(NoHold.OLD)
    if facts.own_sent_copy:
        reasons.append(NoHold.OWN_SENT_COPY)
    if not facts.verdict_could_decide:
        reasons.append(NoHold.ALREADY_DECIDED)
    return reasons


class ClassificationHold:
    """The pipeline's hold (the `IngestHold` port): whether holding is switched on right now (a model is set up
    and holding is not off on the admin page), and whether one message waits."""

    def __init__(self, settings: AssistantSettingsStore) -> None:
        self.settings = settings

    async def enabled(self) -> bool:
        return (await self.settings.load()).holding

    def should_hold(self, question: HoldQuestion) -> bool:
        return not reasons_not_to_hold(question)
