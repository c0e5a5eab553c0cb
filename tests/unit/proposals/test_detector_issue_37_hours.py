"""Issue 37, times of day: spoken and bare hours, the small hours, clock phrases, and the days written beside
them, with the refusals that stay. Moved out of test_detector_issue_37.py, which shares its helpers, to keep
both files short."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from plmail.domain.enums import Locale
from tests.unit.proposals.test_detector_issue_37 import BERLIN, DE, EN, MONDAY, TUESDAY, read, starts


@pytest.mark.parametrize(
    ("text", "start"),
    [
        # An English time spoken with its minutes: after "at", with am/pm, or right after its day.
        ("Can we talk tomorrow at nine twenty-five?", "2026-08-04 09:25"),
        ("Dinner tomorrow at seven thirty pm?", "2026-08-04 19:30"),
        ("Can we talk Friday at nine thirty?", "2026-08-07 09:30"),
        ("Friday at ten oh five works", "2026-08-07 10:05"),
        ("See you at five-thirty tomorrow evening", "2026-08-04 17:30"),
        ("Let's meet on August twentieth nine thirty.", "2026-08-20 09:30"),
        ("Lunch on Friday at twelve fifteen?", "2026-08-07 12:15"),
        ("Call on August 24th one thirty p m.", "2026-08-24 13:30"),
        # The month in lower case with a spoken ordinal day, when a time follows at once.
        ("Let's meet on march eighteenth nine thirty.", "2027-03-18 09:30"),
        ("We will have that staff dinner march twenty second at seven p . m .", "2027-03-22 19:00"),
        ("Let's meet on august twenty second at 3pm", "2026-08-22 15:00"),
        ("Breakfast on august fifteenth nine a m.", "2026-08-15 09:00"),
    ],
)
def test_spoken_english_times_and_ordinal_days(text: str, start: str) -> None:
    assert starts(text, EN, MONDAY) == [start]


@pytest.mark.parametrize(
    "text",
    [
        "The sun will set tomorrow at seven twenty-seven",  # after "at", 07:27 or 19:27, as "at 7" is
        "Dinner Friday at nine thirty",  # an evening occasion: 21:30 more likely than 09:30
        "The sun will set tomorrow at six forty-three minutes",  # 06:43 or 18:43
        "We had nine thirty people on Friday",  # a count, not right after its day
        "Friday nine thirty-year-olds came",
        "Please reply by nine thirty on Friday",  # a deadline
        "we march fifth avenue at 9am",  # a walk: no time right after "march fifth"
        "you may first check at 9am",  # "may first" is a verb
    ],
)
def test_spoken_english_times_still_refused(text: str) -> None:
    assert starts(text, EN, MONDAY) == []


@pytest.mark.parametrize(
    ("language", "text", "start"),
    [
        # The small hours after an evening are that night's, on the next calendar day.
        (EN, "tonight at 1am", "2026-08-04 01:00"),
        (EN, "I'll go back tonight at 2am", "2026-08-04 02:00"),
        (EN, "Party tonight, at 01:30 the band plays", "2026-08-04 01:30"),
        (DE, "heute Abend um 01:30 Uhr", "2026-08-04 01:30"),
        (EN, "Friday evening at 1am", "2026-08-08 01:00"),
        (EN, "tonight at 11pm", "2026-08-03 23:00"),  # still the evening itself
    ],
)
def test_small_hours_after_tonight_are_the_next_day(language: Locale, text: str, start: str) -> None:
    assert starts(text, language, MONDAY) == [start]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        (EN, "tonight around 3"),  # 03:00 or 15:00: a bare hour says neither
        (EN, "tonight at 2"),
        (DE, "heute Abend um 1 Uhr"),
    ],
)
def test_bare_small_hours_after_tonight_are_refused(language: Locale, text: str) -> None:
    assert starts(text, language, MONDAY) == []


def test_small_hours_of_tonight_written_after_midnight_are_that_same_night() -> None:
    half_past_midnight = datetime(2026, 8, 4, 0, 30, tzinfo=BERLIN)
    assert starts("tonight at 1am", EN, half_past_midnight) == ["2026-08-04 01:00"]
    assert starts("heute Abend um 01:30 Uhr", DE, half_past_midnight) == ["2026-08-04 01:30"]


@pytest.mark.parametrize(
    ("language", "text", "start"),
    [
        # A bare hour given in a zone is a clock reading ("at 8 GMT" is 08:00 GMT, 10:00 in Berlin in summer).
        (EN, "Thu at 8 GMT", "2026-08-06 10:00"),
        (EN, "Friday at 8 UTC", "2026-08-07 10:00"),
        (DE, "Freitag um 8 UTC", "2026-08-07 10:00"),
    ],
)
def test_a_bare_hour_in_a_written_zone_is_read_as_written(language: Locale, text: str, start: str) -> None:
    assert starts(text, language, MONDAY) == [start]


@pytest.mark.parametrize("text", ["Friday at 8", "Dinner on Friday at 8?", "Friday at 6"])
def test_a_bare_english_hour_from_six_to_eight_without_a_zone_stays_refused(text: str) -> None:
    """06:00 or 18:00, 08:00 or 20:00: a breakfast as often as a dinner."""
    assert starts(text, EN, MONDAY) == []


@pytest.mark.parametrize(
    ("language", "text", "start"),
    [
        # A weekday with "this" or with its day of the month, and a time that says am/pm or is 24-hour.
        (EN, "Let's meet this Friday at 5 pm", "2026-08-07 17:00"),
        (DE, "Treffen wir uns diesen Freitag um 17 Uhr", "2026-08-07 17:00"),
        (EN, "Let's meet at friday the 14th at 4pm", "2026-08-14 16:00"),
        (DE, "Freitag, den 14. um 16 Uhr", "2026-08-14 16:00"),
    ],
)
def test_this_weekday_and_weekday_with_its_day_of_the_month(language: Locale, text: str, start: str) -> None:
    assert starts(text, language, MONDAY) == [start]


@pytest.mark.parametrize(
    ("language", "text", "start", "end"),
    [
        # Thunderbird's calExtract reads an hour before its day start, 6, as the afternoon; so does a person
        # reading "Friday at 3": nobody is asked to a meeting at 3 in the night without saying so.
        (DE, "Freitag um 3", "2026-08-07 15:00", None),
        (EN, "Friday at 5", "2026-08-07 17:00", None),
        (DE, "Freitag um 3 Uhr", "2026-08-07 15:00", None),
        (EN, "Call me at 3 tomorrow.", "2026-08-04 15:00", None),
        (DE, "morgen um 4", "2026-08-04 16:00", None),
        (DE, "Mittwoch um ein Uhr", "2026-08-05 13:00", None),
        (EN, "Friday at one thirty", "2026-08-07 13:30", None),
        (DE, "Freitag um drei Uhr dreißig", "2026-08-07 15:30", None),
        (DE, "Freitag um 3:30", "2026-08-07 15:30", None),
        (EN, "Tuesday at 2.30", "2026-08-04 14:30", None),
        (DE, "Freitag halb 3", "2026-08-07 14:30", None),
        (DE, "Freitag um halb 3", "2026-08-07 14:30", None),
        (EN, "quarter to 5 on Friday", "2026-08-07 16:45", None),
        (EN, "Let's meet at friday the 14th at 4", "2026-08-14 16:00", None),
        (EN, "Let's meet at friday the 14th around 4", "2026-08-14 16:00", None),
        (DE, "Freitag, den 14. um 4", "2026-08-14 16:00", None),
        # In a written zone too: "at 5 GMT" is 17:00 GMT, 19:00 in Berlin in summer.
        (EN, "Friday at 5 GMT", "2026-08-07 19:00", None),
        (DE, "Freitag um 5 UTC", "2026-08-07 19:00", None),
        # A window's ends both move: "zwischen 3 und 4 Uhr" is 15:00 to 16:00.
        (DE, "Freitag zwischen 3 und 4 Uhr", "2026-08-07 15:00", "2026-08-07 16:00"),
        (DE, "Freitag zwischen 2 und 4", "2026-08-07 14:00", "2026-08-07 16:00"),
        (EN, "Friday between 2 and 4", "2026-08-07 14:00", "2026-08-07 16:00"),
    ],
)
def test_a_bare_hour_before_six_next_to_its_day_is_the_afternoon(
    language: Locale, text: str, start: str, end: str | None
) -> None:
    one_hour_on = (datetime.strptime(start, "%Y-%m-%d %H:%M") + timedelta(hours=1)).strftime("%Y-%m-%d %H:%M")
    assert read(text, language, MONDAY) == [(start, end or one_hour_on)]  # without an end, the nominal hour


@pytest.mark.parametrize(
    ("language", "text", "start"),
    [
        # What says the night or the early morning keeps it.
        (EN, "Friday at 3am", "2026-08-07 03:00"),
        (DE, "Freitag um 3 Uhr nachts", "2026-08-07 03:00"),
        (EN, "tonight at 1am", "2026-08-04 01:00"),
        (DE, "Freitag um 5:30 Uhr", "2026-08-07 05:30"),  # the German timetable's 05:30: an early train
        (DE, "Freitag um 5 Uhr früh", "2026-08-07 05:00"),
        (DE, "Freitag um 15 Uhr", "2026-08-07 15:00"),
    ],
)
def test_an_hour_before_six_that_says_it_is_the_night_or_the_morning_stays_there(
    language: Locale, text: str, start: str
) -> None:
    assert starts(text, language, MONDAY) == [start]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        (EN, "see you at 5"),  # no day
        (DE, "Es sind um 3 Prozent mehr als Freitag"),  # an amount
        (EN, "Please reply by 3 on Friday"),  # a deadline
        (DE, "Freitag bis 3"),
        (EN, "Friday 3-8"),  # a date (3 August) as often as hours
    ],
)
def test_a_bare_hour_before_six_that_is_no_appointment_stays_unread(language: Locale, text: str) -> None:
    assert starts(text, language, MONDAY) == []


@pytest.mark.parametrize(
    ("text", "start"),
    [
        # German minutes spoken after "Uhr": 8:30, not 8:00 with a word left over.
        ("Freitag um acht Uhr dreißig", "2026-08-07 08:30"),
        ("Freitag um neun Uhr fünfundvierzig", "2026-08-07 09:45"),
        ("Freitag um drei Uhr dreißig nachmittags", "2026-08-07 15:30"),
        ("Freitag um neun Uhr", "2026-08-07 09:00"),
    ],
)
def test_german_minutes_spoken_after_uhr(text: str, start: str) -> None:
    assert starts(text, DE, MONDAY) == [start]


@pytest.mark.parametrize(
    ("language", "text", "start"),
    [
        # "next week" before an abbreviated weekday names that weekday of the week after the message's.
        (EN, "Next week Thu at 10am?", "2026-08-13 10:00"),
        (EN, "Can we schedule a meeting next week Mon 9 am?", "2026-08-10 09:00"),
        (DE, "Treffen wir uns nächste Woche Do um 10 Uhr?", "2026-08-13 10:00"),
        (DE, "Kommende Woche Fr um 14 Uhr?", "2026-08-14 14:00"),
    ],
)
def test_next_week_before_an_abbreviated_weekday(language: Locale, text: str, start: str) -> None:
    assert starts(text, language, TUESDAY) == [start]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        # Alone, an abbreviation is no day; with a year-less numeric date the issue's refusal stands.
        (EN, "Next week Thu?"),
        (DE, "Nächste Woche Do, 13.08. um 10 Uhr?"),
        (DE, "Nächste Woche Do, 13.08.26 um 10 Uhr?"),
    ],
)
def test_next_week_before_an_abbreviated_weekday_refusals(language: Locale, text: str) -> None:
    assert starts(text, language, TUESDAY) == []


@pytest.mark.parametrize(
    ("language", "text", "start"),
    [
        # A time written before its date, with a comma: the "00" of "16:00" is its minutes, not a listed day.
        (EN, "Kick-off 16:00, 23 Oct.", "2026-10-23 16:00"),
        (EN, "Doors open 19:30, Friday 14 May 2027.", "2027-05-14 19:30"),
        (DE, "Beginn 16:00, 23. Oktober.", "2026-10-23 16:00"),
        (DE, "Einlass 19:30, Freitag 14. Mai 2027.", "2027-05-14 19:30"),
    ],
)
def test_a_time_before_its_date(language: Locale, text: str, start: str) -> None:
    assert starts(text, language, TUESDAY) == [start]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        # Two days listed are still two days; a year-less or two-digit-year numeric date is still refused.
        (EN, "Kick-off 22, 23 Oct at 16:00."),
        (DE, "Treffen 22., 23. Oktober um 16 Uhr."),
        (DE, "Beginn 16:00, 23.10."),
        (DE, "Beginn 16:00, 23.10.26"),
        (EN, "Kick-off 16:00, 10/23"),
    ],
)
def test_a_time_before_its_date_refusals(language: Locale, text: str) -> None:
    assert starts(text, language, TUESDAY) == []


@pytest.mark.parametrize(
    ("language", "text", "start"),
    [
        # A weekday and a bare number that can be no hour (13 to 31): the day of the month that is that weekday.
        # 14 August 2026 is a Friday, 21 August too.
        (EN, "Let's meet Friday 14 at 10am", "2026-08-14 10:00"),
        (EN, "i'll go back friday 14 at 4", "2026-08-14 16:00"),
        (EN, "Friday 21, 4pm?", "2026-08-21 16:00"),
        (EN, "Fri 14 at 3pm", "2026-08-14 15:00"),
        (DE, "Freitag 14 um 16 Uhr?", "2026-08-14 16:00"),
        # Not a day of the month: an hour, a range of hours, a count.
        (DE, "Freitag 23 Uhr", "2026-08-07 23:00"),
        (DE, "Freitag 20 bis 22 Uhr", "2026-08-07 20:00"),
        (EN, "Friday 14:00", "2026-08-07 14:00"),
        (EN, "Friday 14 people at 5pm", "2026-08-07 17:00"),
    ],
)
def test_a_weekday_with_a_bare_day_of_the_month(language: Locale, text: str, start: str) -> None:
    assert starts(text, language, MONDAY) == [start]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        (EN, "Friday 15 at 10am"),  # 15 August 2026 is a Saturday: which did the writer mean?
        (DE, "Freitag 15 um 10 Uhr"),
        (EN, "Wed 5 at 10am"),  # 5 may be an hour
        (EN, "Friday 14 alone"),  # a day of the month with no time is no appointment
    ],
)
def test_a_weekday_with_a_bare_number_that_does_not_agree_or_says_too_little_is_refused(
    language: Locale, text: str
) -> None:
    assert starts(text, language, MONDAY) == []


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        # "12am" after a morning start is written for noon: a morning that runs to midnight is no appointment.
        ("book me a meeting room tomorrow from 10am-12am", "2026-08-04 10:00", "2026-08-04 12:00"),
        ("Friday 10-12am", "2026-08-07 10:00", "2026-08-07 12:00"),
        ("Friday from 9am to 12am", "2026-08-07 09:00", "2026-08-07 12:00"),
        # After an evening start it is midnight, as written.
        ("Friday 11pm-12am", "2026-08-07 23:00", "2026-08-08 00:00"),
    ],
)
def test_twelve_am_ending_a_morning_is_noon(text: str, start: str, end: str) -> None:
    assert read(text, EN, MONDAY) == [(start, end)]


@pytest.mark.parametrize(
    ("language", "text", "start"),
    [
        # A clock phrase after "at" reads as "at 10:30" does: nine to eleven is the morning.
        (EN, "See you tomorrow at half past ten", "2026-08-04 10:30"),
        (EN, "Call on Friday at a quarter past eleven?", "2026-08-07 11:15"),
        (EN, "Tomorrow at quarter to ten works for me.", "2026-08-04 09:45"),
        # "um" never left it open: German phrases stay as they were.
        (DE, "Morgen um Viertel nach zehn?", "2026-08-04 10:15"),
        (DE, "Morgen um halb neun?", "2026-08-04 08:30"),
    ],
)
def test_a_clock_phrase_after_at_reads_like_its_digits(language: Locale, text: str, start: str) -> None:
    assert starts(text, language, MONDAY) == [start]


@pytest.mark.parametrize(
    "text",
    [
        "Dinner tomorrow at half past nine?",  # an evening occasion: 09:30 or 21:30
        "Tomorrow at quarter past eight?",  # 08:15 or 20:15, as "at 8" is
        "Drinks on Friday at half past seven",
    ],
)
def test_a_clock_phrase_after_at_that_may_be_the_evening_stays_refused(text: str) -> None:
    assert read(text, EN, MONDAY) == []
