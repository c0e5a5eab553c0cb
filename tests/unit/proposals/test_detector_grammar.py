"""Issue 23: the shapes people write times and days in, each with what must not be read from a look-alike.

Every expected value is read off the sentence by hand. Unless a test says otherwise the message was sent
on Monday 2026-08-03 at 09:00 in Europe/Berlin, so Tuesday is the 4th, Friday the 7th, a week on the 10th.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from plmail.calendar.proposals import DetectionRequest, DeterministicDateDetector, ProposalCandidate
from plmail.domain.enums import Locale

BERLIN = ZoneInfo("Europe/Berlin")
MONDAY = datetime(2026, 8, 3, 9, 0, tzinfo=BERLIN)
DE, EN = Locale.DE, Locale.EN
DETECTOR = DeterministicDateDetector()


def read(text: str, language: Locale) -> tuple[ProposalCandidate, ...]:
    return DETECTOR.detect(DetectionRequest(text, "", MONDAY, "Europe/Berlin", language))


def starts(text: str, language: Locale) -> list[str]:
    return [c.start.astimezone(BERLIN).strftime("%Y-%m-%d %H:%M") for c in read(text, language)]


@pytest.mark.parametrize(
    ("language", "text", "start"),
    [
        # German clock phrases: "halb vier" is half an hour before four.
        (DE, "Können wir Freitag um halb vier nachmittags telefonieren?", "2026-08-07 15:30"),
        (DE, "Freitag um halb 8?", "2026-08-07 07:30"),
        (DE, "Freitag um halb eins?", "2026-08-07 12:30"),
        (DE, "Freitag um Viertel nach 10", "2026-08-07 10:15"),
        (DE, "Mittwoch um Viertel vor 9", "2026-08-05 08:45"),
        (DE, "Donnerstag um dreiviertel 8 abends", "2026-08-06 19:45"),
        (DE, "Freitag um 10 Minuten nach 8", "2026-08-07 08:10"),
        (DE, "Freitag um zehn Uhr", "2026-08-07 10:00"),
        # English clock phrases and hour words.
        (EN, "Friday at half past three in the afternoon", "2026-08-07 15:30"),
        (EN, "Friday at a quarter to four pm", "2026-08-07 15:45"),
        (EN, "20 minutes to 2pm tomorrow", "2026-08-04 13:40"),
        (EN, "Friday at six pm", "2026-08-07 18:00"),
        # Four digits are a 24-hour time; three only with am/pm.
        (DE, "morgen 1430 Uhr", "2026-08-04 14:30"),
        (DE, "Am 12.8.2026 um 1430 Uhr", "2026-08-12 14:30"),
        (EN, "12 Aug 1115", "2026-08-12 11:15"),
        (EN, "Friday 0930", "2026-08-07 09:30"),
        (EN, "on Friday at 830am", "2026-08-07 08:30"),
        (EN, "Thursday at 1120pm", "2026-08-06 23:20"),
        (DE, "Am 12.8.2026 1845-1955", "2026-08-12 18:45"),
        (EN, "Aug 7 1440-1825", "2026-08-07 14:40"),
        # Noon, and an approximate or bare hour that can only be a time where it stands.
        (EN, "Lunch Friday noon?", "2026-08-07 12:00"),
        (EN, "tomorrow noon works", "2026-08-04 12:00"),
        (EN, "Lunch on the 4th of August at noon?", "2026-08-04 12:00"),
        (DE, "Sonntag, 9. August, ca. 12", "2026-08-09 12:00"),
        (EN, "tonight around 7", "2026-08-03 19:00"),
        (EN, "8 tonight?", "2026-08-03 20:00"),
        (EN, "See you 9 tomorrow morning", "2026-08-04 09:00"),
        (EN, "Call today at 9p.", "2026-08-03 21:00"),
        # Weekdays: abbreviated before a time or a date, and with a day of the month.
        (EN, "Thu at 8 am works", "2026-08-06 08:00"),
        (DE, "Fr um 16:25 Uhr geht.", "2026-08-07 16:25"),
        (DE, "Di. um 10 Uhr?", "2026-08-04 10:00"),
        (EN, "Fri 7 Aug 10:00", "2026-08-07 10:00"),
        (DE, "Mi 12.08.2026 09:30", "2026-08-12 09:30"),
        (EN, "this Fri at 3pm", "2026-08-07 15:00"),
        (EN, "Friday the 7th at 10am?", "2026-08-07 10:00"),
        (EN, "Wed 26th at 3pm", "2026-08-26 15:00"),
        (DE, "Kommen Sie am Freitag, den 21. um 10 Uhr?", "2026-08-21 10:00"),
        (EN, "Let's meet August twelfth at 10am", "2026-08-12 10:00"),
        (EN, "monday the twenty fourth at six pm", "2026-08-24 18:00"),
        (EN, "6:40am THURSDAY, 6th", "2026-08-06 06:40"),
        # Days counted from the message day.
        (DE, "In 3 Tagen um 10 Uhr?", "2026-08-06 10:00"),
        (EN, "in two weeks at 5pm", "2026-08-17 17:00"),
        (DE, "heute in einer Woche um 9 Uhr", "2026-08-10 09:00"),
        (DE, "übermorgen um 14 Uhr", "2026-08-05 14:00"),
        (EN, "Coffee this Thursday at 10am?", "2026-08-06 10:00"),
        # Ranges start where they start.
        (DE, "Am Freitag von 9 bis 11", "2026-08-07 09:00"),
        (EN, "On Friday from 2 to 4 pm", "2026-08-07 14:00"),
        (DE, "Freitag zwischen 14 und 16 Uhr", "2026-08-07 14:00"),
        (EN, "Friday between 2 and 4pm", "2026-08-07 14:00"),
        (DE, "Am 12.8.2026 6:10 - 13:35", "2026-08-12 06:10"),  # 18:10 would come after the end
        (DE, "Am 12.8.2026 20-21", "2026-08-12 20:00"),
        # A clock reading of 5 or 6 written the German way is the morning (an evening there is 17 or 18).
        (DE, "Freitag 6:30 Uhr Abfahrt", "2026-08-07 06:30"),
        (DE, "Am Montag, 10.8.2026, 5:45 Uhr am Bahnhof", "2026-08-10 05:45"),
        (DE, "morgen 6:38", "2026-08-04 06:38"),
        # Shapes that were read wrongly before.
        (DE, "Termin 2026-08-20 14:00", "2026-08-20 14:00"),  # the ISO date's own time knocked the date out
        (DE, "Termin am 20.08.2026, 9.00 Uhr", "2026-08-20 09:00"),  # ", 9." looked like a list of days
        (EN, "Brunch at 13:00 August 28, 2026", "2026-08-28 13:00"),  # ":00 August" was read as a day
        (DE, "6. August 11.05", "2026-08-06 11:05"),  # a dotted time right after its date
    ],
)
def test_shapes(language: Locale, text: str, start: str) -> None:
    assert starts(text, language) == [start]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        (EN, "Friday at 6:30"),  # English: 06:30 or 18:30
        (EN, "Friday at quarter past eight"),  # an English "at 8" says neither morning nor evening
        (DE, "Freitag, 5 vor 12!"),  # an idiom, not 11:55
        (DE, "Am Freitag kommen etwa 8 Teilnehmer."),  # a count of people
        (DE, "Freitag 2030"),  # a year as often as a time
        (DE, "Ich habe am Freitag 2015 Euro bezahlt."),
        (DE, "Am 12.8.2026 kostet es 1430 Euro."),
        (DE, "Am Freitag: Goethe 1749-1832"),  # years, away from the day
        (EN, "Room 12a on Friday"),
        (EN, "Let's go to building 4 tonight"),  # a building's number, not 16:00
        (EN, "Friday by noon please."),  # a deadline
        (DE, "So um 10 Uhr passt es?"),  # German "so", not Sunday
        (EN, "I sat at 3pm and waited."),  # "sat", not Saturday
        (DE, "Mo-Fr 9-17 Uhr"),  # office hours
        (EN, "Mon-Fri 9am-5pm"),
        (EN, "Friday the 8th at 10am?"),  # the 8th is a Saturday: which did the writer mean?
        (EN, "Wed 5 at 10am"),  # a bare number after a weekday is no day of the month
        (DE, "Lieferung in 3 Tagen."),  # a relative day needs a time
        (DE, "Freitag um 9 oder 10 Uhr"),
    ],
)
def test_look_alikes_are_refused(language: Locale, text: str) -> None:
    assert read(text, language) == ()


@pytest.mark.parametrize(
    ("language", "text", "start"),
    [
        (DE, "Hinflug 09.08.2026 14:15WAW", "2026-08-09 14:15"),  # a timetable's time, glued to its airport
        (EN, "Aug 15 1410-1745ECO", "2026-08-15 14:10"),
        (DE, "Am 12.8.2026 um 14:15abc", None),  # letters that are no airport code keep it from being a time
        (DE, "Am 12.8.2026 um 14:15Uhrzeit", None),
    ],
)
def test_a_time_glued_to_an_airport_code(language: Locale, text: str, start: str | None) -> None:
    assert starts(text, language) == ([start] if start else [])
