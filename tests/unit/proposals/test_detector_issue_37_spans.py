"""Issue 37, spans and weeks: a day and time to another day and time in German as in English, and a weekday
moved by a count of weeks, with the refusals that stay. Shares the helpers of test_detector_issue_37.py."""

from __future__ import annotations

import pytest

from plmail.domain.enums import Locale
from tests.unit.proposals.test_detector_issue_37 import DE, EN, MONDAY, read, starts


@pytest.mark.parametrize(
    ("language", "text", "start", "end"),
    [
        # A bare hour before the far end's day is that day's number, not a span of hours to 7.
        (DE, "Ich bin vom 6. August 14 Uhr bis 7. August 16:30 Uhr in Berlin", "2026-08-06 14:00", "2026-08-07 16:30"),
        (DE, "6. August 14 Uhr bis 7. August 16:30 Uhr", "2026-08-06 14:00", "2026-08-07 16:30"),
        (EN, "I'm in Berlin from August 6 2pm to August 7 4:30pm", "2026-08-06 14:00", "2026-08-07 16:30"),
        # After "von", "bis morgen" is the span's far end, tomorrow, as "till tomorrow" is after "from".
        (DE, "Ich bin von heute 14 Uhr bis morgen 16:30 Uhr weg", "2026-08-03 14:00", "2026-08-04 16:30"),
        (DE, "von heute um 14 Uhr bis morgen um 16:30 Uhr", "2026-08-03 14:00", "2026-08-04 16:30"),
        (EN, "I'm away from today 2pm till tomorrow 4:30pm", "2026-08-03 14:00", "2026-08-04 16:30"),
        # From a time today, unwritten, to a time tomorrow.
        (EN, "I'll be away from 2pm till tomorrow 4:30pm", "2026-08-03 14:00", "2026-08-04 16:30"),
        (DE, "Ich bin von 14 Uhr bis morgen 16:30 Uhr weg", "2026-08-03 14:00", "2026-08-04 16:30"),
        (EN, "from 9pm till tomorrow 2am", "2026-08-03 21:00", "2026-08-04 02:00"),
        # "tomorrow" after both times is the day of both.
        (EN, "from 2pm till 4:30pm tomorrow", "2026-08-04 14:00", "2026-08-04 16:30"),
        # "ab … bis" opens a span as "von … bis" does.
        (DE, "Ab Donnerstag 9 Uhr bis Freitag 17 Uhr ist das Büro zu", "2026-08-06 09:00", "2026-08-07 17:00"),
        (DE, "ab morgen 9 Uhr bis übermorgen 17 Uhr", "2026-08-04 09:00", "2026-08-05 17:00"),
        (EN, "from tomorrow 9am to the day after tomorrow 5pm", "2026-08-04 09:00", "2026-08-05 17:00"),
        # The day between the two times is the day of both; "until", "bis" and "and" end the span the opener began.
        (EN, "Can we meet from 2pm on Friday to 4pm?", "2026-08-07 14:00", "2026-08-07 16:00"),
        (EN, "I'll be away from 2pm tomorrow until 4pm", "2026-08-04 14:00", "2026-08-04 16:00"),
        (EN, "I'll be away between 2:00 tomorrow and 4:00", "2026-08-04 14:00", "2026-08-04 16:00"),
        (DE, "Von 10 Uhr am Freitag bis 12 Uhr bin ich in Raum 3", "2026-08-07 10:00", "2026-08-07 12:00"),
        (DE, "Ich bin zwischen 14 Uhr morgen und 16 Uhr weg", "2026-08-04 14:00", "2026-08-04 16:00"),
        # A zone after the far end is the start's too (Berlin is UTC+2 in August).
        (EN, "from 2pm on Friday to 4pm UTC", "2026-08-07 16:00", "2026-08-07 18:00"),
    ],
)
def test_a_span_from_a_day_and_time_to_another(language: Locale, text: str, start: str, end: str) -> None:
    assert read(text, language, MONDAY) == [(start, end)]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("de", "Bis morgen!"),  # goodbye
        ("de", "Bitte schick es mir bis morgen 12 Uhr"),  # a deadline
        ("de", "Die Antwort brauche ich bis morgen um 16:30 Uhr"),
        ("en", "Please send it by tomorrow 4:30pm"),
        # A time, then a deadline tomorrow: no span without its "von" or "from".
        ("de", "um 14 Uhr bis morgen 16:30 Uhr"),
        ("en", "at 2pm till tomorrow 4:30pm"),
        # The start's day unwritten before a far end that is not tomorrow: which day it is stays open.
        ("en", "from 2pm till Friday 4:30pm"),
        # A time on a day, then a deadline: no span without its opener.
        ("de", "um 14 Uhr am Freitag bis 16 Uhr"),
        ("en", "at 2pm on Friday until 4pm"),
        # An end before its start on the same day is not read as the next day's.
        ("en", "from 9pm on Friday to 2am"),
        # "EST" in August is not Eastern time then (EDT): the zone is unclear, and the span with it.
        ("en", "from 2pm on Friday to 4pm EST"),
        # "ab" without its "bis" is a bound: from then on, no event.
        ("de", "Ich bin ab morgen 9 Uhr erreichbar"),
        ("de", "ab Donnerstag 9 Uhr"),
        ("en", "I can be reached from tomorrow 9am"),
    ],
)
def test_an_open_end_or_start_of_a_span_stays_unread(language: str, text: str) -> None:
    assert read(text, Locale(language), MONDAY) == []


