"""When an invitation card offers Yes/Maybe/No (issue 29): only where one of the user's addresses is an attendee,
someone else organises it, it is not cancelled, and the event has not ended (a series: while an occurrence is to
come)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from plmail.calendar.rsvp import event_ended, offers_answer
from plmail.domain.calendar import EventValues

START = datetime(2030, 3, 16, 11, 0, tzinfo=UTC)
ME = "receiver@example.com"


def _event(**changes: Any) -> EventValues:
    values = EventValues(
        calendar_id=1, user_id=1, uid="02e79b96", sequence=0, starts_at=START, ends_at=START + timedelta(minutes=30),
        time_zone="UTC", is_all_day=False, is_floating=False, title="Single Event", location=None, description=None,
        status="confirmed", kind=None, source="ics", confidence=100, recurrence={}, raw_rrule=None,
        dedup_key_version=1, my_participation=None,
        organizer={"name": "Sender", "email": "sender@example.com"},
        attendees=[{"name": "Sender", "email": "sender@example.com", "partstat": "accepted"},
                   {"name": "Receiver", "email": "Receiver@Example.com", "partstat": "needs-action"},
                   {"name": "Other", "email": "other@example.com", "partstat": "needs-action"}],
    )
    return dataclasses.replace(values, **changes)


BEFORE = START - timedelta(days=1)


def test_an_invitation_naming_me_before_it_ends_asks() -> None:
    assert offers_answer(_event(), {ME}, BEFORE)
    assert offers_answer(_event(), {"RECEIVER@example.com"}, START + timedelta(minutes=29))  # under way still


@pytest.mark.parametrize(("why", "values", "own", "now"), [
    ("ended", _event(), {ME}, START + timedelta(minutes=30)),
    ("not an attendee (a list, a Bcc, a forward)", _event(), {"someone@example.com"}, BEFORE),
    ("I organise it", _event(), {ME, "sender@example.com"}, BEFORE),
    ("cancelled", _event(status="cancelled"), {ME}, BEFORE),
    ("no organiser to answer", _event(organizer=None), {ME}, BEFORE),
])
def test_no_question_where_none_is_asked(why: str, values: EventValues, own: set[str], now: datetime) -> None:
    assert not offers_answer(values, own, now), why


def test_a_series_asks_while_an_occurrence_is_to_come() -> None:
    weekly = _event(recurrence={"recurrenceRules": [{"@type": "RecurrenceRule", "frequency": "weekly"}]})
    assert not event_ended(weekly, START + timedelta(days=400))
    assert offers_answer(weekly, {ME}, START + timedelta(days=400))
    four = _event(recurrence={"recurrenceRules": [{"@type": "RecurrenceRule", "frequency": "weekly", "count": 4}]})
    assert not event_ended(four, START + timedelta(days=20))  # the fourth is on day 21
    assert event_ended(four, START + timedelta(days=22))
    until = _event(recurrence={"recurrenceRules": [{"@type": "RecurrenceRule", "frequency": "daily",
                                                     "until": "2030-03-20T11:00:00"}]})
    assert not event_ended(until, datetime(2030, 3, 20, 11, 10, tzinfo=UTC))
    assert event_ended(until, datetime(2030, 3, 21, tzinfo=UTC))
    assert not offers_answer(until, {ME}, datetime(2030, 3, 21, tzinfo=UTC))
