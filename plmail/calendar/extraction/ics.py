"""Events from iCalendar invitations: the sender's own UID, SEQUENCE and cancellation.

The one source that is not a guess. RFC 5546 settled long ago what identity and revision mean
for calendar mail, and following it is what makes plmail agree with every other client about
which update supersedes which.
"""

from __future__ import annotations

import logging
from typing import ClassVar

from plmail.calendar.extraction.ics_parse import ICS_CONFIDENCE, ICS_EXTRACTOR, parse_ics
from plmail.calendar.extraction.mime import calendar_parts_from_mime
from plmail.calendar.occurrences import off_the_loop
from plmail.domain.calendar import ExtractedEvent, ExtractionContext

log = logging.getLogger(__name__)

MAX_EVENTS = 50
MAX_PART_BYTES = 8 * 1024 * 1024
# Headers by which a message without a stored calendar part says it is one anyway (Exchange, and
# the meetingMessageType a Graph syncer records), so the raw MIME is worth fetching.
_MEETING_PREFIXES = ("x-microsoft-cdo-", "x-ms-exchange-calendar")


def is_meeting_message(ctx: ExtractionContext) -> bool:
    """Whether the headers flag a meeting message whose invitation may only be in the raw MIME."""
    if "calendarmessage" in (ctx.header("content-class") or "").lower():
        return True
    if "text/calendar" in (ctx.header("content-type") or "").lower():
        return True
    kind = (ctx.header("meetingmessagetype") or ctx.header("x-meeting-message-type") or "").strip().lower()
    if kind and kind != "none":
        return True
    return any(name.startswith(_MEETING_PREFIXES) for name in ctx.header_names())


class IcsEventExtractor:
    """Name ``ics``, priority 100, confidence 100; the only extractor that ends the cascade.

    Its name is a constant because other code looks up the links it leaves (the invitation card
    finds its event that way), and a string typed twice is a card that silently disappears the
    day one of them is renamed.
    """

    NAME: ClassVar[str] = ICS_EXTRACTOR
    CONFIDENCE: ClassVar[int] = ICS_CONFIDENCE
    PRIORITY: ClassVar[int] = 100

    @property
    def name(self) -> str:
        return self.NAME

    def priority(self) -> int:
        return self.PRIORITY

    def stops_cascade(self) -> bool:
        """A real invitation is authoritative; a guess further down has nothing to add to it."""
        return True

    def supports(self, ctx: ExtractionContext) -> bool:
        return bool(ctx.calendar_parts) or (ctx.raw_mime_loader is not None and is_meeting_message(ctx))

    async def extract(self, ctx: ExtractionContext) -> list[ExtractedEvent]:
        parts = ctx.calendar_parts
        if not parts and ctx.raw_mime_loader is not None and is_meeting_message(ctx):
            # Graph has no part for a text/calendar section inside multipart/alternative: read the raw MIME.
            raw = await ctx.raw_mime_loader()
            parts = calendar_parts_from_mime(raw) if raw else ()
        claims: dict[str, ExtractedEvent] = {}
        for part in parts:
            if len(part.data) > MAX_PART_BYTES:
                log.info("calendar part of message %s skipped: %d bytes", ctx.message_id, len(part.data))
                continue
            # A worker process: a hostile VTIMEZONE in a message must not hold the event loop either.
            result = await off_the_loop(parse_ics, part.data, charset=part.charset, part_id=part.part_id)
            for reason in result.skipped:
                log.debug("message %s: %s", ctx.message_id, reason)
            for claim in result.events:
                # The same invitation often comes twice (text/calendar and an .ics attachment): keep
                # one per UID, the highest SEQUENCE, the first on a tie.
                known = claims.get(claim.dedup_key)
                if known is None or claim.sequence > known.sequence:
                    claims[claim.dedup_key] = claim
        return list(claims.values())[:MAX_EVENTS]
