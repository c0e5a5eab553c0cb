"""An hour written as a word without "Uhr" or am/pm ("um drei", "at three"), read as its digits are; a German
"am" after a time ("18 Uhr am Bahnhof"), which is a place, not a.m.; and Outlook's zone labels ("(UTC+01:00)
Amsterdam, Berlin, …"). Shares the helpers of test_detector_issue_37.py."""

from __future__ import annotations

import pytest

from plmail.domain.enums import Locale
from tests.unit.proposals.test_detector_issue_37 import DE, EN, MONDAY, read, starts


@pytest.mark.parametrize(
    ("language", "text", "start"),
    [
        # Written on Monday 3 August 2026. An hour before six is the afternoon, as "um 3" is.
        (DE, "Hast du Dienstag Nachmittag um drei Zeit?", "2026-08-04 15:00"),
        (DE, "morgen um drei?", "2026-08-04 15:00"),
        (EN, "tomorrow at three?", "2026-08-04 15:00"),
        (EN, "I can meet at three on Friday", "2026-08-07 15:00"),
        (EN, "See you Friday at four.", "2026-08-07 16:00"),
        (DE, "Freitag um eins", "2026-08-07 13:00"),
        (DE, "Am Freitag um zwölf?", "2026-08-07 12:00"),
        # A part of the day says which half.
        (DE, "Freitag abends um sieben", "2026-08-07 19:00"),
        (EN, "Friday at seven in the evening", "2026-08-07 19:00"),
        # Nine to eleven are the morning, as "at 10" is.
        (EN, "Friday at ten?", "2026-08-07 10:00"),
        (DE, "Freitag um zehn?", "2026-08-07 10:00"),
        # A verb of change elsewhere does not make a written "Uhr" an amount.
        (DE, "Wir verlängern das Meeting am Freitag um 15 Uhr.", "2026-08-07 15:00"),
    ],
)
def test_a_bare_hour_word_is_read_as_its_digits(language: Locale, text: str, start: str) -> None:
    assert starts(text, language, MONDAY) == [start]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        # Six to eight without a part of the day: dinner as often as breakfast.
        (DE, "Kommst du morgen zum Essen um sieben?"),
        (EN, "Dinner on Friday at eight?"),
        # Counts, amounts and idioms.
        (EN, "We met at three locations on Friday"),
        (DE, "Die Preise steigen am Freitag um drei Prozent"),
        (EN, "At one point on Friday we lost power"),
        (DE, "Er denkt am Freitag um drei Ecken"),
        # German "um" is also "by": beside a verb of change a bare "um 3" is an amount.
        (DE, "Die Zahl stieg am Freitag um drei."),
        (DE, "Die Zahl stieg am Freitag um 3."),
        (DE, "Wir erhöhen am Freitag um drei."),
    ],
)
def test_a_bare_hour_word_that_is_no_time_or_no_clear_half_stays_unread(language: Locale, text: str) -> None:
    assert starts(text, language, MONDAY) == []


@pytest.mark.parametrize(
    ("text", "start"),
    [
        ("Treffpunkt: Freitag 18 Uhr am Bahnhof", "2026-08-07 18:00"),
        ("Freitag 18:00 am Haupteingang", "2026-08-07 18:00"),
        ("Freitag 9 Uhr am Eingang", "2026-08-07 09:00"),
    ],
)
def test_am_after_uhr_or_an_hour_past_twelve_is_a_place(text: str, start: str) -> None:
    assert starts(text, DE, MONDAY) == [start]


def test_am_after_an_english_hour_is_still_the_morning() -> None:
    assert starts("Friday 9 am at the door", EN, MONDAY) == ["2026-08-07 09:00"]


@pytest.mark.parametrize(
    ("language", "text", "start"),
    [
        # Outlook's label gives the zone's standard offset all year; in August Berlin is UTC+2, New York UTC-4.
        (EN, "When: Friday, August 7, 2026 7:00 PM-8:00 PM (UTC+01:00) Amsterdam, Berlin, Bern, Rome, Stockholm, "
             "Vienna", "2026-08-07 19:00"),
        (DE, "Wann: Freitag, 7. August 2026 19:00-20:00 (UTC+01:00) Amsterdam, Berlin, Bern, Rom, Stockholm, Wien",
         "2026-08-07 19:00"),
        (EN, "When: Friday, August 7, 2026 10:00 AM-11:00 AM (UTC-05:00) Eastern Time (US & Canada)",
         "2026-08-07 16:00"),
        # A bare offset is read as written.
        (EN, "Friday, August 7, 2026 at 7pm (UTC+2)", "2026-08-07 19:00"),
    ],
)
def test_a_windows_zone_label_is_its_place_summer_time_included(language: Locale, text: str, start: str) -> None:
    assert starts(text, language, MONDAY) == [start]


