"""When it is allowed to guess: every noise rule, in one place, as a pure decision over facts."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import getaddresses
from enum import StrEnum

from plmail.calendar.proposals.detector import DeterministicDateDetector
from plmail.calendar.proposals.gate import DateShapeGate
from plmail.calendar.proposals.text import strip_quoted
from plmail.calendar.suppression import suppression_hash
from plmail.domain.calendar import DetectionRequest, ProposalCandidate
from plmail.domain.enums import Category, Locale
from plmail.domain.messages import RawHeaders
from plmail.domain.ports import ProposalDetector
from plmail.mail.public import has_header, header

HORIZON_DAYS = 365
# Bump with any change to dedup_key(): keys (and the user's suppressions, hashed from them) made the old
# way would stop matching, and a re-run would offer again what was declined.
DEDUP_KEY_VERSION = 1
BULK_HEADERS = (
    "list-id", "list-post", "list-unsubscribe", "x-mailman-version", "x-google-group-id", "feedback-id",
    "x-csa-complaints",
)  # fmt: skip
BULK_PRECEDENCE = frozenset({"bulk", "list", "junk"})
_SCHEMA_MARKUP = re.compile(r"application/ld\+json|itemtype\s*=\s*[\"']?https?://schema\.org/", re.IGNORECASE)


class Refusal(StrEnum):
    """Which rule said no; the members are in the order the rules run."""

    DRAFT = "draft"
    NO_OWNER = "no_owner"
    UNCATEGORISED = "uncategorised"
    NOT_GENERAL = "not_general"
    BULK_HEADER = "bulk_header"
    NOT_ADDRESSED = "not_addressed"
    CALENDAR_PART = "calendar_part"
    MEETING_HEADERS = "meeting_headers"
    SCHEMA_MARKUP = "schema_markup"
    EXTRACTION_APPLIED = "extraction_applied"
    NO_DATE_SHAPE = "no_date_shape"
    NOTHING_READ = "nothing_read"
    PAST = "past"
    BEYOND_HORIZON = "beyond_horizon"
    SUPPRESSED = "suppressed"
    ACCEPTED = "accepted"
    SAME_START = "same_start"


def _nothing_suppressed(_dedup_key_hash: str) -> bool:
    return False


def suppressed_among(hashes: Collection[str]) -> Callable[[str], bool]:
    """A suppression predicate over hashes the caller already holds."""
    return hashes.__contains__


def has_schema_markup(raw_html: str | None) -> bool:
    """A JSON-LD block or schema.org microdata in the unsanitised HTML: the structured-data extractor's input."""
    return bool(raw_html) and _SCHEMA_MARKUP.search(raw_html or "") is not None


@dataclass(frozen=True, slots=True)
class ProposalInput:
    """Facts about one message and its owner, as a repository or a backfill reads them."""

    message_key: str  # the Message-ID (else the provider's id): what a dedup key is about
    owner_user_id: int | None
    is_draft: bool
    category: Category | None  # None: not categorised yet
    message_date: datetime  # timezone-aware; the rules measure from it, never from now
    body_text: str
    subject: str = ""
    headers: RawHeaders = field(default_factory=dict)
    to_addresses: tuple[str, ...] = ()
    cc_addresses: tuple[str, ...] = ()
    account_addresses: frozenset[str] = frozenset()  # the account's own address and its aliases
    has_calendar_part: bool = False
    has_meeting_headers: bool = False  # Graph marks invitations with meetingMessageType instead of a part
    has_schema_markup: bool = False
    has_applied_extraction_link: bool = False  # a backfill after extraction: the event is already there
    time_zone: str = "UTC"  # the user's
    language: Locale = Locale.EN  # the user's
    message_id: int | None = None
    suppressed: Callable[[str], bool] = _nothing_suppressed  # asked with sha256(dedup_key)
    accepted: Callable[[str], bool] = _nothing_suppressed  # asked with sha256(dedup_key): already on the calendar

    def __post_init__(self) -> None:
        if self.message_date.utcoffset() is None:
            raise ValueError("message_date must be timezone-aware: a naive one would be read in the server's zone")

    def header(self, name: str) -> str | None:
        """A raw header by case-insensitive name."""
        return header(self.headers, name)


@dataclass(frozen=True, slots=True)
class Proposal:
    """What the proposal row will hold."""

    user_id: int
    message_id: int | None
    title: str
    start: datetime
    end: datetime
    all_day: bool
    time_zone: str
    confidence: int
    source_sentence: str
    dedup_key: str
    dedup_key_hash: str
    detector: str
    stated_end: datetime | None = None  # the end the sentence wrote (a range, a length); None: `end` is a default
    location: str | None = None  # the place the sentence named, as written ("Café Lotte", "bei Anna")


@dataclass(frozen=True, slots=True)
class CandidateVerdict:
    candidate: ProposalCandidate
    detector: str
    dedup_key: str
    dedup_key_hash: str
    refusal: Refusal | None


@dataclass(frozen=True, slots=True)
class ProposalDecision:
    refusal: Refusal | None  # set when the message as a whole may not be offered anything
    verdicts: tuple[CandidateVerdict, ...] = ()
    proposals: tuple[Proposal, ...] = ()

    def refusals(self) -> tuple[Refusal, ...]:
        """Every reason given, the message's first, then each candidate's."""
        message = (self.refusal,) if self.refusal is not None else ()
        return message + tuple(v.refusal for v in self.verdicts if v.refusal is not None)


def dedup_key(message_key: str, candidate: ProposalCandidate) -> str:
    """`prose:<message>|<start>`: a UTC instant for a timed proposal, the local day for an all-day one."""
    if candidate.all_day:
        when = candidate.start.date().isoformat()
    else:
        when = candidate.start.astimezone(UTC).strftime("%Y-%m-%dT%H:%MZ")
    return f"prose:{message_key.strip()}|{when}"