@pytest.mark.parametrize(
    ("language", "text", "start"),
    [
        # Written on Monday 3 August: the Tuesday of the week two weeks on, not tomorrow.
        (DE, "in zwei Wochen am Dienstag um 10 Uhr", "2026-08-18 10:00"),
        (DE, "Dienstag in zwei Wochen um 10 Uhr", "2026-08-18 10:00"),
        (DE, "Dienstag in einer Woche um 10 Uhr", "2026-08-11 10:00"),
        (EN, "in two weeks on Tuesday at 10am", "2026-08-18 10:00"),
        (EN, "Tuesday in two weeks at 10am", "2026-08-18 10:00"),
    ],
)
def test_a_weekday_a_count_of_weeks_on(language: Locale, text: str, start: str) -> None:
    assert starts(text, language, MONDAY) == [start]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        # Weeks we do not count, or a count of days beside a weekday: never this week's Tuesday.
        (EN, "two weeks from now on Tuesday at 10am"),
        (EN, "Tuesday two weeks from now at 10am"),
        (DE, "zwei Wochen später am Dienstag um 10 Uhr"),
        (DE, "Dienstag zwei Wochen später um 10 Uhr"),
        (DE, "Dienstag in 14 Tagen um 10 Uhr"),
        (EN, "in 6 weeks on Tuesday at 10am"),  # past the month ahead the detector reads
        (DE, "in zwei Wochen am nächsten Dienstag um 10 Uhr"),
    ],
)
def test_a_weekday_moved_by_weeks_we_cannot_count_is_refused(language: Locale, text: str) -> None:
    assert read(text, language, MONDAY) == []


@pytest.mark.parametrize(
    ("language", "text"),
    [
        # A weekday counted from another day or event: offering the coming Tuesday would invent a date.
        (EN, "the following Tuesday at 10am"),
        (DE, "am darauffolgenden Dienstag um 10 Uhr"),
        (EN, "the Tuesday after next at 10am"),
        (DE, "am Dienstag darauf um 10 Uhr"),
        (DE, "den Dienstag danach um 10 Uhr"),
        (EN, "the Tuesday after the conference at 10am"),
        (DE, "am Dienstag nach der Konferenz um 10 Uhr"),
        (EN, "the Tuesday before Christmas at 10am"),
        (DE, "am Dienstag vor Weihnachten um 10 Uhr"),
        (EN, "Tuesday after Easter at 10am"),
        (DE, "Dienstag nach Ostern um 10 Uhr"),
        (EN, "Tuesday week at 10am"),
    ],
)
def test_a_weekday_counted_from_something_else_is_refused(language: Locale, text: str) -> None:
    assert read(text, language, MONDAY) == []


@pytest.mark.parametrize(
    ("language", "text", "start"),
    [
        # Set apart by a comma, or bounded by a time, the weekday is the coming one.
        (EN, "Tuesday, after lunch, at 1:30pm", "2026-08-04 13:30"),
        (DE, "Dienstag, nach dem Mittagessen, um 13:30 Uhr", "2026-08-04 13:30"),
        (EN, "See you Tuesday at 10am, after the standup", "2026-08-04 10:00"),
        (DE, "Dienstag um 10 Uhr vor der Demo", "2026-08-04 10:00"),
        (DE, "Am Dienstag vormittag um 10 Uhr", "2026-08-04 10:00"),
    ],
)
def test_a_weekday_beside_an_aside_keeps_its_day(language: Locale, text: str, start: str) -> None:
    assert starts(text, language, MONDAY) == [start]