def test_a_windows_zone_label_of_a_place_we_do_not_know_refuses_the_time() -> None:
    text = "When: Friday, August 7, 2026 7:00 PM-8:00 PM (UTC+03:00) Kuwait, Riyadh"
    assert starts(text, EN, MONDAY) == []  # its offset may be standard time only: an hour off is worse than nothing


@pytest.mark.parametrize(
    ("text", "start"),
    [
        ("August the 6th at 2pm", "2026-08-06 14:00"),
        ("On Thursday, August the 6th at 2pm", "2026-08-06 14:00"),
        ("noon tomorrow", "2026-08-04 12:00"),  # noon before its day, as after it ("tomorrow noon")
        ("noon on Friday", "2026-08-07 12:00"),
    ],
)
def test_a_month_the_ordinal_and_a_noon_before_its_day(text: str, start: str) -> None:
    assert starts(text, EN, MONDAY) == [start]


@pytest.mark.parametrize(
    "text",
    [
        "May the 4th be with you.",  # "the" makes a date only beside a time
        "Let us meet August the 6th.",
        "Please send it by noon tomorrow.",  # a deadline
        "We took the noon train.",
    ],
)
def test_a_month_the_ordinal_or_a_noon_that_is_no_appointment(text: str) -> None:
    assert starts(text, EN, MONDAY) == []


@pytest.mark.parametrize(
    ("language", "text", "start", "end"),
    [
        # Noon as a span's end makes its start the morning.
        (EN, "I'm around Friday from 10 till noon.", "2026-08-07 10:00", "2026-08-07 12:00"),
        (EN, "Friday 10am to noon", "2026-08-07 10:00", "2026-08-07 12:00"),
        (DE, "Freitag von 10 Uhr bis Mittag", "2026-08-07 10:00", "2026-08-07 12:00"),
        (DE, "Freitag von 10 bis Mittag", "2026-08-07 10:00", "2026-08-07 12:00"),
        # "around noon" as "around 10" is read.
        (EN, "Tuesday around noon?", "2026-08-04 12:00", "2026-08-04 13:00"),
        (DE, "Dienstag gegen Mittag?", "2026-08-04 12:00", "2026-08-04 13:00"),
    ],
)
def test_noon_as_a_spans_end_or_around_noon(language: Locale, text: str, start: str, end: str) -> None:
    assert read(text, language, MONDAY) == [(start, end)]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        (EN, "Friday from 2 till noon"),  # ten hours from 02:00? not a reading to offer
        (EN, "Friday 10 to noon"),  # without "from", am/pm or "Uhr", "10" may be a count
        (EN, "Please send it by Friday from 10 till noon"),
    ],
)
def test_a_span_to_noon_that_says_too_little_stays_unread(language: Locale, text: str) -> None:
    assert read(text, language, MONDAY) == []


@pytest.mark.parametrize(
    ("language", "text"),
    [
        # A dinner at 07:30 is a wrong date; 19:30 is a guess the writer did not write: unread.
        (EN, "Dinner on Saturday at 7:30?"),
        (EN, "Dinner at ours on Saturday, 7:30ish?"),
        (DE, "Abendessen am Samstag um 7:30?"),
        (DE, "Abendessen am Samstag um 5:30?"),  # German "5:30" is otherwise the early morning
    ],
)
def test_an_evening_occasion_with_a_morning_looking_time_stays_unread(language: Locale, text: str) -> None:
    assert starts(text, language, MONDAY) == []


@pytest.mark.parametrize(
    ("language", "text", "start"),
    [
        (EN, "Dinner on Saturday at 7:30pm?", "2026-08-08 19:30"),
        (EN, "Dinner Saturday evening at 7:30?", "2026-08-08 19:30"),
        (DE, "Abendessen am Samstag um 19:30?", "2026-08-08 19:30"),
        (EN, "Office party on Saturday at 5.", "2026-08-08 17:00"),  # before six is the afternoon anyway
        (EN, "Breakfast on Saturday at 7:30?", "2026-08-08 07:30"),
    ],
)
def test_an_evening_occasion_with_its_half_written_keeps_its_time(language: Locale, text: str, start: str) -> None:
    assert starts(text, language, MONDAY) == [start]
