"""EventProposer: every noise rule, each shown to refuse on its own, in the seed's order."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from plmail.calendar.proposals import (
    BULK_HEADERS,
    DEDUP_KEY_VERSION,
    HORIZON_DAYS,
    DetectionRequest,
    DeterministicDateDetector,
    EventProposer,
    ProposalCandidate,
    ProposalInput,
    Refusal,
    dedup_key,
    has_schema_markup,
    hash_dedup_key,
    suppressed_among,
)
from plmail.domain.enums import Category, Locale

BERLIN = ZoneInfo("Europe/Berlin")
SENT = datetime(2026, 8, 3, 9, 0, tzinfo=BERLIN)  # a Monday

BASELINE = ProposalInput(
    message_key="<abc@example.org>",
    message_id=42,
    owner_user_id=7,
    is_draft=False,
    category=Category.GENERAL,
    message_date=SENT,
    subject="Re: Projekt",
    body_text="Hallo! Können wir Freitag um 10 Uhr reden?",
    headers={"From": "Anna <anna@example.org>", "Precedence": "first-class"},
    to_addresses=("Me <me@example.org>",),
    account_addresses=frozenset({"me@example.org", "alias@example.net"}),
    time_zone="Europe/Berlin",
    language=Locale.DE,
)


def with_(**changes: Any) -> ProposalInput:
    return dataclasses.replace(BASELINE, **changes)


class ListedDetector:
    """An in-memory detector that returns what it was given and counts how often it was asked."""

    def __init__(self, name: str, candidates: Sequence[ProposalCandidate] = ()) -> None:
        self.name = name
        self.candidates = tuple(candidates)
        self.calls = 0

    def detect(self, request: DetectionRequest) -> tuple[ProposalCandidate, ...]:
        self.calls += 1
        return self.candidates


def candidate(start: datetime, *, all_day: bool = False) -> ProposalCandidate:
    return ProposalCandidate(start, start + timedelta(hours=1), all_day, "Europe/Berlin", 50, "s", "t")


def test_the_baseline_is_offered() -> None:
    decision = EventProposer().decide(BASELINE)
    assert decision.refusal is None
    (proposal,) = decision.proposals
    assert proposal.user_id == 7
    assert proposal.message_id == 42
    assert proposal.start == datetime(2026, 8, 7, 10, 0, tzinfo=BERLIN)
    assert proposal.end == datetime(2026, 8, 7, 11, 0, tzinfo=BERLIN)
    assert proposal.title == "Projekt"
    assert proposal.source_sentence == "Können wir Freitag um 10 Uhr reden?"
    assert proposal.detector == "deterministic"
    assert proposal.dedup_key == "prose:<abc@example.org>|2026-08-07T08:00Z"
    assert proposal.dedup_key_hash == hashlib.sha256(proposal.dedup_key.encode()).hexdigest()
    assert decision.refusals() == ()


MESSAGE_RULES: list[tuple[str, dict[str, Any], Refusal]] = [
    ("draft", {"is_draft": True}, Refusal.DRAFT),
    ("ownerless", {"owner_user_id": None}, Refusal.NO_OWNER),
    ("uncategorised", {"category": None}, Refusal.UNCATEGORISED),
    *[(f"category {c.value}", {"category": c}, Refusal.NOT_GENERAL) for c in Category if c is not Category.GENERAL],
    *[(f"header {h}", {"headers": {h.title(): "x"}}, Refusal.BULK_HEADER) for h in BULK_HEADERS],
    *[(f"precedence {p}", {"headers": {"PRECEDENCE": p}}, Refusal.BULK_HEADER) for p in ("bulk", " List ", "junk")],
    ("only a list in To", {"to_addresses": ("list@lists.example.org",)}, Refusal.NOT_ADDRESSED),
    ("nobody in To or Cc", {"to_addresses": ()}, Refusal.NOT_ADDRESSED),
    ("calendar part", {"has_calendar_part": True}, Refusal.CALENDAR_PART),
    ("meeting headers", {"has_meeting_headers": True}, Refusal.MEETING_HEADERS),
    ("schema.org markup", {"has_schema_markup": True}, Refusal.SCHEMA_MARKUP),
    ("applied extraction", {"has_applied_extraction_link": True}, Refusal.EXTRACTION_APPLIED),
]


@pytest.mark.parametrize(("change", "refusal"), [(c, r) for _, c, r in MESSAGE_RULES],
                         ids=[name for name, _, _ in MESSAGE_RULES])  # fmt: skip
def test_each_message_rule_refuses_on_its_own(change: dict[str, Any], refusal: Refusal) -> None:
    """The baseline is offered; changing this one fact is what refuses it."""
    decision = EventProposer().decide(with_(**change))
    assert decision.refusal is refusal
    assert decision.proposals == ()


def test_rules_run_in_the_seed_order() -> None:
    everything_wrong = with_(
        is_draft=True, owner_user_id=None, category=None, headers={"List-Id": "x"}, to_addresses=(),
        has_calendar_part=True, has_meeting_headers=True, has_schema_markup=True, has_applied_extraction_link=True,
    )  # fmt: skip
    fixes: list[tuple[Refusal, dict[str, Any]]] = [
        (Refusal.DRAFT, {"is_draft": False}),
        (Refusal.NO_OWNER, {"owner_user_id": 7}),
        (Refusal.UNCATEGORISED, {"category": Category.PROMOTIONS}),
        (Refusal.NOT_GENERAL, {"category": Category.GENERAL}),
        (Refusal.BULK_HEADER, {"headers": {}}),
        (Refusal.NOT_ADDRESSED, {"to_addresses": ("me@example.org",)}),
        (Refusal.CALENDAR_PART, {"has_calendar_part": False}),
        (Refusal.MEETING_HEADERS, {"has_meeting_headers": False}),
        (Refusal.SCHEMA_MARKUP, {"has_schema_markup": False}),
        (Refusal.EXTRACTION_APPLIED, {"has_applied_extraction_link": False}),
    ]
    facts = everything_wrong
    proposer = EventProposer()
    for expected, fix in fixes:
        assert proposer.decide(facts).refusal is expected
        facts = dataclasses.replace(facts, **fix)
    assert proposer.decide(facts).proposals


@pytest.mark.parametrize(
    ("to", "cc"),
    [
        (("ME@Example.ORG",), ()),
        (("list@lists.example.org",), ("Alias <Alias@example.net>",)),
        (("list@lists.example.org, \"Me, myself\" <me@example.org>",), ()),
    ],
)
def test_addressed_means_one_of_the_account_addresses_or_aliases_in_to_or_cc(
    to: tuple[str, ...], cc: tuple[str, ...]
) -> None:
    assert EventProposer().decide(with_(to_addresses=to, cc_addresses=cc)).proposals


def test_precedence_other_than_bulk_is_no_reason() -> None:
    assert EventProposer().decide(with_(headers={"Precedence": "first-class"})).proposals
    assert with_(headers={"X-MAILMAN-VERSION": "2.1"}).header("x-mailman-version") == "2.1"


def test_the_gate_short_circuits_before_any_detector() -> None:
    detector = ListedDetector("recording", [candidate(datetime(2026, 8, 7, 10, tzinfo=BERLIN))])
    proposer = EventProposer([detector])
    assert proposer.decide(with_(body_text="Danke, das passt so.")).refusal is Refusal.NO_DATE_SHAPE
    assert detector.calls == 0
    quoted_only = "Danke!\n\nAm 03.08.2026 um 08:00 schrieb Anna <anna@example.org>:\n> Freitag um 10 Uhr?"
    assert proposer.decide(with_(body_text=quoted_only)).refusal is Refusal.NO_DATE_SHAPE
    assert detector.calls == 0
    assert proposer.decide(BASELINE).proposals
    assert detector.calls == 1


def test_nothing_read_is_its_own_answer() -> None:
    assert EventProposer().decide(with_(body_text="Angebot endet Freitag!")).refusal is Refusal.NOTHING_READ


def test_a_later_detector_is_asked_only_about_what_earlier_ones_could_not_read() -> None:
    later = ListedDetector("model", [candidate(datetime(2026, 8, 20, 10, tzinfo=BERLIN))])
    proposer = EventProposer([DeterministicDateDetector(), later])
    assert proposer.decide(BASELINE).proposals[0].detector == "deterministic"
    assert later.calls == 0
    decision = proposer.decide(with_(body_text="Wie wäre es Freitag um 6?"))
    assert later.calls == 1
    assert decision.proposals[0].detector == "model"


def test_past_is_measured_from_the_message() -> None:
    proposer = EventProposer()
    assert proposer.decide(with_(body_text="Heute um 8 Uhr?")).refusals() == (Refusal.PAST,)
    assert proposer.decide(with_(body_text="Heute um 10 Uhr?")).proposals
    assert proposer.decide(with_(body_text="Wir haben am 2. Mai 2024 um 10 Uhr telefoniert.")).refusals() == (
        Refusal.PAST,
    )
    today = datetime(2026, 8, 3, tzinfo=BERLIN)
    all_day_today = dataclasses.replace(candidate(today, all_day=True), end=today + timedelta(days=1))
    assert EventProposer([ListedDetector("d", [all_day_today])]).decide(BASELINE).proposals  # the day is not over
    yesterday = dataclasses.replace(all_day_today, start=today - timedelta(days=1), end=today)
    assert EventProposer([ListedDetector("d", [yesterday])]).decide(BASELINE).refusals() == (Refusal.PAST,)


def test_horizon_is_365_days_from_the_message() -> None:
    assert HORIZON_DAYS == 365
    proposer = EventProposer()
    assert proposer.decide(with_(body_text="Am 3.8.2027 um 9 Uhr?")).proposals  # exactly 365 days on
    assert proposer.decide(with_(body_text="Am 3.8.2027 um 10 Uhr?")).refusals() == (Refusal.BEYOND_HORIZON,)


def test_old_mail_gets_the_answer_it_got_on_its_day_never_one_from_now() -> None:
    old = with_(message_date=datetime(2019, 3, 4, 10, 0, tzinfo=BERLIN), body_text="Morgen um 14 Uhr?")
    first, again = EventProposer().decide(old), EventProposer().decide(old)
    assert first == again
    (proposal,) = first.proposals
    assert proposal.start == datetime(2019, 3, 5, 14, 0, tzinfo=BERLIN)


def test_suppressed_by_the_hash_of_the_dedup_key() -> None:
    key = dedup_key(BASELINE.message_key, EventProposer().decide(BASELINE).verdicts[0].candidate)
    seen: list[str] = []

    def suppressed(key_hash: str) -> bool:
        seen.append(key_hash)
        return key_hash == hash_dedup_key(key)

    assert EventProposer().decide(with_(suppressed=suppressed)).refusals() == (Refusal.SUPPRESSED,)
    assert seen == [hashlib.sha256(key.encode()).hexdigest()]
    two = with_(body_text="Freitag um 10 Uhr? Oder lieber Samstag um 11 Uhr.",
                suppressed=suppressed_among({hash_dedup_key(key)}))  # fmt: skip
    decision = EventProposer().decide(two)
    assert [p.start.day for p in decision.proposals] == [8]
    assert Refusal.SUPPRESSED in decision.refusals()


def test_one_proposal_per_message_and_start() -> None:
    start = datetime(2026, 8, 7, 10, tzinfo=BERLIN)
    twice = ListedDetector("twice", [candidate(start), dataclasses.replace(candidate(start), title="other")])
    decision = EventProposer([twice]).decide(BASELINE)
    assert len(decision.proposals) == 1
    assert decision.refusals() == (Refusal.SAME_START,)


def test_dedup_keys() -> None:
    assert DEDUP_KEY_VERSION == 1
    timed = candidate(datetime(2026, 8, 7, 10, 30, tzinfo=BERLIN))
    assert dedup_key(" <a@b> ", timed) == "prose:<a@b>|2026-08-07T08:30Z"
    day = candidate(datetime(2026, 8, 7, tzinfo=BERLIN), all_day=True)
    assert dedup_key("<a@b>", day) == "prose:<a@b>|2026-08-07"
    assert len(hash_dedup_key("x")) == 64


@pytest.fixture
def server_in_new_york() -> Iterator[None]:
    """The process's own time zone is not UTC, as on a server set up in its owner's zone."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "America/New_York"
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = before
        time.tzset()