@pytest.mark.parametrize(
    ("language", "text", "start"),
    [
        # The day given up is not offered; the day that replaces it is.
        (DE, "Statt Dienstag um 10 Uhr treffen wir uns Mittwoch um 11 Uhr", "2026-08-05 11:00"),
        (EN, "Instead of Tuesday at 10am, let's meet Wednesday at 11am", "2026-08-05 11:00"),
        (EN, "Wednesday at 11am rather than Tuesday at 10am", "2026-08-05 11:00"),
        # British "tomorrow week": a week from tomorrow, as "morgen in einer Woche".
        (EN, "tomorrow week at 10am", "2026-08-11 10:00"),
        (DE, "morgen in einer Woche um 10 Uhr", "2026-08-11 10:00"),
    ],
)
def test_a_day_given_up_and_a_day_a_week_on(language: Locale, text: str, start: str) -> None:
    assert starts(text, language, MONDAY) == [start]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        # Next week named apart from its weekday: which Tuesday is the writer's to say.
        (EN, "early next week, say Tuesday at 10am"),
        (DE, "Anfang nächster Woche, etwa Dienstag um 10 Uhr"),
        # Cancelled, in German as in English.
        (DE, "Der Termin am Dienstag um 10 Uhr fällt aus"),
        (DE, "Die Besprechungen am Dienstag um 10 Uhr fallen leider aus"),
        (EN, "Tuesday at 10am is cancelled"),
    ],
)
def test_a_weekday_of_a_week_named_apart_and_a_cancelled_one_are_refused(language: Locale, text: str) -> None:
    assert read(text, language, MONDAY) == []


@pytest.mark.parametrize(
    ("language", "text"),
    [
        # A move names the old time beside the new one; offering the old one was a wrong date.
        (EN, "The meeting on Tuesday at 10am has been moved to 11am"),
        (DE, "Das Meeting am Dienstag um 10 Uhr wurde auf 11 Uhr verschoben"),
        (EN, "Tuesday's meeting moves from 10am to 11am"),
        (DE, "Das Meeting am Dienstag verschiebt sich von 10 auf 11 Uhr"),
        (EN, "Can we push Tuesday 10am to 11am?"),
        (DE, "Können wir Dienstag 10 Uhr auf 11 Uhr schieben?"),
        # "otherwise" offers a second choice, as "or" does.
        (DE, "Dienstag um 10 Uhr, sonst Mittwoch um 11 Uhr"),
        (EN, "Tuesday at 10am, otherwise Wednesday at 11am"),
        # Counted back from the message: the past.
        (DE, "heute vor einer Woche um 10 Uhr"),
        (DE, "Montag vor zwei Wochen um 10 Uhr"),
        (EN, "a week ago Tuesday at 10am"),
    ],
)
def test_a_move_a_second_choice_and_a_day_counted_back_are_refused(language: Locale, text: str) -> None:
    assert read(text, language, MONDAY) == []


@pytest.mark.parametrize(
    ("language", "text", "start"),
    [
        # A move that names only where it goes: that is the appointment.
        (EN, "Can we move the meeting to Tuesday at 10am?", "2026-08-04 10:00"),
        (DE, "Können wir das Meeting auf Dienstag um 10 Uhr verschieben?", "2026-08-04 10:00"),
        (EN, "The call moved to Thursday at 3pm", "2026-08-06 15:00"),
        (DE, "Der Termin wurde auf Donnerstag 15 Uhr verlegt", "2026-08-06 15:00"),
    ],
)
def test_a_move_to_one_time_offers_it(language: Locale, text: str, start: str) -> None:
    assert starts(text, language, MONDAY) == [start]


