"""Events from the schema.org markup booking confirmations carry (JSON-LD, microdata and RDFa).

The sender already parsed its own booking into structured fields; reading them is arithmetic,
not inference. Confidence is 90, not 100: the fields are exact, their meaning not always (an
itinerary is several objects sharing one booking number, a delivery estimate is a promise).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from plmail.calendar.extraction.claims import nominal_end
from plmail.calendar.extraction.domains import registrable_domain
from plmail.calendar.extraction.markup import read_markup
from plmail.calendar.extraction.schema_org import MAPPERS, Draft, drafts
from plmail.calendar.extraction.schema_values import Node, types_of
from plmail.calendar.jscalendar import JsonObject, JsonValue
from plmail.domain.calendar import ExtractedEvent, ExtractionContext

log = logging.getLogger(__name__)

STRUCTURED_DATA_EXTRACTOR = "structured_data"
STRUCTURED_DATA_CONFIDENCE = 90
# A message claiming more is an attack or a broken template, not an itinerary.
MAX_EVENTS = 25
MAX_CANDIDATES = 1_000
MAX_VISITS = 5_000
MAX_DEPTH = 6
OFFLOAD_CHARS = 512_000
_HINT = re.compile(r"ld\+json|itemscope|typeof\s*=", re.IGNORECASE)
_PAYLOAD_DEPTH = 12
_PAYLOAD_NODES = 4_000
_PAYLOAD_STRING = 4_000


@dataclass(frozen=True, slots=True)
class StructuredResult:
    events: tuple[ExtractedEvent, ...]
    errors: tuple[str, ...]
    examined: int


def structured_dedup_key(issuer: str, schema_type: str, identity: str) -> str:
    """``jsonld:`` + sha256(issuer NUL type NUL identity): NUL cannot occur inside any of the three,
    so ("AB", "1234") and ("AB1", "234") stay different bookings; the issuer is in the key because
    a six-character booking number is unique only within the company that issued it."""
    material = "\x00".join((issuer, schema_type, identity)).encode("utf-8", "surrogatepass")
    return f"jsonld:{hashlib.sha256(material).hexdigest()}"


def structured_events(html: str, *, sender: str | None) -> StructuredResult:
    """Every event the markup of one HTML body states, capped at MAX_EVENTS; never raises on bad markup."""
    markup = read_markup(html)
    # JSON-LD first: when a template carries the same booking in several syntaxes, its JSON-LD is the richer one.
    events, examined = schema_claims(
        [*markup.json_ld, *markup.microdata, *markup.rdfa], sender=sender,
        extractor=STRUCTURED_DATA_EXTRACTOR, confidence=STRUCTURED_DATA_CONFIDENCE,
    )
    return StructuredResult(events, markup.errors, examined)


def schema_claims(
    items: Sequence[object], *, sender: str | None, extractor: str, confidence: int
) -> tuple[tuple[ExtractedEvent, ...], int]:
    """The claims schema.org items make, keyed to the sender's registrable domain, capped at MAX_EVENTS;
    and how many items were looked at. Every reader of schema.org data (markup, KItinerary) comes here,
    so one booking gets one key whoever read it."""
    issuer = registrable_domain(sender)
    claims: dict[str, ExtractedEvent] = {}
    examined = 0
    for node, schema_type in _candidates(items):
        examined += 1
        if examined > MAX_CANDIDATES:
            break
        for draft in drafts(node, schema_type):
            claim = _claim(draft, issuer, node, extractor, confidence)
            claims.setdefault(claim.dedup_key, claim)
            if len(claims) >= MAX_EVENTS:
                return tuple(claims.values()), examined
    return tuple(claims.values()), examined


class StructuredDataEventExtractor:
    """Name ``structured_data``, priority 80, confidence 90; does not end the cascade, because a
    message routinely carries several independent things, and a parser written later for one
    airline may know something this one does not."""

    NAME: ClassVar[str] = STRUCTURED_DATA_EXTRACTOR
    CONFIDENCE: ClassVar[int] = STRUCTURED_DATA_CONFIDENCE
    PRIORITY: ClassVar[int] = 80

    @property
    def name(self) -> str:
        return self.NAME

    def priority(self) -> int:
        return self.PRIORITY

    def stops_cascade(self) -> bool:
        return False

    def supports(self, ctx: ExtractionContext) -> bool:
        return bool(ctx.body_html) and _HINT.search(ctx.body_html or "") is not None

    async def extract(self, ctx: ExtractionContext) -> list[ExtractedEvent]:
        html = ctx.body_html or ""
        if len(html) > OFFLOAD_CHARS:
            result = await asyncio.to_thread(structured_events, html, sender=ctx.sender)
        else:
            result = structured_events(html, sender=ctx.sender)
        for error in result.errors:
            log.debug("message %s: %s", ctx.message_id, error)
        return list(result.events)


def _candidates(items: Sequence[object]) -> Iterator[tuple[Node, str]]:
    """Objects of a type we map, from top-level items, arrays and ``@graph`` lists (bounded walk)."""
    stack: list[tuple[object, int]] = [(item, 0) for item in reversed(items[:MAX_CANDIDATES])]
    visits = 0
    while stack and visits < MAX_VISITS:
        item, depth = stack.pop()
        visits += 1
        if isinstance(item, list):
            if depth < MAX_DEPTH:
                stack.extend((entry, depth + 1) for entry in reversed(item[:MAX_CANDIDATES]))
        elif isinstance(item, Mapping):
            graph = item.get("@graph")
            if isinstance(graph, list | Mapping) and depth < MAX_DEPTH:
                stack.append((graph, depth + 1))
            schema_type = next((name for name in types_of(item) if name in MAPPERS), None)
            if schema_type is not None:
                yield item, schema_type


def _claim(draft: Draft, issuer: str, node: Node, extractor: str, confidence: int) -> ExtractedEvent:
    key = structured_dedup_key(issuer, draft.schema_type, draft.identity)
    return ExtractedEvent(
        uid=key,
        dedup_key=key,
        extractor=extractor,
        confidence=confidence,
        kind=draft.kind,
        status=draft.status,
        start=draft.start,
        end=nominal_end(draft.start, draft.end),
        all_day=not isinstance(draft.start, datetime),
        title=draft.title,
        description=draft.description,
        location=draft.location,
        # An offset is not a zone: -05:00 is Chicago in summer and Bogotá all year. The instant is
        # exact either way, so it is kept in UTC and rendered in the user's zone, unless the data
        # named the zone beside the time (KItinerary does), which is then kept.
        time_zone=draft.time_zone if isinstance(draft.start, datetime) else None,
        # These sources carry no revision; inventing one would make an arbitrary order look
        # authoritative. At 0 the reconciler falls back to when the mail arrived.
        sequence=0,
        source_payload=_payload(node),
    )


def _payload(node: Node) -> JsonObject:
    copied = _bounded(node)
    return copied if isinstance(copied, dict) else {}


def _bounded(value: object) -> JsonValue:
    """A JSON-safe copy of what was read: verbatim up to depth, count and length caps."""
    budget = [_PAYLOAD_NODES]

    def copy(item: object, depth: int) -> JsonValue:
        budget[0] -= 1
        if budget[0] < 0 or depth > _PAYLOAD_DEPTH:
            return None
        if isinstance(item, Mapping):
            return {str(key)[:200]: copy(entry, depth + 1) for key, entry in list(item.items())[:200]}
        if isinstance(item, list | tuple):
            return [copy(entry, depth + 1) for entry in item[:100]]
        if isinstance(item, str):
            return item[:_PAYLOAD_STRING].encode("utf-8", "replace").decode("utf-8").replace("\x00", "")
        if isinstance(item, bool) or item is None:
            return item
        if isinstance(item, int):
            return item if abs(item) < 2**53 else str(item)
        if isinstance(item, float):
            return item if math.isfinite(item) else None
        return None

    return copy(value, 0)