@pytest.mark.usefixtures("server_in_new_york")
def test_a_dedup_key_names_the_utc_instant_whatever_the_servers_zone() -> None:
    """A key is about the instant: the same mail gives the same key on every server, so suppressions hold."""
    timed = candidate(datetime(2026, 8, 7, 10, 30, tzinfo=BERLIN))
    assert dedup_key("<a@b>", timed) == "prose:<a@b>|2026-08-07T08:30Z"


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ('<script type="application/ld+json">{"@type": "FlightReservation"}</script>', True),
        ('<div itemscope itemtype="http://schema.org/EventReservation">', True),
        ("<div itemscope itemtype='https://schema.org/Order'>", True),
        ("<p>We like https://schema.org a lot</p>", False),
        ("", False),
        (None, False),
    ],
)
def test_schema_markup_check(html: str | None, expected: bool) -> None:
    assert has_schema_markup(html) is expected


class RecordingDetector(ListedDetector):
    def __init__(self, name: str, candidates: Sequence[ProposalCandidate] = ()) -> None:
        super().__init__(name, candidates)
        self.requests: list[DetectionRequest] = []

    def detect(self, request: DetectionRequest) -> tuple[ProposalCandidate, ...]:
        self.requests.append(request)
        return super().detect(request)


def test_a_proposal_carries_everything_the_reading_said() -> None:
    start = SENT + timedelta(days=2)
    read = ProposalCandidate(start, start + timedelta(hours=2), False, "Europe/Lisbon", 73, "We meet Wednesday.",
                             "Meeting", stated_end=start + timedelta(hours=2), location="Café Lotte")
    detector = RecordingDetector("recorder", [read])
    decision = EventProposer([detector]).decide(with_(message_id=99))
    (proposal,) = decision.proposals
    key = dedup_key(BASELINE.message_key, read)
    assert (proposal.all_day, proposal.time_zone, proposal.confidence, proposal.stated_end, proposal.location,
            proposal.detector, proposal.message_id) == (False, "Europe/Lisbon", 73, read.stated_end, "Café Lotte",
                                                        "recorder", 99)
    (verdict,) = decision.verdicts
    assert (verdict.detector, verdict.dedup_key, verdict.dedup_key_hash, verdict.refusal) == (
        "recorder", key, hash_dedup_key(key), None)
    (request,) = detector.requests
    assert (request.language, request.quotes_removed, request.time_zone, request.message_date) == (
        Locale.DE, True, "Europe/Berlin", SENT)


