"""RRULE ⇄ JSCalendar conversion, and occurrences materialised in the event's own zone."""

from __future__ import annotations

import time
from datetime import UTC, date, datetime, timedelta

import pytest

from plmail.calendar.recurrence import (
    jscalendar_to_rrule,
    materialise_occurrences,
    occurrence_window,
    rrule_to_jscalendar,
)

BERLIN_START = datetime(2024, 3, 4, 8, tzinfo=UTC)  # Monday 09:00 in Berlin
REFERENCE = datetime(2024, 6, 1, tzinfo=UTC)


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


@pytest.mark.parametrize(
    ("rrule", "expected"),
    [
        ("FREQ=DAILY", {"frequency": "daily"}),
        (
            "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE;COUNT=10",
            {
                "frequency": "weekly",
                "interval": 2,
                "byDay": [{"@type": "NDay", "day": "mo"}, {"@type": "NDay", "day": "we"}],
                "count": 10,
            },
        ),
        (
            "FREQ=MONTHLY;BYDAY=-1FR",
            {"frequency": "monthly", "byDay": [{"@type": "NDay", "day": "fr", "nthOfPeriod": -1}]},
        ),
        (
            "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1",
            {
                "frequency": "monthly",
                "byDay": [{"@type": "NDay", "day": day} for day in ("mo", "tu", "we", "th", "fr")],
                "bySetPosition": [-1],
            },
        ),
        (
            "FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU",
            {
                "frequency": "yearly",
                "byDay": [{"@type": "NDay", "day": "su", "nthOfPeriod": -1}],
                "byMonth": ["3"],
            },
        ),
        (
            "FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO;WKST=SU",
            {
                "frequency": "yearly",
                "firstDayOfWeek": "su",
                "byDay": [{"@type": "NDay", "day": "mo"}],
                "byWeekNo": [20],
            },
        ),
        # UNTIL is UTC in RRULE and a wall-clock time in the event's zone in JSCalendar.
        ("FREQ=WEEKLY;UNTIL=20240401T065959Z", {"frequency": "weekly", "until": "2024-04-01T08:59:59"}),
    ],
)
def test_rrule_to_jscalendar(rrule: str, expected: dict[str, object]) -> None:
    rule = rrule_to_jscalendar(rrule, start=BERLIN_START, time_zone="Europe/Berlin")
    assert rule == {"@type": "RecurrenceRule", **expected}
    assert rule is not None
    back = jscalendar_to_rrule(rule, time_zone="Europe/Berlin")
    assert back is not None
    assert rrule_to_jscalendar(back, start=BERLIN_START, time_zone="Europe/Berlin") == rule


def test_until_for_all_day_and_floating_events() -> None:
    all_day = rrule_to_jscalendar("FREQ=DAILY;UNTIL=20240310", start=date(2024, 3, 1))
    assert all_day == {"@type": "RecurrenceRule", "frequency": "daily", "until": "2024-03-10T00:00:00"}
    assert jscalendar_to_rrule(all_day, all_day=True) == "FREQ=DAILY;UNTIL=20240310"
    floating = rrule_to_jscalendar("FREQ=DAILY;UNTIL=20240310T090000", start=datetime(2024, 3, 1, 9))
    assert floating is not None and floating["until"] == "2024-03-10T09:00:00"
    assert jscalendar_to_rrule(floating, floating=True) == "FREQ=DAILY;UNTIL=20240310T090000"


@pytest.mark.parametrize(
    "rrule",
    [
        "FREQ=SECONDLY",
        "FREQ=MINUTELY;INTERVAL=5",
        "FREQ=FORTNIGHTLY",
        "INTERVAL=2",
        "RSCALE=HEBREW;FREQ=YEARLY",
        "FREQ=MONTHLY;SKIP=FORWARD;BYMONTHDAY=31",
        "FREQ=YEARLY;BYMONTH=5L",
        "FREQ=DAILY;COUNT=2;UNTIL=20240401T000000Z",
        "FREQ=WEEKLY;BYDAY=1MO",
        "FREQ=DAILY;BYWEEKNO=3",
        "FREQ=MONTHLY;BYYEARDAY=100",
        "FREQ=WEEKLY;BYMONTHDAY=3",
        "FREQ=DAILY;BYSETPOS=2",
        "FREQ=MONTHLY;BYSETPOS=1",
        "FREQ=MONTHLY;BYMONTHDAY=0",
        "FREQ=MONTHLY;BYMONTHDAY=32",
        "FREQ=DAILY;BYHOUR=24",
        "FREQ=DAILY;INTERVAL=0",
        "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30",
        "FREQ=YEARLY;BYMONTH=4,6;BYMONTHDAY=31,-31",
        "FREQ=WEEKLY;X-NAME=1",
        "FREQ=YEARLY;BYEASTER=0",
    ],
)
def test_rules_that_cannot_be_kept_faithfully_are_refused(rrule: str) -> None:
    assert rrule_to_jscalendar(rrule, start=BERLIN_START, time_zone="Europe/Berlin") is None


