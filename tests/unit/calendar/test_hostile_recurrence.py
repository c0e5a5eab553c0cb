"""Issue 39, rule 3: no recurrence can hold the server. The 783-byte rule the security round found (12.6 s
of the event loop), a VTIMEZONE whose rules name a transition a day, and the budgets that stop both."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from dateutil import rrule as du  # type: ignore[import-untyped]
from icalendar import Calendar

from plmail.calendar.drafts import draft_from_claim
from plmail.calendar.extraction import parse_ics
from plmail.calendar.occurrences import ExpansionBudget, _instances, expand_occurrences
from plmail.calendar.sources import EventSource
from plmail.calendar.timezones import zone_transitions
from plmail.calendar.writer import event_values, expanded_rows, stored_instant
from tests.support.hostile_ics import recurrence_bomb, vtimezone_bomb

REFERENCE = datetime(2026, 6, 1, tzinfo=UTC)


def test_the_783_byte_rule_is_cut_short_in_bounded_time_and_keeps_its_first_occurrences() -> None:
    data = recurrence_bomb()
    assert len(data) == 783
    began = time.perf_counter()
    claim = parse_ics(data).events[0]
    assert claim.recurrence_rules and claim.recurrence_rules[0]["count"] == 1_000_000
    values = event_values(1, 1, draft_from_claim(claim, EventSource.MANUAL, ()), "UTC")
    rows, complete = expanded_rows(values, user_zone="UTC", reference=stored_instant(claim.start, "UTC"))
    elapsed = time.perf_counter() - began
    assert elapsed < 1.0  # the security round measured 12.6 s; the budget is 200 ms an event
    assert not complete
    starts = [row.starts_at for row in rows]
    assert starts[:3] == [datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC), datetime(2027, 1, 1, 0, 0, 0, tzinfo=UTC),
                          datetime(2027, 1, 1, 0, 0, 1, tzinfo=UTC)]


def ticking(step: float) -> Iterator[float]:
    return itertools.count(0.0, step)


def test_an_event_stops_at_its_time_budget_with_what_it_found() -> None:
    tick = ticking(0.05)  # every look at the clock is 50 ms later: the 200 ms budget ends after 4 looks
    budget = ExpansionBudget(now=lambda: next(tick))
    start = datetime(2026, 1, 1, 9, tzinfo=UTC)
    found = expand_occurrences(start, rules=[{"@type": "RecurrenceRule", "frequency": "hourly"}],
                               reference=REFERENCE, budget=budget)
    assert not found.complete and budget.shortened == 1
    assert found.occurrences[0].start == start
    assert 1 < len(found.occurrences) < 1_000  # some, not the thousand the window would hold


def test_a_spent_file_budget_leaves_later_events_their_own_start() -> None:
    budget = ExpansionBudget(occurrences=10)
    daily = [{"@type": "RecurrenceRule", "frequency": "daily"}]
    first = expand_occurrences(datetime(2026, 1, 1, 9, tzinfo=UTC), rules=daily, reference=REFERENCE, budget=budget)
    assert first.complete and len(first.occurrences) > 10
    later = datetime(2026, 2, 1, 9, tzinfo=UTC)
    second = expand_occurrences(later, rules=daily, reference=REFERENCE, budget=budget)
    assert not second.complete
    assert [o.start for o in second.occurrences] == [later]
    single = expand_occurrences(later, reference=REFERENCE, budget=budget)
    assert single.complete  # an event without a rule has nothing to cut


@pytest.mark.parametrize(
    "kwargs",
    [
        {"freq": du.DAILY, "byhour": [9, 17], "byminute": [0, 30]},
        {"freq": du.WEEKLY, "byweekday": [du.MO, du.TH], "byhour": [8, 20]},
        {"freq": du.MONTHLY, "bymonthday": [1, -1], "byhour": [1, 2], "bysecond": [5, 6]},
        {"freq": du.YEARLY, "bymonth": [2], "bymonthday": [29], "byhour": [0, 12]},
        {"freq": du.DAILY, "interval": 3, "byhour": [9, 17], "until": datetime(2026, 3, 3, 9)},
        {"freq": du.YEARLY, "byweekno": [1, 20], "byweekday": [du.SU], "byminute": [0, 15, 59]},
    ],
)
@pytest.mark.parametrize("first", [datetime(2026, 1, 31, 12, 0, 5), datetime(2024, 2, 29, 9, 30)])
def test_times_of_day_combined_with_the_rules_days_are_what_dateutil_yields(
    kwargs: dict[str, object], first: datetime
) -> None:
    expected = list(itertools.islice(du.rrule(dtstart=first, **kwargs), 500))
    assert list(itertools.islice(_instances(dict(kwargs), first), 500)) == expected


def test_a_vtimezone_with_a_transition_a_day_is_not_used_and_costs_bounded_time() -> None:
    data = vtimezone_bomb(50)
    zone = next(c for c in Calendar.from_ical(data.split(b"END:VCALENDAR")[0] + b"END:VCALENDAR").walk("VTIMEZONE"))
    assert zone_transitions(zone) is None
    began = time.perf_counter()
    parsed = parse_ics(data)
    assert time.perf_counter() - began < 2.0
    assert len(parsed.events) == 50
    assert all(isinstance(e.start, datetime) and e.start.tzinfo is None for e in parsed.events)  # floating


OUTLOOK_ZONE = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VTIMEZONE\r\nTZID:Customized Time Zone\r\nBEGIN:STANDARD\r\n"
    "DTSTART:16011028T030000\r\nRRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=10\r\nTZOFFSETFROM:+0200\r\n"
    "TZOFFSETTO:+0100\r\nEND:STANDARD\r\nBEGIN:DAYLIGHT\r\nDTSTART:16010325T020000\r\n"
    "RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=3\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\nEND:DAYLIGHT\r\n"
    "END:VTIMEZONE\r\nBEGIN:VEVENT\r\nUID:real@x\r\nDTSTAMP:20260101T000000Z\r\n"
    "DTSTART;TZID=Customized Time Zone:20260701T090000\r\nSUMMARY:Summer\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
)


def test_a_real_vtimezone_from_1601_is_still_used() -> None:
    (event,) = parse_ics(OUTLOOK_ZONE).events
    assert event.start == datetime(2026, 7, 1, 7, tzinfo=UTC)  # 09:00 at +02:00 in summer
