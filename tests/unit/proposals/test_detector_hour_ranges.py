"""Issue 37: two plain hours right after their day, where the writing itself says which half of the day they
are in ("Monday 11-4", "Montag 9-17", "Monday morning 6-8"), and the ones that stay unread because it does not
("Monday 3-8"), or because they may be the day's date ("Friday 7-6" where 6 July is a Friday)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from plmail.calendar.proposals import DetectionRequest, DeterministicDateDetector
from plmail.domain.enums import Locale

BERLIN = ZoneInfo("Europe/Berlin")
DE, EN = Locale.DE, Locale.EN
MONDAY = datetime(2026, 8, 3, 9, 0, tzinfo=BERLIN)
TUESDAY = datetime(2026, 8, 4, 9, 0, tzinfo=BERLIN)
DETECTOR = DeterministicDateDetector()


def read(text: str, language: Locale, sent: datetime) -> list[tuple[str, str]]:
    found = DETECTOR.detect(DetectionRequest(text, "", sent, "Europe/Berlin", language))
    return [(c.start.astimezone(BERLIN).strftime("%Y-%m-%d %H:%M"), c.end.astimezone(BERLIN).strftime("%Y-%m-%d %H:%M"))
            for c in found]  # fmt: skip


@pytest.mark.parametrize(
    ("language", "text", "sent", "start", "end"),
    [
        # An end before a start of 7 to 12 is only possible in the afternoon: 11 to 4 is 11:00 to 16:00.
        (EN, "Can you do Monday 11-4?", TUESDAY, "2026-08-10 11:00", "2026-08-10 16:00"),
        (EN, "Friday 9-5 works for the workshop.", TUESDAY, "2026-08-07 09:00", "2026-08-07 17:00"),
        (EN, "Could we block Thursday 12-4 for the review?", TUESDAY, "2026-08-06 12:00", "2026-08-06 16:00"),
        # A 24-hour end after a morning start, as German mail writes office hours.
        (DE, "Passt dir Montag 9-17 im Büro?", TUESDAY, "2026-08-10 09:00", "2026-08-10 17:00"),
        (DE, "Dienstag 11-14 hätte ich Zeit.", MONDAY, "2026-08-04 11:00", "2026-08-04 14:00"),
        (EN, "Are you free Tuesday 11-14 for a call?", MONDAY, "2026-08-04 11:00", "2026-08-04 14:00"),
        # A part of the day written right before the two numbers makes them hours, as one written after does.
        (EN, "Are you available next Monday morning 6-8?", TUESDAY, "2026-08-10 06:00", "2026-08-10 08:00"),
        (EN, "Friday afternoon 2-4 for the call?", TUESDAY, "2026-08-07 14:00", "2026-08-07 16:00"),
        (DE, "Hast du Montag Nachmittag 2-4 Zeit?", TUESDAY, "2026-08-10 14:00", "2026-08-10 16:00"),
        (DE, "Freitag abends 7-9 bei uns?", TUESDAY, "2026-08-07 19:00", "2026-08-07 21:00"),
    ],
)
def test_hours_whose_half_of_the_day_is_written_are_read(
    language: Locale, text: str, sent: datetime, start: str, end: str
) -> None:
    assert read(text, language, sent) == [(start, end)]


@pytest.mark.parametrize(
    ("language", "text", "sent"),
    [
        # Three to eight and six to eight may be the morning or the evening: not said, not guessed.
        (EN, "Are you available Monday 3-8?", TUESDAY),
        (EN, "Are you available next Monday 6-8?", TUESDAY),
        (DE, "Hast du Montag 3-8 Zeit?", TUESDAY),
        # Away from its day, "11-4" is a room, a score or a page range.
        (EN, "Room 11-4 on Friday?", TUESDAY),
        (DE, "Raum 9-17 am Freitag?", TUESDAY),
        # Written on Monday 2 July 2029, "Friday 7-6" may be Friday, 6 July (month first); written on Monday
        # 6 May 2030, "Freitag 10-5" may be Friday, 10 May (day first): the day's date as likely as its hours.
        (EN, "See you Friday 7-6?", datetime(2029, 7, 2, 9, 0, tzinfo=BERLIN)),
        (DE, "Sehen wir uns Freitag 10-5?", datetime(2030, 5, 6, 9, 0, tzinfo=BERLIN)),
        # The refusals stand with a range of hours: a numeric date without its four-digit year.
        (DE, "Termin am 04.08. 9-17?", MONDAY),
        (DE, "Termin am 04.08.26 9-17?", MONDAY),
        (EN, "Meeting on 8/4 9-5?", MONDAY),
        (EN, "Meeting on 8/4/26 9-5?", MONDAY),
    ],
)
def test_hours_that_may_be_either_half_or_a_date_stay_unread(language: Locale, text: str, sent: datetime) -> None:
    assert read(text, language, sent) == []


@pytest.mark.parametrize(
    ("language", "text", "start", "end"),
    [
        # Both ends of the window carry the same zone: one time in that zone, and its end.
        (EN, "Call on Friday, 2:00 PM EDT - 3:00 PM EDT?", "2026-08-07 20:00", "2026-08-07 21:00"),
        (EN, "Can we talk Friday between 830am ET and 9am ET?", "2026-08-07 14:30", "2026-08-07 15:00"),
        (EN, "Friday from 2pm BST to 3pm BST?", "2026-08-07 15:00", "2026-08-07 16:00"),
        (DE, "Telefonat am Freitag von 14:00 MESZ bis 15:30 MESZ?", "2026-08-07 14:00", "2026-08-07 15:30"),
        (DE, "Freitag zwischen 9 Uhr UTC und 11 Uhr UTC?", "2026-08-07 11:00", "2026-08-07 13:00"),
    ],
)
def test_a_window_with_its_zone_at_both_ends_is_one_time(language: Locale, text: str, start: str, end: str) -> None:
    assert read(text, language, MONDAY) == [(start, end)]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        # EST written in August: New York is then on EDT, so which hour was meant is not said.
        (EN, "Call on Friday, 2:00 PM EST - 3:00 PM EST?"),
        (DE, "Telefonat am Freitag von 14:00 MEZ bis 15:00 MEZ?"),
        # "and" without "between" offers two times to choose from; two zones are two clocks.
        (EN, "Friday at 2pm ET and 3pm ET?"),
        (EN, "Friday 2pm ET - 3pm CET?"),
        # The refusals stand: a numeric date without its four-digit year, or with two digits.
        (DE, "Am 07.08. von 14:00 MESZ bis 15:00 MESZ?"),
        (DE, "Am 07.08.26 von 14:00 MESZ bis 15:00 MESZ?"),
        (EN, "On 8/7 from 2pm BST to 3pm BST?"),
    ],
)
def test_a_window_whose_zone_is_unclear_or_whose_day_is_refused_stays_unread(language: Locale, text: str) -> None:
    assert read(text, language, MONDAY) == []