def test_time_parts_on_an_all_day_event_are_refused() -> None:
    assert rrule_to_jscalendar("FREQ=DAILY;BYHOUR=9", start=date(2024, 3, 1)) is None
    assert rrule_to_jscalendar("FREQ=HOURLY", start=date(2024, 3, 1)) is None


def test_weekly_meeting_keeps_its_local_time_across_both_dst_changes() -> None:
    rule = rrule_to_jscalendar("FREQ=WEEKLY;BYDAY=MO", start=BERLIN_START, time_zone="Europe/Berlin")
    assert rule is not None
    found = materialise_occurrences(
        BERLIN_START,
        BERLIN_START + timedelta(hours=1),
        rules=[rule],
        time_zone="Europe/Berlin",
        window_start=utc(2024, 3, 1),
        window_end=utc(2024, 11, 5),
    )
    starts = {o.start for o in found}
    assert utc(2024, 3, 25, 8) in starts and utc(2024, 4, 1, 7) in starts  # summer time from 31 March
    assert utc(2024, 10, 21, 7) in starts and utc(2024, 10, 28, 8) in starts  # winter time from 27 October
    assert all(o.end - o.start == timedelta(hours=1) for o in found)  # type: ignore[operator]
    assert len(found) == 36


def test_a_utc_series_without_zone_stays_at_its_utc_time() -> None:
    found = materialise_occurrences(
        BERLIN_START, rules=[{"frequency": "weekly"}], window_start=utc(2024, 3, 1), window_end=utc(2024, 4, 10)
    )
    assert [o.start for o in found] == [utc(2024, 3, 4 + 7 * week, 8) for week in range(4)] + [
        utc(2024, 4, 1, 8),
        utc(2024, 4, 8, 8),
    ]


def test_instance_in_the_spring_forward_gap_takes_the_offset_before_it() -> None:
    start = utc(2024, 3, 24, 1, 30)  # Sunday 02:30 Berlin (winter time)
    found = materialise_occurrences(
        start,
        rules=[{"frequency": "weekly"}],
        time_zone="Europe/Berlin",
        window_start=start,
        window_end=utc(2024, 4, 8),
    )
    # 31 March 02:30 does not exist in Berlin; RFC 5545 reads it with the offset before the gap.
    assert [o.start for o in found] == [utc(2024, 3, 24, 1, 30), utc(2024, 3, 31, 1, 30), utc(2024, 4, 7, 0, 30)]


def test_all_day_yearly_occurrences_are_dates() -> None:
    found = materialise_occurrences(
        date(1997, 7, 14), rules=[{"frequency": "yearly"}], window_start=utc(1999, 1, 1), window_end=utc(2002, 1, 1)
    )
    assert [(o.start, o.end) for o in found] == [(date(year, 7, 14), date(year, 7, 15)) for year in (1999, 2000, 2001)]


def test_floating_series_stays_naive() -> None:
    start = datetime(2024, 3, 1, 9)
    found = materialise_occurrences(start, rules=[{"frequency": "daily", "count": 2}], reference=REFERENCE)
    assert [o.start for o in found] == [datetime(2024, 3, 1, 9), datetime(2024, 3, 2, 9)]


