"""Where a calendar event came from, and what that origin allows."""

from __future__ import annotations

from enum import StrEnum
from typing import assert_never

from plmail.domain.calendar import EventStatus

# Below every parsed source (the schema.org markup's 90, an invitation's 100): a guess never looks like a fact.
UNTRUSTED_CONFIDENCE_CAP = 50


class EventSource(StrEnum):
    MANUAL = "manual"
    ACCEPTED_PROPOSAL = "accepted_proposal"
    ICS = "ics"
    STRUCTURED_DATA = "structured_data"
    LLM = "llm"
    REMOTE_SYNC = "remote_sync"

    def is_trusted(self) -> bool:
        """False means: never pushed outward (a connected calendar, a subscription feed), confidence capped,
        stored tentative and shown with an explicit "unconfirmed" marker.

        Exhaustive on purpose: a new member must be classified here by hand, or mypy fails, instead of
        silently inheriting calendar-write permission the way a `!= LLM` comparison would grant it.
        """
        source = self
        match source:
            case (
                EventSource.MANUAL
                | EventSource.ACCEPTED_PROPOSAL
                | EventSource.ICS
                | EventSource.STRUCTURED_DATA
                | EventSource.REMOTE_SYNC
            ):
                return True
            case EventSource.LLM:
                return False
        assert_never(source)

    def may_be_rewritten_by_mail(self) -> bool:
        """Only what mail put there may be revised by later mail; a person's decision is never overwritten."""
        source = self
        match source:
            case EventSource.ICS | EventSource.STRUCTURED_DATA:
                return True
            case (
                EventSource.MANUAL
                | EventSource.ACCEPTED_PROPOSAL
                | EventSource.LLM
                | EventSource.REMOTE_SYNC
            ):
                return False
        assert_never(source)


def is_trusted_source(stored: str) -> bool:
    """A stored source string, read as `EventSource.is_trusted`; a value no member names is not trusted."""
    known = EventSource._value2member_map_.get(stored)
    return isinstance(known, EventSource) and known.is_trusted()


def written_status(source: EventSource, claimed: EventStatus) -> EventStatus:
    """An untrusted source never asserts a confirmed event: it is tentative until a person confirms it."""
    if not source.is_trusted() and claimed is EventStatus.CONFIRMED:
        return EventStatus.TENTATIVE
    return claimed


def written_confidence(source: EventSource, claimed: int) -> int:
    ceiling = 100 if source.is_trusted() else UNTRUSTED_CONFIDENCE_CAP
    return min(max(claimed, 0), ceiling)
