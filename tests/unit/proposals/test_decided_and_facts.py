"""What the user already decided, the one dedup hash, and the facts read from a stored row."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta, timezone

from plmail.calendar.proposals import EventProposer, ProposalInput, Refusal, hash_dedup_key, suppressed_among
from plmail.calendar.proposals.facts import message_date, stored_input, user_language, user_zone_name
from plmail.calendar.repos.proposals import ProposalSource
from plmail.calendar.suppression import suppression_hash
from plmail.domain.enums import Category, Locale

SENT = datetime(2026, 8, 3, 9, 0, tzinfo=UTC)

FACTS = ProposalInput(
    message_key="<abc@example.org>", owner_user_id=7, is_draft=False, category=Category.GENERAL, message_date=SENT,
    subject="Projekt", body_text="Können wir Freitag um 10 Uhr reden?", to_addresses=("me@example.org",),
    account_addresses=frozenset({"me@example.org"}), time_zone="Europe/Berlin", language=Locale.DE,
)

SOURCE = ProposalSource(
    id=5, account_id=2, user_id=7, rfc_message_id="abc@example.org", provider_id=None, is_draft=False,
    category="primary", held=False, sent_at=datetime(2026, 8, 3, 22, 30, tzinfo=UTC), received_at=None,
    created_at=datetime(2026, 8, 4, tzinfo=UTC), subject="Projekt", body_text="Können wir morgen um 10 Uhr reden?",
    body_html=None, headers={"Date": "Mon, 03 Aug 2026 15:30:00 -0700", "To": "me@example.org"},
    to_addresses=("me@example.org",), cc_addresses=(), account_addresses=frozenset({"me@example.org"}),
    has_calendar_part=False, has_applied_link=False, user_zone="Europe/Berlin", user_locale="de",
)


def test_suppressions_and_proposals_hash_keys_with_one_function() -> None:
    assert hash_dedup_key("prose:x|2026-08-07") == suppression_hash("prose:x|2026-08-07")
    assert hash_dedup_key.__module__ == "plmail.calendar.proposals.proposer"  # a wrapper, not a copy of the formula
    assert len(hash_dedup_key("x")) == 64


def test_an_accepted_proposal_is_not_offered_again_and_the_rule_is_its_own() -> None:
    (offered,) = EventProposer().decide(FACTS).proposals
    accepted = dataclasses.replace(FACTS, accepted=suppressed_among({offered.dedup_key_hash}))
    decision = EventProposer().decide(accepted)
    assert decision.proposals == () and decision.refusals() == (Refusal.ACCEPTED,)
    both = dataclasses.replace(accepted, suppressed=suppressed_among({offered.dedup_key_hash}))
    assert EventProposer().decide(both).refusals() == (Refusal.SUPPRESSED,)  # declined is asked first


def test_the_message_date_keeps_the_writers_offset_and_never_reads_the_clock() -> None:
    # 15:30 in California is 22:30 UTC: the same instant as stored, with the writer's day kept.
    written = message_date(SOURCE.headers, SOURCE.sent_at, None, SOURCE.created_at)
    assert written == SOURCE.sent_at and written.utcoffset() == timedelta(hours=-7)
    # A Date header that disagrees with the stored instant is not believed; the stored instants are.
    assert message_date({"Date": "Mon, 03 Aug 2026 10:00:00 +0200"}, SOURCE.sent_at, None, SOURCE.created_at) == \
        SOURCE.sent_at
    assert message_date({}, None, None, SOURCE.created_at) == SOURCE.created_at
    received = datetime(2026, 8, 4, 1, tzinfo=UTC)
    assert message_date({"Date": "garbage"}, None, received, SOURCE.created_at) == received
    # The writer's Monday evening is Tuesday in Berlin: "morgen" is ambiguous, and only the kept offset shows
    # it. The bare UTC instant would have read it as Wednesday.
    assert EventProposer().decide(stored_input(SOURCE)).refusal is Refusal.NOTHING_READ
    bare = dataclasses.replace(SOURCE, headers={"To": "me@example.org"})
    (wrong,) = EventProposer().decide(stored_input(bare)).proposals
    assert wrong.start.date().isoformat() == "2026-08-05"
    # Earlier that Monday both agree on the day, and "morgen" is the writer's Tuesday.
    earlier = dataclasses.replace(SOURCE, sent_at=datetime(2026, 8, 3, 18, 30, tzinfo=UTC),
                                  headers={"Date": "Mon, 03 Aug 2026 11:30:00 -0700"})
    (proposal,) = EventProposer().decide(stored_input(earlier)).proposals
    assert proposal.start == datetime(2026, 8, 4, 10, tzinfo=timezone(timedelta(hours=2)))


def test_a_held_or_unknown_category_counts_as_not_sorted_and_bad_settings_fall_back() -> None:
    assert stored_input(SOURCE).category is Category.GENERAL
    assert stored_input(dataclasses.replace(SOURCE, held=True)).category is None
    assert stored_input(dataclasses.replace(SOURCE, category="nonsense")).category is None
    assert EventProposer().decide(stored_input(dataclasses.replace(SOURCE, held=True))).refusal is Refusal.UNCATEGORISED
    assert stored_input(dataclasses.replace(SOURCE, rfc_message_id=None, provider_id="g-1")).message_key == "g-1"
    assert stored_input(dataclasses.replace(SOURCE, rfc_message_id=None)).message_key == "plmail-message:5"
    assert user_zone_name("Mars/Olympus") == "UTC" and user_zone_name("Europe/Berlin") == "Europe/Berlin"
    assert user_language("fr") is Locale.EN and user_language("de") is Locale.DE
    meeting = dataclasses.replace(SOURCE, headers={**SOURCE.headers, "X-Microsoft-CDO-Busystatus": "BUSY"})
    assert EventProposer().decide(stored_input(meeting)).refusal is Refusal.MEETING_HEADERS
    markup = dataclasses.replace(SOURCE, body_html='<script type="application/ld+json">{}</script>')
    assert EventProposer().decide(stored_input(markup)).refusal is Refusal.SCHEMA_MARKUP