def test_exclusions_overrides_and_added_instances() -> None:
    found = materialise_occurrences(
        BERLIN_START,
        BERLIN_START + timedelta(minutes=30),
        rules=[{"@type": "RecurrenceRule", "frequency": "weekly", "count": 5}],
        excluded=[utc(2024, 3, 11, 8)],
        overrides={
            "2024-03-18T09:00:00": {"start": "2024-03-19T15:00:00", "duration": "PT2H"},
            "2024-03-25T09:00:00": {"status": "cancelled"},
            "2024-04-01T09:00:00": {"excluded": True},
            "2024-03-06T12:00:00": {},
        },
        time_zone="Europe/Berlin",
        reference=REFERENCE,
    )
    assert [(o.recurrence_id, o.start, o.end, o.cancelled, o.is_override) for o in found] == [
        (utc(2024, 3, 4, 8), utc(2024, 3, 4, 8), utc(2024, 3, 4, 8, 30), False, False),
        (utc(2024, 3, 6, 11), utc(2024, 3, 6, 11), utc(2024, 3, 6, 11, 30), False, True),  # an RDATE
        (utc(2024, 3, 18, 8), utc(2024, 3, 19, 14), utc(2024, 3, 19, 16), False, True),  # moved
        (utc(2024, 3, 25, 8), utc(2024, 3, 25, 8), utc(2024, 3, 25, 8, 30), True, True),  # struck through
    ]


def test_cancelled_event_marks_every_occurrence() -> None:
    found = materialise_occurrences(
        BERLIN_START, rules=[{"frequency": "daily", "count": 3}], cancelled=True, reference=REFERENCE
    )
    assert len(found) == 3 and all(o.cancelled for o in found)


def test_dtstart_counts_as_the_first_instance_even_off_rule() -> None:
    # A Tuesday start with a Monday rule: DTSTART plus two Mondays make COUNT=3 (RFC 5545).
    start = utc(2024, 3, 5, 8)
    found = materialise_occurrences(
        start, rules=[{"frequency": "weekly", "byDay": [{"day": "mo"}], "count": 3}], reference=REFERENCE
    )
    assert [o.start for o in found] == [start, utc(2024, 3, 11, 8), utc(2024, 3, 18, 8)]


def test_window_bounds_an_endless_series_and_limit_caps_it() -> None:
    reference = utc(2026, 1, 1)
    lower, upper = occurrence_window(reference)
    assert (lower, upper) == (reference - timedelta(days=365), reference + timedelta(days=730))
    endless = materialise_occurrences(utc(2000, 1, 3, 9), rules=[{"frequency": "weekly"}], reference=reference)
    assert all(lower - timedelta(hours=1) < o.start < upper for o in endless)  # type: ignore[operator]
    assert 155 <= len(endless) <= 158
    daily = materialise_occurrences(utc(2020, 1, 1, 9), rules=[{"frequency": "daily"}], reference=reference)
    assert len(daily) == 1_000
    assert (
        len(materialise_occurrences(utc(2020, 1, 1), rules=[{"frequency": "daily"}], reference=reference, limit=7)) == 7
    )


def test_a_single_event_is_always_returned_whatever_the_window() -> None:
    found = materialise_occurrences(utc(1990, 5, 1, 9), reference=REFERENCE)
    assert [(o.start, o.end, o.is_override) for o in found] == [(utc(1990, 5, 1, 9), utc(1990, 5, 1, 10), False)]


def test_the_window_never_comes_from_the_clock() -> None:
    with pytest.raises(ValueError, match="reference"):
        materialise_occurrences(BERLIN_START, rules=[{"frequency": "daily"}])


@pytest.mark.parametrize(
    "rule",
    [
        {"frequency": "daily", "byMonth": ["2"], "byMonthDay": [30]},
        {"frequency": "hourly", "byMonth": ["6"], "byWeekNo": [1]},
        {"frequency": "daily", "byYearDay": [366], "byMonth": ["1"]},
        {"frequency": "daily", "bySetPosition": [2]},
        {"frequency": "secondly"},
        {"frequency": "weekly", "interval": 0},
        {"frequency": "weekly", "byDay": [{"day": "xx"}]},
        {"frequency": "monthly", "rscale": "chinese"},
        "not a rule",
    ],
)
def test_stored_rules_that_never_match_cost_bounded_time(rule: object) -> None:
    began = time.perf_counter()
    found = materialise_occurrences(BERLIN_START, rules=[rule], reference=REFERENCE)  # type: ignore[list-item]
    assert time.perf_counter() - began < 1.0
    assert [o.start for o in found] in ([BERLIN_START], [])