def test_an_all_day_reading_is_past_when_it_ends_at_the_message_and_a_timed_one_when_it_starts_before() -> None:
    def verdict(read: ProposalCandidate) -> Refusal | None:
        return EventProposer([ListedDetector("d", [read])]).decide(BASELINE).verdicts[0].refusal

    day = ProposalCandidate(SENT - timedelta(days=1), SENT, True, "Europe/Berlin", 50, "s", "t")
    assert verdict(day) is Refusal.PAST
    assert verdict(dataclasses.replace(day, end=SENT + timedelta(seconds=1))) is None
    assert verdict(candidate(SENT)) is None  # starting as the message is sent is not in the past
    assert verdict(candidate(SENT - timedelta(microseconds=1))) is Refusal.PAST


def test_accepted_is_asked_with_the_hash_of_the_dedup_key() -> None:
    read = candidate(SENT + timedelta(days=1))
    wanted = hash_dedup_key(dedup_key(BASELINE.message_key, read))
    decision = EventProposer([ListedDetector("d", [read])]).decide(with_(accepted=lambda h: h == wanted))
    assert decision.verdicts[0].refusal is Refusal.ACCEPTED and decision.proposals == ()
    assert decision.refusals() == (Refusal.ACCEPTED,)
    assert EventProposer().decide(with_(is_draft=True)).refusals() == (Refusal.DRAFT,)


def test_a_naive_message_date_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^message_date must be timezone-aware: a naive one would be read in"):
        with_(message_date=SENT.replace(tzinfo=None))
