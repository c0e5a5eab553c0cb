"""The calendar's vocabulary: what an extractor reads and claims, what the proposal detector reads and
offers, and events and proposals as the calendar services store them and the pages show them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum
from typing import Any, TypeAlias, Union

from plmail.domain.enums import Locale

JsonValue: TypeAlias = Union[str, int, float, bool, list["JsonValue"], dict[str, "JsonValue"], None]  # noqa: UP007
JsonObject: TypeAlias = dict[str, JsonValue]
RawMimeLoader = Callable[[], Awaitable[bytes | None]]
# The "extractor" of the link an accepted proposal leaves on its event: evidence of where the event came
# from, never a claim an extractor made (nothing replays it, and it does not count as extraction).
ACCEPTED_PROPOSAL_EVIDENCE = "accepted_proposal"


@dataclass(frozen=True, slots=True)
class EventValues:
    """Every column a write sets; the writer builds these, the repository only stores them."""

    calendar_id: int
    user_id: int
    uid: str
    sequence: int
    starts_at: datetime
    ends_at: datetime
    time_zone: str | None
    is_all_day: bool
    is_floating: bool
    title: str | None
    location: str | None
    description: str | None
    status: str
    kind: str | None
    source: str
    confidence: int
    recurrence: dict[str, Any]
    raw_rrule: str | None
    dedup_key_version: int
    my_participation: str | None
    organizer: dict[str, Any] | None
    attendees: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class StoredEvent:
    id: int
    values: EventValues
    is_user_edited: bool
    created_at: datetime
    updated_at: datetime

    @property
    def calendar_id(self) -> int:
        return self.values.calendar_id

    @property
    def user_id(self) -> int:
        return self.values.user_id

    @property
    def uid(self) -> str:
        return self.values.uid

    @property
    def sequence(self) -> int:
        return self.values.sequence


@dataclass(frozen=True, slots=True)
class StoredProposal:
    id: int
    user_id: int
    message_id: int
    account_id: int
    thread_id: int | None
    title: str
    starts_at: datetime
    ends_at: datetime
    is_all_day: bool
    time_zone: str
    confidence: int
    source_sentence: str
    dedup_key_hash: str
    detector: str
    created_at: datetime
    location: str | None = None  # the place the sentence named
    stated_end: datetime | None = None  # the end the sentence wrote; None: ends_at is the default length


class EventStatus(StrEnum):
    CONFIRMED = "confirmed"
    TENTATIVE = "tentative"
    CANCELLED = "cancelled"



class EventKind(StrEnum):
    MEETING = "meeting"
    EVENT = "event"
    DELIVERY = "delivery"
    FLIGHT = "flight"
    TRAIN = "train"
    BUS = "bus"
    LODGING = "lodging"
    DINING = "dining"
    RENTAL = "rental"
    TICKET = "ticket"
    ORDER = "order"



class ItipMethod(StrEnum):
    """The iTIP method of the calendar object a claim came from (RFC 5546)."""

    PUBLISH = "PUBLISH"
    REQUEST = "REQUEST"
    CANCEL = "CANCEL"
    # An attendee's answer to the organiser: it carries participation only and never creates or moves an event.
    REPLY = "REPLY"



@dataclass(frozen=True, slots=True)
class Participant:
    email: str | None
    name: str | None
    partstat: str | None = None  # lower-case iCalendar PARTSTAT: needs-action, accepted, declined, tentative …
    role: str | None = None  # lower-case iCalendar ROLE: chair, req-participant, opt-participant …



@dataclass(frozen=True, slots=True)
class ExtractedEvent:
    """One extractor's claim about one event in one message.

    Times: ``start``/``end`` are aware UTC datetimes, or dates for all-day events (``end``
    exclusive), or naive datetimes for floating times that named neither zone nor offset — those
    are anchored in the user's zone by whoever writes them (see :func:`anchored`). ``start`` is
    None only for a cancellation or a reply that did not repeat the time. ``time_zone`` is the
    IANA zone the sender named, never one derived from an offset.

    ``recurrence_rules`` and ``recurrence_overrides`` are JSCalendar ``recurrenceRules`` and
    ``recurrenceOverrides`` (keys are LocalDateTimes in ``time_zone``, else UTC, else floating);
    ``raw_rrule`` keeps a rule the converter refused, and then the event appears once.
    ``instance_only`` marks a message that carried only changed instances of a series it did not
    include: the reconciler applies the overrides to the series it has, and never lets the
    instance's own status speak for the whole series.
    """

    uid: str
    dedup_key: str
    extractor: str
    confidence: int
    kind: EventKind
    status: EventStatus
    start: datetime | date | None
    end: datetime | date | None
    all_day: bool
    title: str | None = None
    description: str | None = None
    location: str | None = None
    time_zone: str | None = None
    sequence: int = 0
    method: ItipMethod | None = None
    recurrence_rules: tuple[JsonObject, ...] = ()
    recurrence_overrides: Mapping[str, JsonObject] = field(default_factory=dict)
    excluded_dates: tuple[datetime | date, ...] = ()
    raw_rrule: str | None = None
    instance_only: bool = False
    organizer: Participant | None = None
    attendees: tuple[Participant, ...] = ()
    source_payload: JsonObject = field(default_factory=dict)
    part_id: int | None = None

    @property
    def is_floating(self) -> bool:
        return isinstance(self.start, datetime) and self.start.tzinfo is None

    @property
    def is_recurring(self) -> bool:
        return bool(self.recurrence_rules)


@dataclass(frozen=True, slots=True)
class CalendarPart:
    content_type: str
    data: bytes
    part_id: int | None = None
    charset: str | None = None



@dataclass(frozen=True, slots=True)
class AttachmentFacts:
    """What an extractor may know of an attachment without reading it: its type and name."""

    content_type: str | None
    filename: str | None


@dataclass(frozen=True, slots=True)
class ExtractionContext:
    """The message facts extractors read.

    ``body_html`` is the raw HTML, never the sanitised copy: the JSON-LD block is a ``<script>``
    element, which sanitising rightly removes. ``raw_mime_loader`` is lazy because for Graph it is
    an API call and most messages are not invitations; only an extractor that needs the bytes
    calls it.
    """

    message_id: int | None = None
    account_id: int | None = None
    received_at: datetime | None = None
    sent_at: datetime | None = None
    subject: str | None = None
    sender: str | None = None
    headers: Mapping[str, str | list[str]] = field(default_factory=dict)
    calendar_parts: tuple[CalendarPart, ...] = ()
    body_html: str | None = None
    raw_mime_loader: RawMimeLoader | None = None
    attachments: tuple[AttachmentFacts, ...] = ()  # every non-calendar part, for a supports() that looks at types
    _lowered: dict[str, tuple[str, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        lowered: dict[str, tuple[str, ...]] = {}
        for name, value in self.headers.items():
            values = (value,) if isinstance(value, str) else tuple(item for item in value if isinstance(item, str))
            key = str(name).strip().lower()
            lowered[key] = lowered.get(key, ()) + values
        object.__setattr__(self, "_lowered", lowered)
        if self.sender is not None:
            object.__setattr__(self, "sender", self.sender.strip().lower() or None)

    def header(self, name: str) -> str | None:
        """The first value of a header, whatever case it was stored in."""
        values = self._lowered.get(name.lower())
        return values[0] if values else None

    def header_values(self, name: str) -> tuple[str, ...]:
        return self._lowered.get(name.lower(), ())

    def header_names(self) -> frozenset[str]:
        """Every header name present, lower-cased."""
        return frozenset(self._lowered)


@dataclass(frozen=True, slots=True)
class DetectionRequest:
    """What a detector reads. Dates are relative to `message_date` in `time_zone`, never to now."""

    text: str
    subject: str
    message_date: datetime  # timezone-aware, ideally with the Date header's own offset (the writer's)
    time_zone: str  # the user's IANA zone
    language: Locale  # the user's language; it orders 4/8 as D/M (de) or M/D (en)
    quotes_removed: bool = False  # the caller already applied strip_quoted() (the proposer does, for its gate)

    def __post_init__(self) -> None:
        if self.message_date.utcoffset() is None:
            raise ValueError("message_date must be timezone-aware: a naive one would be read in the server's zone")



@dataclass(frozen=True, slots=True)
class ProposalCandidate:
    """A reading of one sentence. All-day candidates run from local midnight to the next."""

    start: datetime
    end: datetime
    all_day: bool
    time_zone: str
    confidence: int  # 0–100, as the extractors count it
    source_sentence: str
    title: str
    stated_end: datetime | None = None  # the end the sentence writes (a range, a length); None: `end` is a default
    location: str | None = None  # the place the sentence names ("Café Lotte", "Besprechungsraum 3", "bei Anna")

