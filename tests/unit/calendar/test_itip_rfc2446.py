"""The RFC 2446 iTIP examples (libical's 2446.ics): REQUEST, CANCEL and REPLY objects read into claims.

Applying claims to a calendar is the reconciler's job; ``apply_in_order`` below is a deliberately
tiny stand-in that follows RFC 5546 (SEQUENCE orders revisions, a cancel sets a status, an instance
update patches its series) so the end state of a sequence of messages can be shown here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime

import pytest

from plmail.calendar.extraction import EventStatus, ExtractedEvent, ItipMethod, parse_ics
from plmail.calendar.jscalendar import JsonObject
from plmail.calendar.recurrence import materialise_occurrences
from tests.unit.calendar.corpus import LIBICAL

REFERENCE = datetime(1998, 1, 1, tzinfo=UTC)


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


@pytest.fixture(scope="module")
def claims() -> list[ExtractedEvent]:
    return list(parse_ics((LIBICAL / "2446.ics").read_bytes()).events)


def by_uid(claims: list[ExtractedEvent], uid: str) -> list[ExtractedEvent]:
    return [claim for claim in claims if claim.uid == uid]


def test_conversations_about_an_event_are_not_claims() -> None:
    result = parse_ics((LIBICAL / "2446.ics").read_bytes())
    assert len(result.events) == 34
    assert sorted(result.skipped) == sorted(
        ["method COUNTER does not state an event"] * 2
        + ["method DECLINECOUNTER does not state an event"]
        + ["method ADD does not state an event"] * 3
        + ["method REFRESH does not state an event"] * 2
    )
    assert {claim.method for claim in result.events} == {
        ItipMethod.PUBLISH,
        ItipMethod.REQUEST,
        ItipMethod.CANCEL,
        ItipMethod.REPLY,
    }


def test_published_baseball_game_revisions(claims: list[ExtractedEvent]) -> None:
    game = by_uid(claims, "0981234-1234234-23@example.com")
    assert [(c.method, c.sequence, c.status, c.start, c.end) for c in game[:4]] == [
        # No DTEND and no DURATION: a nominal hour, because a zero-length row is invisible.
        (ItipMethod.PUBLISH, 0, EventStatus.CONFIRMED, utc(1997, 7, 1, 20), utc(1997, 7, 1, 21)),
        (ItipMethod.PUBLISH, 1, EventStatus.CONFIRMED, utc(1997, 7, 1, 21), utc(1997, 7, 1, 23)),
        (ItipMethod.CANCEL, 2, EventStatus.CANCELLED, None, None),
        # 16:00 CDT; its DTEND lies before DTSTART, so the end is nominal too.
        (ItipMethod.PUBLISH, 3, EventStatus.CONFIRMED, utc(1997, 7, 2, 21), utc(1997, 7, 2, 22)),
    ]
    assert game[3].time_zone == "America/Chicago"  # TZID "America-Chicago", a mangled Olson name
    bastille = game[4]
    assert (bastille.title, bastille.start, bastille.end, bastille.all_day) == (
        "Bastille Day",
        date(1997, 7, 14),
        date(1997, 7, 15),
        True,
    )
    assert bastille.recurrence_rules == ({"@type": "RecurrenceRule", "frequency": "yearly"},)


def test_request_reply_and_cancel_of_one_meeting(claims: list[ExtractedEvent]) -> None:
    meeting = by_uid(claims, "calsrv.example.com-873970198738777@example.com")
    first = meeting[0]
    assert (first.method, first.sequence, first.title, first.start) == (
        ItipMethod.REQUEST,
        0,
        "Conference",
        utc(1997, 7, 1, 20),
    )
    assert first.end == utc(1997, 7, 1, 21)  # DTEND equal to DTSTART: nominal hour
    assert [(a.email, a.partstat, a.role) for a in first.attendees[:2]] == [
        ("a@example.com", "accepted", "chair"),
        ("b@example.com", None, None),
    ]
    reply = meeting[1]
    assert (reply.method, reply.start, [(a.email, a.partstat) for a in reply.attendees]) == (
        ItipMethod.REPLY,
        None,
        [("b@example.com", "accepted")],
    )
    cancels = [claim for claim in meeting if claim.method is ItipMethod.CANCEL]
    assert [(c.sequence, c.status, c.instance_only) for c in cancels] == [
        (1, EventStatus.CANCELLED, False),
        (1, EventStatus.CANCELLED, False),
    ]


def test_recurrence_id_objects_are_instance_claims(claims: list[ExtractedEvent]) -> None:
    series = by_uid(claims, "guid-1@host1.com")
    assert series[0].recurrence_rules == (
        {"@type": "RecurrenceRule", "frequency": "monthly", "byMonthDay": [1], "until": "1998-09-01T21:00:00"},
    )
    cancel_one = series[1]
    assert (cancel_one.method, cancel_one.sequence, cancel_one.instance_only) == (ItipMethod.CANCEL, 2, True)
    assert cancel_one.recurrence_overrides == {"1997-08-01T21:00:00": {"status": "cancelled"}}
    cancel_all = series[2]
    assert (cancel_all.method, cancel_all.sequence, cancel_all.instance_only) == (ItipMethod.CANCEL, 3, False)
    moved = by_uid(claims, "123456789@host1.com")[3]
    assert moved.instance_only and moved.recurrence_overrides["1998-03-11T18:00:00"]["start"] == "1998-03-11T16:00:00"


def test_rdates_become_added_instances(claims: list[ExtractedEvent]) -> None:
    rdates = by_uid(claims, "123456789@host1.com")[2]
    assert rdates.recurrence_rules == ()
    assert set(rdates.recurrence_overrides) == {"1998-03-04T18:00:00", "1998-03-11T18:00:00", "1998-03-18T18:00:00"}
    occurrences = materialise_occurrences(
        rdates.start or REFERENCE, rdates.end, overrides=rdates.recurrence_overrides, reference=REFERENCE
    )
    assert [o.start for o in occurrences] == [utc(1998, 3, 4, 18), utc(1998, 3, 11, 18), utc(1998, 3, 18, 18)]


@dataclass
class Shown:
    """What a calendar holds for one UID after some messages (the stand-in reconciler's state)."""

    claim: ExtractedEvent
    overrides: dict[str, JsonObject] = field(default_factory=dict)
    cancelled: bool = False


def apply_in_order(claims: list[ExtractedEvent]) -> dict[str, Shown]:
    shown: dict[str, Shown] = {}
    for claim in claims:
        current = shown.get(claim.uid)
        if claim.method is ItipMethod.REPLY:
            continue  # participation only
        if claim.instance_only:
            if current is not None:
                current.overrides.update(claim.recurrence_overrides)
            continue
        if current is not None and claim.sequence < current.claim.sequence:
            continue  # an older revision that arrived late is filed, not applied
        if claim.method is ItipMethod.CANCEL and current is not None:
            current.cancelled = True  # a cancel sets a status; it never deletes
            continue
        shown[claim.uid] = Shown(claim, dict(claim.recurrence_overrides), claim.status is EventStatus.CANCELLED)
    return shown


def test_series_then_one_cancelled_instance_then_the_whole_series(claims: list[ExtractedEvent]) -> None:
    series = by_uid(claims, "guid-1@host1.com")[:3]  # REQUEST s0, CANCEL 1997-08-01 s2, CANCEL all s3

    def occurrences(state: Shown) -> list[tuple[datetime | date, bool]]:
        event = state.claim
        found = materialise_occurrences(
            event.start or REFERENCE,
            event.end,
            rules=event.recurrence_rules,
            overrides=state.overrides,
            cancelled=state.cancelled,
            reference=REFERENCE,
        )
        return [(o.start, o.cancelled) for o in found[:4]]

    after_two = apply_in_order(series[:2])["guid-1@host1.com"]
    assert occurrences(after_two) == [
        (utc(1997, 6, 1, 21), False),
        (utc(1997, 7, 1, 21), False),
        (utc(1997, 8, 1, 21), True),
        (utc(1997, 9, 1, 21), False),
    ]
    after_all = apply_in_order(series)["guid-1@host1.com"]
    assert after_all.cancelled and all(cancelled for _, cancelled in occurrences(after_all))
    assert (
        len(
            materialise_occurrences(
                after_all.claim.start or REFERENCE, rules=after_all.claim.recurrence_rules, reference=REFERENCE
            )
        )
        == 16
    )


def test_late_older_revision_does_not_win(claims: list[ExtractedEvent]) -> None:
    game = by_uid(claims, "0981234-1234234-23@example.com")
    final = apply_in_order(game)["0981234-1234234-23@example.com"]
    # SEQUENCE 3 (Chicago, 2 July) stands; the SEQUENCE 0 Bastille Day object after it is older.
    assert (final.claim.sequence, final.claim.start, final.cancelled) == (3, utc(1997, 7, 2, 21), False)
