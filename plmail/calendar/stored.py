"""Extraction input from stored mail: the context a live message had, rebuilt from rows and blobs.

Also the replay of stored payloads: a link keeps what its extractor read, so an improved mapper
can be run again over it without the message's bytes, or a mail server.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

from plmail.calendar.extraction import (
    ICS_EXTRACTOR,
    KITINERARY_EXTRACTOR,
    STRUCTURED_DATA_EXTRACTOR,
    AttachmentFacts,
    CalendarPart,
    ExtractedEvent,
    ExtractionContext,
    KItineraryExtractor,
    parse_ics,
    schema_claims,
    structured_events,
)
from plmail.calendar.reconciler import MessageFacts
from plmail.calendar.repos.links import StoredPayload
from plmail.calendar.repos.sources import CalendarSourceRepository, MessageInput
from plmail.domain.errors import NotFoundError
from plmail.mail.public import BlobStore, RawMessageResolver

log = logging.getLogger(__name__)


def message_facts(message: MessageInput) -> MessageFacts:
    return MessageFacts(
        message_id=message.id, user_id=message.user_id, account_id=message.account_id,
        arrived_at=message.arrived_at, user_zone=message.user_zone, addresses=message.addresses,
    )


class StoredContextBuilder:
    def __init__(self, sources: CalendarSourceRepository, blobs: BlobStore, raw_messages: RawMessageResolver) -> None:
        self.sources = sources
        self.blobs = blobs
        self.raw_messages = raw_messages

    async def context(self, message: MessageInput) -> ExtractionContext:
        """Calendar parts from the blob store (a missing blob raises NotFoundError), the raw body_html,
        the headers as stored, and a loader that fetches the original only if an extractor asks."""
        parts = tuple([
            CalendarPart(content_type=part.content_type, data=await self.blobs.get(part.sha256), part_id=part.id,
                         charset=part.charset)
            for part in message.parts
            if part.sha256 is not None
        ])

        async def load_raw() -> bytes | None:
            async def remember(digest: str) -> None:
                await self.sources.remember_raw(message.user_id, message.id, digest)

            try:
                return await self.raw_messages.load(
                    raw_path=message.raw_path, account_id=message.account_id, message_id=message.id,
                    kind=message.provider_kind, remember=remember,
                )
            except NotFoundError:
                log.info("message %s: original not available for raw-MIME extraction", message.id)
                return None

        return ExtractionContext(
            message_id=message.id, account_id=message.account_id, received_at=message.received_at,
            sent_at=message.sent_at, subject=message.subject, sender=message.from_address, headers=message.headers,
            calendar_parts=parts, body_html=message.body_html, raw_mime_loader=load_raw,
            attachments=tuple(AttachmentFacts(a.content_type, a.filename) for a in message.attachments),
        )


def claims_from_payloads(payloads: Sequence[StoredPayload], *, sender: str | None) -> list[ExtractedEvent]:
    """The claims stored payloads make when read again by today's extractors, one per stored key."""
    claims: dict[str, ExtractedEvent] = {}
    for stored in payloads:
        for claim in _replay(stored, sender):
            if claim.dedup_key == stored.dedup_key:
                claims.setdefault(claim.dedup_key, claim)
    return list(claims.values())


def _replay(stored: StoredPayload, sender: str | None) -> Sequence[ExtractedEvent]:
    payload = stored.payload
    if stored.extractor == ICS_EXTRACTOR:
        text = payload.get("ical")
        return parse_ics(text, part_id=stored.part_id).events if isinstance(text, str) else ()
    if stored.extractor == STRUCTURED_DATA_EXTRACTOR:
        # The node is what the extractor read; "</" is escaped so no string in it can close the script.
        block = json.dumps(payload, ensure_ascii=False).replace("</", "<\\/")
        html = f'<script type="application/ld+json">{block}</script>'
        return structured_events(html, sender=sender).events
    if stored.extractor == KITINERARY_EXTRACTOR:
        # The item KItinerary printed, read again by today's mapping; the binary is not needed for that.
        return schema_claims([payload], sender=sender, extractor=KITINERARY_EXTRACTOR,
                             confidence=KItineraryExtractor.CONFIDENCE)[0]
    return ()