@pytest.mark.parametrize(
    ("language", "text", "start"),
    [
        # Noon named by its part of the day, right after the day, as "tomorrow noon" is read.
        (DE, "Treffen wir uns morgen Mittag?", "2026-08-04 12:00"),
        (DE, "Freitag Mittag beim Italiener", "2026-08-07 12:00"),
        (DE, "Dienstagmittag beim Italiener", "2026-08-04 12:00"),
        (DE, "heute Mittag in der Kantine", "2026-08-03 12:00"),
        (EN, "Friday noon at the Italian place", "2026-08-07 12:00"),
        (EN, "Tuesday midday works for me", "2026-08-04 12:00"),
        # With a time beside it, Mittag is that time's part of the day: 1 is 13:00, not noon.
        (DE, "morgen Mittag um 1", "2026-08-04 13:00"),
        # The count of weeks set apart after the time says which Tuesday.
        (DE, "Dienstag um 10 Uhr, also in zwei Wochen", "2026-08-18 10:00"),
        (EN, "Tuesday at 10am, i.e. in two weeks", "2026-08-18 10:00"),
        (EN, "Tuesday at 10am, so in two weeks", "2026-08-18 10:00"),
        # A count of weeks that says something else leaves the weekday its own.
        (DE, "Am Dienstag um 10 Uhr besprechen wir das Projekt, das in zwei Wochen startet", "2026-08-04 10:00"),
        # "10ish" is "around 10": read where "around 10" is.
        (EN, "Tuesday 10ish?", "2026-08-04 10:00"),
        (EN, "Tuesday at 10-ish", "2026-08-04 10:00"),
        (EN, "Tuesday around 10", "2026-08-04 10:00"),
        (EN, "Tuesday 10:30ish", "2026-08-04 10:30"),
        # A day of the month spoken out in German, as "August twentieth" is in English.
        (DE, "am zwanzigsten August um zehn Uhr", "2026-08-20 10:00"),
        (EN, "on August twentieth at ten am", "2026-08-20 10:00"),
        (DE, "Am ersten September um 9 Uhr", "2026-09-01 09:00"),
        (DE, "am einundzwanzigsten August um 10 Uhr", "2026-08-21 10:00"),
        (DE, "Dienstag, den achtzehnten August, um 10 Uhr", "2026-08-18 10:00"),
        # A name before a time on the five-minute grid is a person, not a book of the Bible.
        (EN, "Tuesday: call John 10:30", "2026-08-04 10:30"),
        (DE, "Dienstag Johannes 15:30", "2026-08-04 15:30"),
        (EN, "Meeting with Mark at 3:30 on Tuesday", "2026-08-04 15:30"),
    ],
)
def test_everyday_forms_are_read_as_their_counterparts_are(language: Locale, text: str, start: str) -> None:
    assert starts(text, language, MONDAY) == [start]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        # Chapter and verse, written as a clock is: "3:16" after a book is no time on that Tuesday.
        (DE, "Am Dienstag lesen wir Johannes 3:16"),
        (EN, "On Tuesday we read John 3:16"),
        (EN, "John 3:16 on Tuesday"),
        (DE, "Sonntag predigt er über Psalm 23:10"),
        (EN, "Sunday we read 1 John 4:10"),
        (EN, "Sunday we read John 3:16-18"),
        (EN, "Sunday sermon: Luke 2:10-12"),
        # "zu Mittag" is lunch, at no written hour; "bis morgen Mittag" a deadline; "ab" a bound.
        (DE, "Wir essen morgen zu Mittag"),
        (DE, "Bitte bis morgen Mittag zurückschicken"),
        (DE, "Ich bin ab morgen Mittag erreichbar"),
        # "es gab" tells of the past.
        (DE, "Heute Mittag gab es Suppe"),
        (DE, "Heute um 12 Uhr gab es Suppe"),
        # "ish" makes no number a time that would not be one with "around": a count, or English "at 8" (08:00 or
        # 20:00 alike).
        (EN, "Tuesday 10ish people"),
        (EN, "Tuesday at 8ish"),
        (EN, "Tuesday at 8"),
        # An ordinal with no month after it is no day: "zum ersten Mal", "im dritten Quartal".
        (DE, "zum ersten Mal um 9 Uhr"),
        (DE, "im dritten Quartal um 10 Uhr"),
        # A count of days that contradicts the weekday: which one is meant is unclear.
        (DE, "Dienstag um 10 Uhr, d.h. in drei Tagen"),
    ],
)
def test_what_only_looks_like_an_appointment_is_refused(language: Locale, text: str) -> None:
    assert read(text, language, MONDAY) == []
