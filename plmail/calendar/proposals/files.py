"""`plmail extract` with proposals: what the proposer would offer from a message file, without a database.

``--me`` is the recipient (the "addressed to the user" rule reads it), ``--lang`` and ``--tz`` are the
user's settings; the category is the categoriser's verdict from the file's own headers.
"""

from __future__ import annotations

import asyncio
import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from plmail.calendar.files import ExtractOptions, FileExtractor
from plmail.calendar.files import human_lines as event_lines
from plmail.calendar.proposals.facts import has_meeting_headers, message_date, proposal_json, user_language
from plmail.calendar.proposals.proposer import EventProposer, ProposalDecision, ProposalInput, has_schema_markup
from plmail.mail.public import CategoryFacts, MessageCategorizer, parse_mime

_ICS_START = b"BEGIN:VCALENDAR"


def file_input(data: bytes, options: ExtractOptions, *, extracted: bool) -> ProposalInput:
    """Facts about a message file. A file has no arrival; with no Date header either, reading it now is
    its arrival, which is the one place "now" is the answer."""
    parsed = parse_mime(data)
    category = MessageCategorizer().categorize(CategoryFacts(parsed.from_address, parsed.headers, None))
    fallback = datetime.now(UTC)
    return ProposalInput(
        message_key=parsed.message_id or f"file:{hashlib.sha256(data).hexdigest()}", owner_user_id=0,
        is_draft=False, category=category, message_date=message_date(parsed.headers, parsed.sent_at, None, fallback),
        body_text=parsed.body_text or "", subject=parsed.subject, headers=parsed.headers,
        to_addresses=tuple(a.address for a in parsed.to), cc_addresses=tuple(a.address for a in parsed.cc),
        account_addresses=frozenset({options.me.strip().lower()}) if options.me else frozenset(),
        has_calendar_part=any(part.is_calendar for part in parsed.parts),
        has_meeting_headers=has_meeting_headers(parsed.headers), has_schema_markup=has_schema_markup(parsed.body_html),
        has_applied_extraction_link=extracted, time_zone=options.tz, language=user_language(options.lang),
    )


class ProposingFileExtractor(FileExtractor):
    """The extractors over a file, then the proposer over the same file, as the two run over stored mail."""

    def __init__(self, options: ExtractOptions, proposer: EventProposer | None = None) -> None:
        super().__init__(options)
        self.proposer = proposer or EventProposer()

    async def extract(self, path: Path) -> dict[str, Any]:
        shown = await super().extract(path)
        if "error" in shown:
            return shown
        try:
            data = await asyncio.to_thread(path.read_bytes)
            if data.lstrip()[: len(_ICS_START)].upper() == _ICS_START:
                return shown  # a bare calendar has no sentences
            decision = self.decide(data, extracted=bool(shown["events"]))
        except Exception as error:  # a debugging tool reports what broke and goes on to the next file
            return {**shown, "error": f"proposals: {type(error).__name__}: {error}"}
        shown["proposals"] = [proposal_json(p) for p in decision.proposals]
        return shown

    def decide(self, data: bytes, *, extracted: bool) -> ProposalDecision:
        return self.proposer.decide(file_input(data, self.options, extracted=extracted))


def human_lines(shown: dict[str, Any]) -> list[str]:
    """The events' lines, then one line per proposal."""
    lines = event_lines(shown)
    for proposal in shown.get("proposals", []):
        lines.append(f"  proposal {proposal['start']} – {proposal['end']}  {proposal['title']}  "
                     f"[{proposal['detector']} {proposal['confidence']}] “{proposal['sentence']}”")
    return lines
