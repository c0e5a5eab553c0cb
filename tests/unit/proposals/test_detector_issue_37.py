"""Issue 37: sentences a person reads as a date and time that the detector used to miss, and the refusals
that stay. Each case is the sentence, the day it was written and the start (and end) a reader expects."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from plmail.calendar.proposals import DetectionRequest, DeterministicDateDetector, EventProposer, Refusal
from plmail.domain.enums import Locale
from tests.unit.proposals.test_proposer import BASELINE

BERLIN = ZoneInfo("Europe/Berlin")
DE, EN = Locale.DE, Locale.EN
MONDAY = datetime(2026, 8, 3, 9, 0, tzinfo=BERLIN)
TUESDAY = datetime(2026, 8, 4, 9, 0, tzinfo=BERLIN)
SATURDAY_EVENING = datetime(2026, 8, 8, 19, 0, tzinfo=BERLIN)
DETECTOR = DeterministicDateDetector()


def read(text: str, language: Locale, sent: datetime) -> list[tuple[str, str]]:
    found = DETECTOR.detect(DetectionRequest(text, "", sent, "Europe/Berlin", language))
    return [(c.start.astimezone(BERLIN).strftime("%Y-%m-%d %H:%M"), c.end.astimezone(BERLIN).strftime("%Y-%m-%d %H:%M"))
            for c in found]  # fmt: skip


def starts(text: str, language: Locale, sent: datetime) -> list[str]:
    return [start for start, _ in read(text, language, sent)]


@pytest.mark.parametrize(
    ("language", "text", "sent", "start"),
    [
        # The message's own weekday, its time already gone when it was written: next week's.
        (DE, "Samstag um 15 Uhr?", SATURDAY_EVENING, "2026-08-15 15:00"),
        (EN, "See you Saturday at 3pm?", SATURDAY_EVENING, "2026-08-15 15:00"),
        # A weekday already past this week is next week's.
        (DE, "Sehen wir uns Montag um 10?", TUESDAY, "2026-08-10 10:00"),
        (EN, "see you Monday at 10", TUESDAY, "2026-08-10 10:00"),
        # A bare hour after a relative day.
        (EN, "tomorrow at 9?", MONDAY, "2026-08-04 09:00"),
        (DE, "morgen um 9?", MONDAY, "2026-08-04 09:00"),
        (EN, "Can we talk tomorrow at 11?", MONDAY, "2026-08-04 11:00"),
    ],
)
def test_weekdays_and_bare_hours_read_as_a_person_would(
    language: Locale, text: str, sent: datetime, start: str
) -> None:
    assert starts(text, language, sent) == [start]


@pytest.mark.parametrize(
    ("language", "text", "sent"),
    [
        # Its own weekday with a time still ahead that evening: today, or a week on? Not said.
        (DE, "Samstag um 21 Uhr?", SATURDAY_EVENING),
        (EN, "See you Saturday at 9pm?", SATURDAY_EVENING),
        # "at 8" is dinner as often as a meeting, and "at 9" is an evening beside one.
        (EN, "tomorrow at 8?", MONDAY),
        (EN, "Dinner tomorrow at 9?", MONDAY),
        (EN, "Drinks on Friday at 10?", MONDAY),
        # A holiday's weekday is not the message's own.
        (EN, "Easter Monday at 10am?", datetime(2026, 8, 3, 19, 0, tzinfo=BERLIN)),
    ],
)
def test_weekdays_and_bare_hours_still_refused(language: Locale, text: str, sent: datetime) -> None:
    assert read(text, language, sent) == []


@pytest.mark.parametrize(
    ("language", "text"),
    [(DE, "Heute 17 Uhr?"), (EN, "today 5PM?"), (DE, "Heute um 17 Uhr?"), (EN, "Today at 5 pm?")],
)
def test_today_with_a_time_is_offered_when_written_before_it_and_past_after(language: Locale, text: str) -> None:
    morning = dataclasses.replace(BASELINE, body_text=text, language=language,
                                  message_date=datetime(2026, 8, 3, 10, 0, tzinfo=BERLIN))  # fmt: skip
    decision = EventProposer().decide(morning)
    assert [p.start.astimezone(BERLIN).strftime("%Y-%m-%d %H:%M") for p in decision.proposals] == [
        "2026-08-03 17:00"
    ]
    evening = dataclasses.replace(morning, message_date=datetime(2026, 8, 3, 18, 0, tzinfo=BERLIN))
    assert EventProposer().decide(evening).refusals() == (Refusal.PAST,)


@pytest.mark.parametrize(
    ("language", "text", "start", "end"),
    [
        # A range of days with one time starts on its first day at that time and ends on its last.
        (EN, "Workshop 22-23 Feb at 7pm", "2027-02-22 19:00", "2027-02-23 20:00"),
        (EN, "Workshop Feb 22-23 at 7pm", "2027-02-22 19:00", "2027-02-23 20:00"),
        (EN, "Workshop 22nd-23rd February 2027 at 7pm", "2027-02-22 19:00", "2027-02-23 20:00"),
        (DE, "Tagung 26.–28. Oktober, 11 Uhr", "2026-10-26 11:00", "2026-10-28 12:00"),
        (DE, "Tagung 26. bis 28. Oktober um 11 Uhr", "2026-10-26 11:00", "2026-10-28 12:00"),
        (DE, "Wir treffen uns vom 26. bis 28. Oktober, jeweils um 11 Uhr", "2026-10-26 11:00", "2026-10-28 12:00"),
        (EN, "We meet from 22-23 Feb at 7pm", "2027-02-22 19:00", "2027-02-23 20:00"),
        (DE, "Kurs am 22.-23.10.2026 um 19 Uhr", "2026-10-22 19:00", "2026-10-23 20:00"),
        (EN, "Course on 22.-23.10.2026 at 19:00", "2026-10-22 19:00", "2026-10-23 20:00"),
        (DE, "Kurs 06.09.-07.09.2026 19:40 Uhr", "2026-09-06 19:40", "2026-09-07 20:40"),
        (EN, "Course 06.09.-07.09.2026 at 19:40", "2026-09-06 19:40", "2026-09-07 20:40"),
        # A day with its time to a later date: it ends with the last day.
        (DE, "Montag, den 10.08.2026 ca. 14:00 Uhr bis zum 14.08.2026", "2026-08-10 14:00", "2026-08-15 00:00"),
        (EN, "from Monday, August 10 at 2pm to August 14", "2026-08-10 14:00", "2026-08-15 00:00"),
    ],
)
def test_ranges_of_days_with_a_time(language: Locale, text: str, start: str, end: str) -> None:
    assert read(text, language, MONDAY) == [(start, end)]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        (DE, "Tagung 26.–28. Oktober"),  # a range without a time is a stay or a season, not an all-day event
        (EN, "Workshop 22-23 Feb"),
        (DE, "Tagung 1.–20. Oktober, 11 Uhr"),  # weeks long: not one event
        (DE, "Anmeldung bis 26.–28. Oktober um 11 Uhr"),  # a bound, not the event's days
        (EN, "Register by 22-23 Feb at 7pm"),
        (EN, "Workshop 23-22 Feb at 7pm"),  # backwards
        (DE, "Kurs 30.–31. Februar um 10 Uhr"),  # no such day
        (DE, "Montag, den 10.08.2026 ca. 14:00 Uhr bis zum 30.09.2026"),  # seven weeks
    ],
)
def test_ranges_of_days_refused(language: Locale, text: str) -> None:
    assert read(text, language, MONDAY) == []


@pytest.mark.parametrize(
    ("language", "text", "start", "end"),
    [
        # US month-first in English mail, with its time, glued or not.
        (EN, "Call on 08/31/2026 14:15", "2026-08-31 14:15", "2026-08-31 15:15"),
        (EN, "Call on 08/31/2026.14:15", "2026-08-31 14:15", "2026-08-31 15:15"),
        (EN, "from 08/21/2026 10:00 to 08/21/2026 12:00", "2026-08-21 10:00", "2026-08-21 12:00"),
        (DE, "vom 21.08.2026 10:00 bis 21.08.2026 12:00", "2026-08-21 10:00", "2026-08-21 12:00"),
        # A machine-written moment, ctime(3)'s shape: the year after the time.
        (EN, "Start: Thu Aug 27 11:00:09 2026", "2026-08-27 11:00", "2026-08-27 12:00"),
        (DE, "Termin: Thu Aug 27 11:00:09 2026", "2026-08-27 11:00", "2026-08-27 12:00"),
        # Dots with a full year are D.M.Y in English mail too; American mail writes slashes.
        (EN, "Meet on 10.11.2026 at around 12:30?", "2026-11-10 12:30", "2026-11-10 13:30"),
        # With its full year, a weekday that agrees is no obstacle to the day-first reading.
        (EN, "Monday 15/06/2026 at 10:00", "2026-06-15 10:00", "2026-06-15 11:00"),
    ],
)
def test_numeric_dates_with_a_time(language: Locale, text: str, start: str, end: str) -> None:
    sent = datetime(2026, 6, 1, 9, 0, tzinfo=BERLIN) if "15/06" in text else MONDAY
    assert read(text, language, sent) == [(start, end)]


def test_a_weekday_that_agrees_lets_a_year_less_date_lie_further_ahead() -> None:
    march = datetime(2026, 3, 4, 9, 0, tzinfo=BERLIN)  # 16 November is 257 days on
    assert starts("Mon, Nov 16 at 2pm", EN, march) == ["2026-11-16 14:00"]
    assert starts("Montag, 16. November um 14 Uhr", DE, march) == ["2026-11-16 14:00"]
    assert starts("Nov 16 at 2pm", EN, march) == []
    assert starts("16. November um 14 Uhr", DE, march) == []
    assert starts("Tue, Nov 16 at 2pm", EN, march) == []  # the weekday disagrees


@pytest.mark.parametrize(
    ("language", "text", "sent", "start"),
    [
        # Written twelve days after it: the day just past, not next year's.
        (EN, "Feb 14 at 10am", datetime(2027, 2, 26, 9, 0, tzinfo=BERLIN), "2027-02-14 10:00"),
        (DE, "14. Februar um 10 Uhr", datetime(2027, 2, 26, 9, 0, tzinfo=BERLIN), "2027-02-14 10:00"),
        # Written four months before it: ahead, into the next year.
        (EN, "March 18 at 10am", datetime(2026, 11, 20, 9, 0, tzinfo=BERLIN), "2027-03-18 10:00"),
        (DE, "18. März um 10 Uhr", datetime(2026, 11, 20, 9, 0, tzinfo=BERLIN), "2027-03-18 10:00"),
        # A weekday that agrees names the year behind too: 13 November 2023 was a Monday, 2024's a Wednesday.
        (EN, "Mon, Nov 13 at 10am", datetime(2023, 11, 20, 9, 0, tzinfo=BERLIN), "2023-11-13 10:00"),
        (DE, "Montag, 13. November um 10 Uhr", datetime(2023, 11, 20, 9, 0, tzinfo=BERLIN), "2023-11-13 10:00"),
    ],
)
def test_a_year_less_date_is_its_nearest_occurrence(language: Locale, text: str, sent: datetime, start: str) -> None:
    assert starts(text, language, sent) == [start]


@pytest.mark.parametrize(("language", "text"), [(EN, "Feb 14 at 10am"), (DE, "14. Februar um 10 Uhr")])
def test_a_year_less_date_just_past_is_read_but_not_offered(language: Locale, text: str) -> None:
    late_february = dataclasses.replace(BASELINE, body_text=text, language=language,
                                        message_date=datetime(2027, 2, 26, 9, 0, tzinfo=BERLIN))  # fmt: skip
    assert EventProposer().decide(late_february).refusals() == (Refusal.PAST,)


@pytest.mark.parametrize(("language", "text"), [(EN, "May 1 at 10am"), (DE, "1. Mai um 10 Uhr")])
def test_a_year_less_date_months_behind_and_far_ahead_is_refused(language: Locale, text: str) -> None:
    # 1 May is 111 days behind 20 August and 254 ahead: a report about the past, or next year's? Not said.
    assert starts(text, language, datetime(2026, 8, 20, 9, 0, tzinfo=BERLIN)) == []


@pytest.mark.parametrize(
    ("language", "text", "sent"),
    [
        (EN, "Start: Fri Aug 27 11:00:09 2026", MONDAY),  # the weekday disagrees with the date
        (EN, "Date: Thu Aug 27 11:00:09 2026", MONDAY),  # a "Date:" line says when something was written
        (EN, "Call on 08/31/26.14:15", MONDAY),  # a glued time only after a full year
        (EN, "Meet on 04.08.26 at 10:00", datetime(2026, 3, 2, 9, 0, tzinfo=BERLIN)),  # 8 April or 4 August?
        (EN, "Meet on 04.08 at 10:00", datetime(2026, 3, 2, 9, 0, tzinfo=BERLIN)),  # year-less without its dot
        (EN, "Tuesday 15/06 at 10:00", datetime(2026, 6, 1, 9, 0, tzinfo=BERLIN)),  # 15 June is a Monday
        (EN, "Tuesday 15/06/2026 at 10:00", datetime(2026, 6, 1, 9, 0, tzinfo=BERLIN)),  # its year changes nothing
        (EN, "on 15/06 at 10:00", datetime(2026, 6, 1, 9, 0, tzinfo=BERLIN)),  # no 15th month, no weekday to say
        (DE, "Termin 04.08.26", datetime(2026, 3, 2, 9, 0, tzinfo=BERLIN)),  # alone, a bare numeric shape
        (DE, "Meeting 04.08.", datetime(2026, 3, 2, 9, 0, tzinfo=BERLIN)),
    ],
)
def test_numeric_dates_still_refused(language: Locale, text: str, sent: datetime) -> None:
    assert read(text, language, sent) == []


# The issue keeps the predecessor's refusal: a numeric date without its four-digit year ("04.08.", "04.08.26",
# "8/4") is too ambiguous to offer as fact. Each shape is refused beside the same sentence with its full year,
# which is offered, so the refusal is the year's doing and not the sentence's. The year-less sentences that other
# tests here and in test_detector_grammar.py / test_ends_and_places.py / test_detector.py pinned as offered
# before the issue (and now write with their full year) are refused here too.
YEAR_LESS_REFUSED = [
    (DE, "Termin am 04.08. um 10 Uhr"),
    (DE, "Termin am 04.08.26 um 10 Uhr"),
    (DE, "Termin am 4.8.26 um 10 Uhr"),
    (DE, "Am 4.8. um 10"),
    (DE, "Termin am 4/8 um 10 Uhr"),
    (DE, "Termin am 4/8/26 um 10 Uhr"),
    (DE, "Kurs am 22.-23.10. um 19 Uhr"),
    (EN, "Meeting on 4.8. at 10am"),
    (EN, "Meeting on 04.08.26 at 10am"),
    (EN, "Meeting on 8/4 at 10am"),
    (EN, "Meeting on 8/4/26 at 10am"),
    (EN, "Course on 22.-23.10. at 19:00"),
    # Formerly offered by other tests, which now write the year.
    (DE, "Am 12.8. um 1430 Uhr"),
    (DE, "Am 12.8. 1845-1955"),
    (DE, "Mi 12.08. 09:30"),
    (DE, "Am 12.8. 6:10 - 13:35"),
    (DE, "Am 12.8. 20-21"),
    (DE, "Am Montag, 10.8., 5:45 Uhr am Bahnhof"),
    (DE, "Hinflug 09.08. 14:15WAW"),
    (EN, "Monday 15/06 at 10:00"),
    (DE, "Ankunft am 27.08. um 07:35 +1."),
    (DE, "Flug am 27.08. 23:10 - 06:05+1"),
    (DE, "Am 27.08. um 14 Uhr +1 Gast"),
    (DE, "Am 12.8. 0930-1045"),
    (DE, "Am 12.8. 2205-0455"),
    (DE, "Wir sind vom 22.08. 15:00 Uhr bis 24.08. 11:00 Uhr dort."),
    (DE, "Am 12.8. zwischen 9 und 11"),
    (DE, "Am 26.08. zwischen 09.00 - 13.00 Uhr"),
    (DE, "Am 12.3. um 9 Uhr?"),
    (DE, "Am 5.8. um 14 Uhr?"),
    (DE, "Morgen, Dienstag, den 4.8. um 10 Uhr?"),
    (DE, "am 4/8 um 10 Uhr"),
    (EN, "on 4/8 at 10:00"),
    (DE, "Lass uns am 12.8. essen gehen."),
    (DE, "Am 7.8. um 10 Uhr"),
]


@pytest.mark.parametrize(("language", "text"), YEAR_LESS_REFUSED)
def test_numeric_dates_without_their_full_year_are_refused(language: Locale, text: str) -> None:
    sent = datetime(2026, 6, 1, 9, 0, tzinfo=BERLIN) if "15/06" in text else MONDAY
    assert read(text, language, sent) == []


@pytest.mark.parametrize(
    ("language", "text", "start", "end"),
    [
        (DE, "Termin am 04.08.2026 um 10 Uhr", "2026-08-04 10:00", "2026-08-04 11:00"),
        (DE, "Am 4.8.2026 um 10", "2026-08-04 10:00", "2026-08-04 11:00"),
        (DE, "Termin am 4/8/2026 um 10 Uhr", "2026-08-04 10:00", "2026-08-04 11:00"),
        (DE, "Kurs am 22.-23.10.2026 um 19 Uhr", "2026-10-22 19:00", "2026-10-23 20:00"),
        (EN, "Meeting on 04.08.2026 at 10am", "2026-08-04 10:00", "2026-08-04 11:00"),
        (EN, "Meeting on 8/4/2026 at 10am", "2026-08-04 10:00", "2026-08-04 11:00"),
        (EN, "Course on 22.-23.10.2026 at 19:00", "2026-10-22 19:00", "2026-10-23 20:00"),
    ],
)
def test_the_same_numeric_dates_with_their_full_year_are_offered(
    language: Locale, text: str, start: str, end: str
) -> None:
    assert read(text, language, MONDAY) == [(start, end)]


@pytest.mark.parametrize(
    ("language", "text", "start"),
    [
        # A zone named by its place or region is that place's clock, summer time included (IANA's zones), shown
        # in the user's (Berlin, UTC+2 in August): Singapore is UTC+8, New York UTC-4, Chicago UTC-5, Los
        # Angeles UTC-7, London UTC+1.
        (EN, "Friday at 12PM Singapore time?", "2026-08-07 06:00"),
        (EN, "Friday at 5pm New York time?", "2026-08-07 23:00"),
        (EN, "Wednesday at 7 PM Eastern.", "2026-08-06 01:00"),
        (EN, "Can we talk Thursday around 3pm pacific?", "2026-08-07 00:00"),
        (EN, "Friday at 9am Pacific Time", "2026-08-07 18:00"),
        (EN, "Friday at 5pm central time for us?", "2026-08-08 00:00"),
        (EN, "Friday 3pm (London time)", "2026-08-07 16:00"),
        (EN, "Friday at seven p m Pacific", "2026-08-08 04:00"),
        (DE, "Freitag um 14 Uhr New Yorker Zeit?", "2026-08-07 20:00"),
        (DE, "Freitag um 14 Uhr Londoner Zeit?", "2026-08-07 15:00"),
        (DE, "Freitag um 14 Uhr Singapur-Zeit?", "2026-08-07 08:00"),
    ],
)
def test_a_time_in_a_zone_named_by_its_place_is_read_in_that_place(language: Locale, text: str, start: str) -> None:
    assert starts(text, language, MONDAY) == [start]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        # A place we do not know, or a "local time" that does not say whose: read in the user's zone it would be
        # hours off.
        (EN, "Friday at 5pm Mars time?"),
        (DE, "Freitag um 14 Uhr Kabuler Zeit?"),
        (DE, "Freitag um 14 Uhr Kabul-Zeit?"),
        (EN, "Friday at 2pm local time"),
        (EN, "Friday at 3pm your time"),
        (DE, "Freitag um 14 Uhr Ortszeit"),
        (DE, "Freitag um 14 Uhr Ihrer Zeit"),
        # Whose clock "my", "our" or the informal "your" is, the message does not say in a way we can place.
        (EN, "Friday at 2pm my time"),
        (EN, "Friday at 2pm our time"),
        (DE, "Freitag um 14 Uhr meiner Zeit"),
        (DE, "Freitag um 14 Uhr unserer Zeit"),
        (DE, "Freitag um 14 Uhr eurer Zeit"),
        (DE, "Freitag um 14 Uhr deiner Zeit"),
    ],
)
def test_a_time_in_a_zone_we_cannot_place_is_refused(language: Locale, text: str) -> None:
    assert read(text, language, MONDAY) == []


def test_a_place_after_the_time_is_no_zone() -> None:
    assert starts("Shall we meet Friday at 5pm at Central Station?", EN, MONDAY) == ["2026-08-07 17:00"]
    assert starts("Friday at 5pm Central Station?", EN, MONDAY) == ["2026-08-07 17:00"]
    assert starts("Treffen wir uns Freitag um 17 Uhr am Hauptbahnhof?", DE, MONDAY) == ["2026-08-07 17:00"]


@pytest.mark.parametrize(
    ("language", "text", "start"),
    [
        # A zone abbreviation with one meaning is converted, where its region keeps that time on the day.
        (EN, "Call on Friday at 3pm BST?", "2026-08-07 16:00"),  # London in summer, UTC+1
        (DE, "Telefonat Freitag um 15 Uhr BST?", "2026-08-07 16:00"),
        (EN, "Call on Friday at 10am JST?", "2026-08-07 03:00"),  # Tokyo, UTC+9
        (DE, "Freitag um 9 Uhr MSK?", "2026-08-07 08:00"),  # Moscow, UTC+3
        (EN, "Call on Friday at 3pm AEST?", "2026-08-07 07:00"),  # Sydney in its winter, UTC+10
    ],
)
def test_zones_with_one_meaning_are_converted(language: Locale, text: str, start: str) -> None:
    assert starts(text, language, MONDAY) == [start]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        (EN, "Call on Monday 7 December at 3pm BST?"),  # London is on GMT in December: which one was meant?
        (EN, "Call on Friday at 3pm AEDT?"),  # Sydney is on AEST in August
        (EN, "Call on Monday 11 January at 3pm ACST?"),  # Adelaide is on ACDT in January
        (DE, "Freitag um 15 Uhr IST?"),  # India's, Ireland's or Israel's
    ],
)
def test_zones_that_disagree_with_their_region_or_have_many_meanings_are_refused(language: Locale, text: str) -> None:
    assert read(text, language, MONDAY) == []


def test_a_slash_date_with_its_full_year_and_a_day_over_12_is_day_first_in_english_too() -> None:
    assert read("Dinner on 14/12/2026 6:00PM?", EN, MONDAY) == [("2026-12-14 18:00", "2026-12-14 19:00")]
    assert read("Dinner on 14/12 at 6:00PM?", EN, MONDAY) == []  # without its year, still refused
    assert read("Dinner on 14/12/26 6:00PM?", EN, MONDAY) == []  # a two-digit year, still refused
    assert read("Dinner on 12/11/2026 6:00PM?", EN, MONDAY) == [("2026-12-11 18:00", "2026-12-11 19:00")]  # M/D/Y
    assert read("Essen am 14/12/2026 um 18 Uhr?", DE, MONDAY) == [("2026-12-14 18:00", "2026-12-14 19:00")]


@pytest.mark.parametrize(
    ("language", "text", "start", "end"),
    [
        # A timetable's "+1" puts the time on the day after the date written.
        (EN, "Flight Thu, Aug 27 07:35+1 - 09:55+1", "2026-08-28 07:35", "2026-08-28 09:55"),
        (DE, "Flug Do., 27. Aug. 07:35+1 - 09:55+1", "2026-08-28 07:35", "2026-08-28 09:55"),
        (EN, "Flight Mon, Aug 24 3:40 AM+1 - 8:50 AM+1", "2026-08-25 03:40", "2026-08-25 08:50"),
        (DE, "Ankunft am 27.08.2026 um 07:35 +1.", "2026-08-28 07:35", "2026-08-28 08:35"),
        (DE, "Flug am 27.08.2026 23:10 - 06:05+1", "2026-08-27 23:10", "2026-08-28 06:05"),  # only the end: next day
        (DE, "Am 27.08.2026 um 14 Uhr +1 Gast", "2026-08-27 14:00", "2026-08-27 15:00"),  # a guest, not a day
    ],
)
def test_a_timetables_plus_one_is_the_next_day(language: Locale, text: str, start: str, end: str) -> None:
    assert read(text, language, MONDAY) == [(start, end)]


@pytest.mark.parametrize(
    ("language", "text", "start", "end"),
    [
        # The nth weekday of next (or this) month, its time written before "of next month" or after it. Written on
        # Monday 3 August 2026: September's first Monday is the 7th, August's third Friday the 21st.
        (EN, "Can you set something up for the first Monday 1pm to 3pm of next month?", "2026-09-07 13:00",
         "2026-09-07 15:00"),
        (DE, "Kannst du am ersten Montag im nächsten Monat von 13 bis 15 Uhr etwas einrichten?", "2026-09-07 13:00",
         "2026-09-07 15:00"),
        (EN, "Let's meet the first Monday of next month at 2pm", "2026-09-07 14:00", "2026-09-07 15:00"),
        (DE, "Treffen am ersten Montag des nächsten Monats um 14 Uhr", "2026-09-07 14:00", "2026-09-07 15:00"),
        (EN, "Let's meet the third Friday of this month at 10am", "2026-08-21 10:00", "2026-08-21 11:00"),
        (DE, "Treffen am dritten Freitag in diesem Monat um 10 Uhr", "2026-08-21 10:00", "2026-08-21 11:00"),
    ],
)
def test_the_nth_weekday_of_next_month(language: Locale, text: str, start: str, end: str) -> None:
    assert read(text, language, MONDAY) == [(start, end)]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        (EN, "Let's meet the fifth Monday of next month at 2pm"),  # September 2026 has four Mondays
        (EN, "Let's meet the first Monday 1pm to 3pm"),  # which month's first Monday? Not said
        (DE, "Treffen am ersten Montag um 14 Uhr"),
        (EN, "Let's meet the first Monday of next month"),  # a weekday without a time names no appointment
        (DE, "Treffen am ersten Montag im nächsten Monat"),
        (EN, "We met the first Monday of last month at 2pm"),  # the past
        (EN, "The first Monday 9 am or 1 pm of next month?"),  # two times to choose from
        (DE, "Am ersten Montag im nächsten Monat um 9 oder 13 Uhr?"),
    ],
)
def test_the_nth_weekday_of_a_month_refusals(language: Locale, text: str) -> None:
    assert read(text, language, MONDAY) == []


@pytest.mark.parametrize(
    ("language", "text", "start", "end"),
    [
        # Each end's time written before its day, with a comma, and one zone after the whole span for both ends:
        # 16:00 at UTC+8 is 08:00 UTC, 10:00 in Berlin (UTC+2 in September); 22:00 at UTC+8 is 16:00 in Berlin.
        (EN, "The event is scheduled 16:00, 23 Sep - 22:00, 27 September (UTC+8)", "2026-09-23 10:00",
         "2026-09-27 16:00"),
        (DE, "Die Veranstaltung ist angesetzt 16:00 Uhr, 23. September – 22:00 Uhr, 27. September (UTC+8)",
         "2026-09-23 10:00", "2026-09-27 16:00"),
        (EN, "Conference 16:00, 23 Sep - 12:00, 25 Sep", "2026-09-23 16:00", "2026-09-25 12:00"),
        (DE, "Tagung 16:00, 23. September – 12:00, 25. September", "2026-09-23 16:00", "2026-09-25 12:00"),
        # One day: the zone after it is its time's.
        (EN, "Kick-off 16:00, 23 Sep (UTC+8)", "2026-09-23 10:00", "2026-09-23 11:00"),
        (DE, "Beginn 16:00, 23. September (UTC+8)", "2026-09-23 10:00", "2026-09-23 11:00"),
    ],
)
def test_a_span_whose_times_are_written_before_their_days(language: Locale, text: str, start: str, end: str) -> None:
    assert read(text, language, TUESDAY) == [(start, end)]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        (EN, "The event is scheduled 16:00, 23 Sep - 22:00, 27 September (IST)"),  # India's, Ireland's or Israel's
        (EN, "Kick-off 16:00, 23 Sep IST"),
        (EN, "The event is scheduled 16:00, 1 Sep - 22:00, 27 September"),  # weeks long: a season, not an event
        (EN, "Register by 16:00, 23 Sep - 22:00, 27 Sep"),  # a deadline
        (DE, "Anmeldung bis 16:00, 23. September – 22:00, 27. September"),
        (DE, "Tagung 16:00, 23.09. – 22:00, 27.09."),  # year-less numeric dates
        (EN, "Conference 16:00, 9/23 - 22:00, 9/27"),
    ],
)
def test_a_span_whose_times_are_written_before_their_days_refusals(language: Locale, text: str) -> None:
    assert read(text, language, TUESDAY) == []


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        # A month's name, a slash and a day, with the weekday that agrees (22 September 2026 is a Tuesday), and a
        # time glued to it with a dash. PT is Pacific time in its season: PDT, UTC-7, in September, so 11:30 there
        # is 18:30 UTC, 20:30 in Berlin.
        ("I'll leave on Sep/22(Tue)-11:30 AM PT.", "2026-09-22 20:30", "2026-09-22 21:30"),
        ("I'll leave on Tue, Sep/22 at 11:30 AM", "2026-09-22 11:30", "2026-09-22 12:30"),
        ("Flight Sep/22(Tue)-11:30-13:30", "2026-09-22 11:30", "2026-09-22 13:30"),
    ],
)
def test_a_month_slash_day_with_its_weekday(text: str, start: str, end: str) -> None:
    assert read(text, EN, TUESDAY) == [(start, end)]


@pytest.mark.parametrize(
    "text",
    [
        "I'll leave on Sep/22 at 11:30 AM",  # no weekday: September 2022 as often as the 22nd
        "I'll leave on Sep/22(Wed)-11:30 AM PT.",  # 22 September 2026 is a Tuesday
        "I'll leave on Sep/22(Tue)-11:30 AM PST.",  # Pacific time is on PDT in September: which was meant?
        "Sep/22(Tue) works for me",  # a day without a time
    ],
)
def test_a_month_slash_day_refusals(text: str) -> None:
    assert read(text, EN, TUESDAY) == []


END_OF_MAY = datetime(2026, 5, 31, 9, 0, tzinfo=BERLIN)  # 14 February is 106 days behind, 259 ahead


@pytest.mark.parametrize(
    ("language", "text", "start", "end"),
    [
        # A request to book cannot be about the past: a year-less date too far behind and too far ahead to be the
        # nearest one is the next, with the length written as its end.
        (EN, "Book meeting room on 14th Feb for 7 hours from 9:30am", "2027-02-14 09:30", "2027-02-14 16:30"),
        (EN, "Book meeting room on 14th Feb from 9:30am for 7 hours", "2027-02-14 09:30", "2027-02-14 16:30"),
        (DE, "Bitte buche den Besprechungsraum am 14. Februar um 9:30 Uhr für 7 Stunden.", "2027-02-14 09:30",
         "2027-02-14 16:30"),
        (DE, "Kannst du den Raum am 14. Februar von 9:30 Uhr an für 7 Stunden reservieren?", "2027-02-14 09:30",
         "2027-02-14 16:30"),
        (EN, "Could you please schedule the review on Feb 14 at 2pm?", "2027-02-14 14:00", "2027-02-14 15:00"),
    ],
)
def test_a_request_to_book_a_year_less_date_months_behind_is_the_next_one(
    language: Locale, text: str, start: str, end: str
) -> None:
    assert read(text, language, END_OF_MAY) == [(start, end)]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        (EN, "Meeting room on 14th Feb for 7 hours from 9:30am"),  # no request: last February's or next? Not said
        (DE, "Besprechungsraum am 14. Februar um 9:30 Uhr für 7 Stunden."),
        (EN, "I booked the meeting room on 14th Feb from 9:30am"),  # a report, not a request
        (EN, "Did you book the meeting room on 14th Feb from 9:30am?"),
        (EN, "Book meeting room on 14/02 from 9:30am"),  # a year-less numeric date
        (DE, "Bitte buche den Raum am 14.02. um 9:30 Uhr"),
        (EN, "Book meeting room on 14th Feb by 2pm"),  # a deadline
        (DE, "Bitte bis 14 Uhr am 14. Februar buchen"),
        (EN, "Book meeting room on 14th Feb at 9am or 1pm"),  # two times to choose from
    ],
)
def test_a_request_to_book_refusals(language: Locale, text: str) -> None:
    assert read(text, language, END_OF_MAY) == []


@pytest.mark.parametrize(
    ("language", "text"),
    [
        # Past-tense wording asks about a 12th gone by, which the proposer would refuse as past; the next 12th
        # would contradict it. A day of the month in a report about the past stays unread.
        (EN, "Where were you the 12th between 0730-0930"),
        (DE, "Wo warst du am 12. zwischen 7:30 und 9:30 Uhr?"),
        (EN, "Where were you on Friday the 14th at 10am?"),
    ],
)
def test_a_day_of_the_month_in_a_question_about_the_past_stays_unread(language: Locale, text: str) -> None:
    assert read(text, language, MONDAY) == []