def hash_dedup_key(key: str) -> str:
    """The suppression table's own hash, not a copy of its formula: a decline must match what it suppresses."""
    return suppression_hash(key)


def _addresses(values: Sequence[str]) -> set[str]:
    return {address.lower() for _, address in getaddresses(list(values)) if address}


class EventProposer:
    """Decides whether guessing is allowed; detectors only read.

    The rules live here and nowhere else because a second detector (a model) will come, and it must not
    bring its own opinion of what counts as noise. Precision before recall throughout: a card offering to
    put "Angebot endet Freitag!" in a calendar is the moment a person decides the feature is stupid.
    Message rules run first (reading columns costs nothing), then the gate, whose "certainly not" ends the
    matter before any parsing, then the detectors, then the rules about each candidate's date.
    """

    def __init__(self, detectors: Sequence[ProposalDetector] | None = None, gate: DateShapeGate | None = None) -> None:
        self._detectors: tuple[ProposalDetector, ...] = tuple(detectors or (DeterministicDateDetector(),))
        self._gate = gate or DateShapeGate()

    def message_refusal(self, facts: ProposalInput) -> Refusal | None:
        """The rules about the message itself, in the seed's order."""
        if facts.is_draft:
            return Refusal.DRAFT  # nobody to propose to yet
        if facts.owner_user_id is None:
            return Refusal.NO_OWNER
        if facts.category is None:
            return Refusal.UNCATEGORISED  # "not sorted yet" is not "sorted as personal"
        if facts.category is not Category.GENERAL:
            return Refusal.NOT_GENERAL  # the categoriser already read the same headers at ingest
        if any(has_header(facts.headers, name) for name in BULK_HEADERS):
            # Correspondence pulls a shop the user once wrote to back into General; its newsletters name dates.
            return Refusal.BULK_HEADER
        if (facts.header("precedence") or "").strip().lower() in BULK_PRECEDENCE:
            return Refusal.BULK_HEADER
        own = {address.lower() for address in facts.account_addresses}
        if own.isdisjoint(_addresses(facts.to_addresses + facts.cc_addresses)):
            # A date announced to a list is an announcement; a date sent to you is an appointment.
            return Refusal.NOT_ADDRESSED
        # What an extractor can read means a real event is on its way (extraction runs asynchronously, so
        # waiting for it would be a race); the applied link covers a backfill after extraction ran.
        if facts.has_calendar_part:
            return Refusal.CALENDAR_PART
        if facts.has_meeting_headers:
            return Refusal.MEETING_HEADERS
        if facts.has_schema_markup:
            return Refusal.SCHEMA_MARKUP
        if facts.has_applied_extraction_link:
            return Refusal.EXTRACTION_APPLIED
        return None

    def candidate_refusal(self, facts: ProposalInput, candidate: ProposalCandidate, key_hash: str) -> Refusal | None:
        """The rules about one reading, measured from the message's own date so a backfill judges old mail
        as the live path did on the day it arrived. A year is generous on purpose: beyond it lie contract
        terms, warranties and renewals, correctly read dates nobody wants in a calendar."""
        sent = facts.message_date
        past = candidate.end <= sent if candidate.all_day else candidate.start < sent
        if past:
            return Refusal.PAST
        if candidate.start > sent + timedelta(days=HORIZON_DAYS):
            return Refusal.BEYOND_HORIZON
        if facts.suppressed(key_hash):
            return Refusal.SUPPRESSED  # the same table declined extracted events use: "no" means no
        if facts.accepted(key_hash):
            return Refusal.ACCEPTED  # accepting is a decision too: the event is there, offering it again is noise
        return None

    def decide(self, facts: ProposalInput) -> ProposalDecision:
        """What may be offered for this message, and which rule refused everything else."""
        refusal = self.message_refusal(facts)
        if refusal is not None:
            return ProposalDecision(refusal)
        own_text = strip_quoted(facts.body_text)
        if not self._gate.admits(own_text):
            return ProposalDecision(Refusal.NO_DATE_SHAPE)
        request = DetectionRequest(
            own_text, facts.subject, facts.message_date, facts.time_zone, facts.language, quotes_removed=True
        )
        detector, candidates = self._detect(request)
        if not candidates:
            return ProposalDecision(Refusal.NOTHING_READ)
        verdicts: list[CandidateVerdict] = []
        proposals: list[Proposal] = []
        starts: set[datetime] = set()
        owner = facts.owner_user_id
        assert owner is not None  # message_refusal() returned NO_OWNER otherwise
        for candidate in candidates:
            key = dedup_key(facts.message_key, candidate)
            key_hash = hash_dedup_key(key)
            verdict = self.candidate_refusal(facts, candidate, key_hash)
            if verdict is None and candidate.start in starts:
                verdict = Refusal.SAME_START  # one proposal per message and start, as the unique index says
            verdicts.append(CandidateVerdict(candidate, detector, key, key_hash, verdict))
            if verdict is None:
                starts.add(candidate.start)
                proposals.append(Proposal(
                    owner, facts.message_id, candidate.title, candidate.start, candidate.end, candidate.all_day,
                    candidate.time_zone, candidate.confidence, candidate.source_sentence, key, key_hash, detector,
                    candidate.stated_end, candidate.location,
                ))  # fmt: skip
        return ProposalDecision(None, tuple(verdicts), tuple(proposals))

    def _detect(self, request: DetectionRequest) -> tuple[str, Sequence[ProposalCandidate]]:
        """The first detector that reads anything wins; a later one is asked only about what earlier ones could not."""
        for detector in self._detectors:
            candidates = detector.detect(request)
            if candidates:
                return detector.name, candidates
        return "", ()
