"""A day of the month without its month ("on the 15th at 2pm", "am 15. um 14 Uhr"): the next such day, and only
where nothing else in the message could be the month it belongs to; and a date that settles which week an open
"next Tuesday" is. Shares the helpers of test_detector_issue_37.py."""

from __future__ import annotations

from datetime import datetime

import pytest

from plmail.domain.enums import Locale
from tests.unit.proposals.test_detector_issue_37 import BERLIN, DE, EN, MONDAY, read

SEPTEMBER_3 = datetime(2026, 9, 3, 9, 0, tzinfo=BERLIN)
DECEMBER_20 = datetime(2026, 12, 20, 9, 0, tzinfo=BERLIN)
AUGUST_24 = datetime(2026, 8, 24, 9, 0, tzinfo=BERLIN)


@pytest.mark.parametrize(
    ("language", "text", "sent", "start"),
    [
        # Written on Monday 3 August 2026: the 15th still ahead this month.
        (EN, "Can we meet on the 15th at 2pm?", MONDAY, "2026-08-15 14:00"),
        (EN, "On the 20th at 10am, then.", MONDAY, "2026-08-20 10:00"),
        (DE, "Können wir uns am 15. um 14 Uhr treffen?", MONDAY, "2026-08-15 14:00"),
        (DE, "Am 20., 10 Uhr, bei mir?", MONDAY, "2026-08-20 10:00"),
        # A time written with a dot is no month.
        (DE, "Am 20. um 14.30 Uhr?", MONDAY, "2026-08-20 14:30"),
        # The 2nd has passed this month: next month's, when that is at most two weeks ahead.
        (EN, "See you on the 2nd at 10am", AUGUST_24, "2026-09-02 10:00"),
        (DE, "am 2. um 10 Uhr", AUGUST_24, "2026-09-02 10:00"),
        # Across the year's end.
        (DE, "Am 2. um 14 Uhr im Büro?", DECEMBER_20, "2027-01-02 14:00"),
    ],
)
def test_a_day_of_the_month_with_a_time_is_the_next_such_day(
    language: Locale, text: str, sent: datetime, start: str
) -> None:
    assert [s for s, _ in read(text, language, sent)] == [start]


@pytest.mark.parametrize(
    ("language", "text", "sent"),
    [
        # A noun after it: no day.
        (EN, "Meet me on the 15th floor at 3pm", MONDAY),
        (DE, "Am 15. Geburtstag um 14 Uhr gibt es Kuchen", MONDAY),
        # Without a time it names no appointment.
        (EN, "Can we talk on the 15th?", MONDAY),
        (DE, "Passt es am 15.?", MONDAY),
        # A question about the past.
        (EN, "Where were you on the 12th at 10am?", MONDAY),
        # A month written elsewhere in the message may be this day's month.
        (DE, "Im September treffen wir uns. Am 15. um 14 Uhr?", MONDAY),
        (EN, "We meet next month, on the 15th at 2pm.", MONDAY),
        (DE, "Am 15. um 14 Uhr, wie am 3.8. besprochen", MONDAY),
        (EN, "May I suggest we meet on the 15th at 2pm?", MONDAY),  # "May" might be the month
        # Passed this month and a month away: more likely a day gone by, in a past tense we do not know.
        (DE, "Das Paket kam am 2. um 10 Uhr an", MONDAY),
        (EN, "See you on the 2nd at 10am", MONDAY),
        # A day this month lacks is not moved to another month.
        (EN, "Let's meet on the 31st at 9am", SEPTEMBER_3),
        # "bis zum 15." is a deadline, not "am".
        (DE, "Bitte bis zum 15. um 14 Uhr zurückschicken", MONDAY),
    ],
)
def test_a_day_of_the_month_that_may_be_something_else_stays_unread(
    language: Locale, text: str, sent: datetime
) -> None:
    assert read(text, language, sent) == []


@pytest.mark.parametrize(
    ("language", "text", "start"),
    [
        # "next Tuesday" alone, written on a Monday, may be tomorrow or the week after; its date says which.
        (DE, "Nächsten Dienstag, 11. August, 9:30 Uhr", "2026-08-11 09:30"),
        (EN, "next Tuesday, August 11, at 9:30am", "2026-08-11 09:30"),
        (DE, "Nächsten Dienstag, 4. August, 9:30 Uhr", "2026-08-04 09:30"),
        (DE, "nächsten Dienstag, den 11.8.2026, um 9:30 Uhr", "2026-08-11 09:30"),
    ],
)
def test_a_date_settles_which_week_next_weekday_is(language: Locale, text: str, start: str) -> None:
    assert [s for s, _ in read(text, language, MONDAY)] == [start]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        (DE, "Nächsten Dienstag, 12. August, 9:30 Uhr"),  # the 12th is a Wednesday
        (EN, "next Tuesday, August 25, at 9:30am"),  # a Tuesday, but three weeks on: not "next"
        (EN, "next Tuesday at 9:30am"),  # no date to settle it
    ],
)
def test_next_weekday_with_a_date_that_does_not_settle_it_stays_unread(language: Locale, text: str) -> None:
    assert read(text, language, MONDAY) == []
