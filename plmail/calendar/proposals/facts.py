"""Proposer input from a stored message row, or from a message file: the same facts either way, no I/O."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from zoneinfo import ZoneInfo

from plmail.calendar.extraction import ExtractionContext
from plmail.calendar.extraction.ics import is_meeting_message
from plmail.calendar.proposals.proposer import Proposal, ProposalInput, has_schema_markup
from plmail.calendar.repos.proposals import ProposalSource
from plmail.calendar.timezones import zone
from plmail.domain.enums import Category, Locale
from plmail.domain.messages import RawHeaders
from plmail.mail.public import header_values


def _never(_key_hash: str) -> bool:
    return False


def written_date(value: str | None) -> datetime | None:
    """A Date header with the writer's own offset kept (storage normalises to UTC and loses it)."""
    if not value:
        return None
    try:
        parsed = parsedate_to_datetime(value.strip()[:200])
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if parsed is None or parsed.tzinfo is None or not 1970 <= parsed.year <= 2200:
        return None
    return parsed


def message_date(headers: RawHeaders, sent_at: datetime | None, received_at: datetime | None,
                 fallback: datetime) -> datetime:
    """The moment relative dates count from: the writer's Date (with its offset, so "morgen" is the writer's
    tomorrow) when it names the stored instant, else the stored instants. Never now: a backfill must read
    old mail as the live path read it on the day it arrived."""
    dates = header_values(headers, "date")
    written = written_date(dates[0]) if dates else None
    if written is not None and (sent_at is None or written == sent_at):
        return written
    return sent_at or received_at or fallback


def user_zone_name(name: str | None) -> str:
    """The user's zone, or UTC for a name that is no zone: one bad setting must not cost every message."""
    return name if name and zone(name) is not None else "UTC"


def user_language(value: str | None) -> Locale:
    return Locale(value) if value is not None and value in Locale._value2member_map_ else Locale.EN


def has_meeting_headers(headers: RawHeaders) -> bool:
    """The ICS extractor's own test, so "an extractor could read this" means one thing in both places."""
    return is_meeting_message(ExtractionContext(headers=_string_headers(headers)))


def _string_headers(headers: RawHeaders) -> dict[str, str | list[str]]:
    clean: dict[str, str | list[str]] = {}
    for name, value in headers.items():
        if isinstance(value, str):
            clean[str(name)] = value
        elif isinstance(value, list):
            clean[str(name)] = [item for item in value if isinstance(item, str)]
    return clean


def stored_message_key(source: ProposalSource) -> str:
    """The Message-ID, else the provider's id, else the row's own: stable for as long as the row exists."""
    return source.rfc_message_id or source.provider_id or f"plmail-message:{source.id}"


def stored_input(
    source: ProposalSource,
    *,
    suppressed: Callable[[str], bool] = _never,
    accepted: Callable[[str], bool] = _never,
) -> ProposalInput:
    """Facts about one stored message. A held message counts as not categorised yet: the assistant may
    still move it out of General, and "not sorted yet" is not "sorted as personal"."""
    category = None
    if source.category is not None and source.category in Category._value2member_map_ and not source.held:
        category = Category(source.category)
    return ProposalInput(
        message_key=stored_message_key(source), owner_user_id=source.user_id, is_draft=source.is_draft,
        category=category,
        message_date=message_date(source.headers, source.sent_at, source.received_at, source.created_at),
        body_text=source.body_text or "", subject=source.subject or "", headers=source.headers,
        to_addresses=source.to_addresses, cc_addresses=source.cc_addresses,
        account_addresses=source.account_addresses, has_calendar_part=source.has_calendar_part,
        has_meeting_headers=has_meeting_headers(source.headers), has_schema_markup=has_schema_markup(source.body_html),
        has_applied_extraction_link=source.has_applied_link, time_zone=user_zone_name(source.user_zone),
        language=user_language(source.user_locale), message_id=source.id, suppressed=suppressed, accepted=accepted,
    )


def event_times(
    start: datetime, end: datetime, *, all_day: bool, time_zone: str
) -> tuple[datetime | date, datetime | date]:
    """Start and end as an event takes them: local dates (end exclusive) for all-day, instants otherwise."""
    if all_day:
        where = ZoneInfo(time_zone)
        return start.astimezone(where).date(), end.astimezone(where).date()
    return start, end


def _iso(value: datetime | date) -> str:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    return value.isoformat()


def proposal_json(proposal: Proposal) -> dict[str, Any]:
    """What `plmail extract` prints for a proposal; times as the events beside it print theirs."""
    start, end = event_times(proposal.start, proposal.end, all_day=proposal.all_day, time_zone=proposal.time_zone)
    return {"title": proposal.title, "start": _iso(start), "end": _iso(end), "sentence": proposal.source_sentence,
            "confidence": proposal.confidence, "detector": proposal.detector}
