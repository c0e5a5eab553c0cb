"""KItineraryExtractor: the bookings most airline, rail and hotel mail carries without any markup.

KDE's KItinerary (the engine Nextcloud Mail uses too) holds vendor extractors for plain-text mail, PDF
tickets, boarding-pass barcodes and Apple Wallet passes. It prints schema.org JSON-LD, which goes
through the same mapping the structured-data extractor uses: the same dedup keys, caps and confidence,
so a booking read by both is one claim, and the markup the sender wrote wins the collision.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from email.message import EmailMessage
from typing import ClassVar

from plmail.calendar.extraction.domains import registrable_domain
from plmail.calendar.extraction.kitinerary_engine import MAX_INPUT_BYTES, EngineStatus, KItineraryEngine
from plmail.calendar.extraction.structured import STRUCTURED_DATA_CONFIDENCE, schema_claims
from plmail.domain.calendar import AttachmentFacts, ExtractedEvent, ExtractionContext

log = logging.getLogger(__name__)

KITINERARY_EXTRACTOR = "kitinerary"

# Registrable domains of senders KItinerary has vendor extractors for (its --list-extractors, by company).
BOOKING_SENDERS = frozenset({
    "accor.com", "accorhotels.com", "aegeanair.com", "aerlingus.com", "agoda.com", "aircoach.ie", "airdo.jp",
    "airfrance.com", "airfrance.fr", "amadeus.com", "amadeus.net", "amtrak.com", "aohostels.com", "availpro.com",
    "bahn.de", "bahn.com", "deutschebahn.com", "blablacar.com", "blablacar.de", "booking.com", "brusselsairlines.com",
    "bvg.de", "cd.cz", "easyjet.com", "eurowings.com", "eventbrite.com", "eventbrite.de", "eventim.de", "fcm.travel",
    "fcmtravel.com", "fjordline.com", "flixbus.com", "flixbus.de", "gnv.it", "hertz.com", "hertz.de", "hotels.com",
    "iberia.com", "goindigo.in", "irctc.co.in", "italotreno.it", "klm.com", "korail.com", "lufthansa.com",
    "mav-start.hu", "motel-one.com", "nationalexpress.com", "nationalrail.co.uk", "nh-hotels.com", "norwegian.com",
    "oebb.at", "ouigo.com", "pretix.eu", "regiojet.cz", "regiojet.com", "renfe.com", "ryanair.com", "flysas.com",
    "sncb.be", "sncf.com", "sncf-connect.com", "oui.sncf", "swiss.com", "thalys.com", "ticketmaster.com",
    "trainline.com", "thetrainline.com", "trainline.eu", "travelport.com", "trenitalia.com", "trenitalia.it",
    "viarail.ca", "vistara.com", "vr.fi", "vueling.com", "zssk.sk", "hotel-bb.com", "meetup.com", "sbb.ch",
    "airbnb.com", "expedia.com", "expedia.de", "opodo.com", "opodo.de", "edreams.com", "condor.com",
    "austrian.com", "tap.pt", "flytap.com", "united.com", "aa.com", "delta.com", "britishairways.com", "ba.com",
    "emirates.com", "qatarairways.com", "turkishairlines.com", "wizzair.com", "transavia.com", "finnair.com",
    "lot.com", "airbaltic.com", "easyairportparking.com",
})
# Subjects of booking mail in the languages plmail's users write, and the ones vendors send.
_BOOKING_WORDS = re.compile(
    r"\b(?:booking|reservation|itinerary|e-?tickets?|(?:your|ihr|ihre|dein|deine)\s+tickets?|boarding|check-?in|"
    r"flight|trip|travel|journey|"
    r"buchung\w*|reservierung\w*|reisebest\w*|fahrkarte\w*|bordkarte\w*|flug\w*|reise\w*|zugbindung|"
    r"r[ée]servation|billets?|voyage|reserva|billete|prenotazione|biglietto|bestelling|boeking)\b",
    re.IGNORECASE,
)
# The same words as stems, for a backfill's SQL scan: a superset of what the expression above matches.
BOOKING_SUBJECT_STEMS = (
    "booking", "reservation", "réservation", "itinerary", "ticket", "boarding", "check-in", "checkin", "flight",
    "trip", "travel", "journey", "buchung", "reservierung", "reisebest", "fahrkarte", "bordkarte", "flug", "reise",
    "zugbindung", "billet", "voyage", "reserva", "prenotazione", "biglietto", "bestelling", "boeking",
)
_PASS_TYPES = frozenset({"application/vnd.apple.pkpass"})
_PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})
_PASS_NAME = re.compile(r"\.pkpass$", re.IGNORECASE)
_PDF_NAME = re.compile(r"\.pdf$", re.IGNORECASE)
MAX_SUBJECT = 500


def booking_signals(sender: str | None, subject: str | None, attachments: Iterable[AttachmentFacts]) -> bool:
    """Cheap enough for every message: a sender KItinerary knows, a booking word in the subject, an Apple
    Wallet pass or a PDF (boarding passes and tickets carry barcodes KItinerary decodes whoever forwarded
    them). Only what passes here is parsed."""
    if registrable_domain(sender) in BOOKING_SENDERS:
        return True
    booking_subject = _BOOKING_WORDS.search((subject or "")[:MAX_SUBJECT]) is not None
    if booking_subject:
        return True
    for attachment in attachments:
        content_type = (attachment.content_type or "").lower()
        name = attachment.filename or ""
        if content_type in _PASS_TYPES or _PASS_NAME.search(name):
            return True
        if content_type in _PDF_TYPES or _PDF_NAME.search(name):
            return True
    return False


class KItineraryExtractor:
    """Name ``kitinerary``, priority 70 (below the structured-data extractor, so markup the sender wrote
    wins a key collision), confidence 90 like it; does not end the cascade. Without the binary it says
    so once (the admin page shows it) and supports nothing, so no message ever fails for its absence."""

    NAME: ClassVar[str] = KITINERARY_EXTRACTOR
    CONFIDENCE: ClassVar[int] = STRUCTURED_DATA_CONFIDENCE
    PRIORITY: ClassVar[int] = 70

    def __init__(self, engine: KItineraryEngine | None = None) -> None:
        self.engine = engine if engine is not None else KItineraryEngine.discover()

    @property
    def name(self) -> str:
        return self.NAME

    def priority(self) -> int:
        return self.PRIORITY

    def stops_cascade(self) -> bool:
        return False

    def status(self) -> EngineStatus:
        return self.engine.status()

    def supports(self, ctx: ExtractionContext) -> bool:
        return self.engine.available and booking_signals(ctx.sender, ctx.subject, ctx.attachments)

    async def extract(self, ctx: ExtractionContext) -> list[ExtractedEvent]:
        data = await ctx.raw_mime_loader() if ctx.raw_mime_loader is not None else None
        if data is None:
            data = _stand_in(ctx)
        if data is None or len(data) > MAX_INPUT_BYTES:
            log.info("message %s: nothing KItinerary could be given", ctx.message_id)
            return []
        items = await self.engine.extract(data, context_date=ctx.sent_at or ctx.received_at)
        claims, _ = schema_claims(items, sender=ctx.sender, extractor=self.NAME, confidence=self.CONFIDENCE)
        return list(claims)


def _stand_in(ctx: ExtractionContext) -> bytes | None:
    """Where the original is gone, a message from what was stored: its sender, subject and HTML body."""
    if not ctx.body_html:
        return None
    message = EmailMessage()
    if ctx.sender:
        message["From"] = ctx.sender
    if ctx.subject:
        message["Subject"] = ctx.subject.replace("\r", " ").replace("\n", " ")[:MAX_SUBJECT]
    message.set_content(ctx.body_html, subtype="html")
    return bytes(message)
