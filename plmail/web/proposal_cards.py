"""Proposal cards above a message: what the template shows of a proposal, in the reader's zone and language."""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from typing import Any

from plmail.calendar.display import reader_zone, span_label
from plmail.calendar.proposals.facts import event_times
from plmail.domain.calendar import StoredProposal
from plmail.domain.models import User
from plmail.web.i18n import translate


def _midnight_utc(value: datetime | date) -> datetime:
    """An all-day span as the display helpers read stored events: dates at UTC midnight."""
    if isinstance(value, datetime):
        return value
    return datetime.combine(value, time(), UTC)


def proposal_when(proposal: StoredProposal, user: User) -> str:
    locale = user.locale.value

    def t(text: str) -> str:
        return translate(text, locale)

    start, end = event_times(proposal.starts_at, proposal.ends_at, all_day=proposal.is_all_day,
                             time_zone=proposal.time_zone)
    return span_label(_midnight_utc(start), _midnight_utc(end), all_day=proposal.is_all_day,
                      where=reader_zone(user.time_zone), locale=locale, t=t)


def proposal_view(proposal: StoredProposal, user: User, *, state: str | None = None,
                  event_id: int | None = None) -> dict[str, Any]:
    """``state`` is None for an open offer, "accepted" or "declined" for the card that replaces it."""
    anchor = f"/thread/{proposal.thread_id}#m{proposal.message_id}" if proposal.thread_id else "/"
    return {"id": proposal.id, "title": proposal.title, "when": proposal_when(proposal, user),
            "sentence": proposal.source_sentence, "confidence": proposal.confidence, "next": anchor, "state": state,
            "event_id": event_id}
