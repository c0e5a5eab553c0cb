"""DeterministicDateDetector: what it reads, relative to what, and what it refuses to guess."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from plmail.calendar.proposals import (
    DetectionRequest,
    DeterministicDateDetector,
    ProposalCandidate,
    ProposalDetector,
)
from plmail.calendar.proposals.detector import MAX_JOIN_TOKENS
from plmail.calendar.proposals.titles import guess_title
from plmail.domain.enums import Locale

BERLIN = ZoneInfo("Europe/Berlin")
MONDAY = datetime(2026, 8, 3, 9, 0, tzinfo=BERLIN)
DETECTOR = DeterministicDateDetector()


def read(text: str, *, sent: datetime = MONDAY, zone: str = "Europe/Berlin", language: Locale = Locale.DE,
         subject: str = "") -> tuple[ProposalCandidate, ...]:  # fmt: skip
    return DETECTOR.detect(DetectionRequest(text, subject, sent, zone, language))


def starts(text: str, **kwargs: object) -> list[str]:
    zone = ZoneInfo(str(kwargs.get("zone", "Europe/Berlin")))
    found = read(text, **kwargs)  # type: ignore[arg-type]
    return [c.start.astimezone(zone).strftime("%Y-%m-%d" if c.all_day else "%Y-%m-%d %H:%M") for c in found]


def test_relative_to_the_message_date_never_to_now() -> None:
    sent = datetime(2019, 3, 4, 10, 0, tzinfo=BERLIN)  # a Monday, years before any test run
    assert starts("Können wir morgen um 14 Uhr telefonieren?", sent=sent) == ["2019-03-05 14:00"]
    assert starts("Freitag um 10 Uhr?", sent=sent) == ["2019-03-08 10:00"]
    assert starts("Am 12. März um 9 Uhr?", sent=sent) == ["2019-03-12 09:00"]  # a year-less day: the message's year


def test_tomorrow_is_refused_when_the_writer_was_on_another_day() -> None:
    late_in_chicago = datetime(2026, 8, 3, 21, 0, tzinfo=ZoneInfo("America/Chicago"))  # already the 4th in Berlin
    assert read("Morgen um 14 Uhr?", sent=late_in_chicago) == ()
    assert starts("Am 5.8.2026 um 14 Uhr?", sent=late_in_chicago) == ["2026-08-05 14:00"]  # a calendar date is safe
    utc = late_in_chicago.astimezone(ZoneInfo("UTC"))  # an offset of +00:00 says nothing about the writer
    assert starts("Morgen um 14 Uhr?", sent=utc) == ["2026-08-05 14:00"]


def test_days_written_side_by_side_must_agree() -> None:
    assert starts("Morgen, Dienstag, den 4.8.2026 um 10 Uhr?") == ["2026-08-04 10:00"]
    assert read("Morgen, Mittwoch, um 10 Uhr?") == ()
    assert read("7 AM CT tomorrow, Wednesday, 8/5/2026", language=Locale.EN) == ()


def test_the_user_zone_decides_which_day_tomorrow_is() -> None:
    sent = datetime(2026, 8, 3, 23, 30, tzinfo=ZoneInfo("UTC"))  # already Tuesday in Auckland
    assert starts("tomorrow at 9am", sent=sent, zone="Pacific/Auckland", language=Locale.EN) == ["2026-08-05 09:00"]
    assert starts("tomorrow at 9am", sent=sent, zone="America/Los_Angeles", language=Locale.EN) == [
        "2026-08-04 09:00"
    ]
    candidate = read("tomorrow at 9am", sent=sent, zone="Pacific/Auckland", language=Locale.EN)[0]
    assert candidate.time_zone == "Pacific/Auckland"
    assert candidate.start.utcoffset() == timedelta(hours=12)


def test_slash_order_follows_the_user_language_and_impossible_readings_are_refused() -> None:
    sent = datetime(2026, 3, 2, 9, 0, tzinfo=BERLIN)
    assert starts("am 4/8/2026 um 10 Uhr", sent=sent, language=Locale.DE) == ["2026-08-04 10:00"]
    assert starts("on 4/8/2026 at 10:00", sent=sent, language=Locale.EN) == ["2026-04-08 10:00"]
    assert starts("on 13/08 at 10:00", sent=sent, language=Locale.EN) == []  # never read as 13 August
    assert starts("am 08/13/2026 um 10 Uhr", sent=sent, language=Locale.DE) == []


@pytest.mark.parametrize(
    ("text", "start"),
    [
        ("Termin 2026-08-04 um 10 Uhr", "2026-08-04 10:00"),
        ("Termin 2026-08-04T10:15", "2026-08-04 10:15"),
        ("Termin am 4.8.2026 um 10 Uhr", "2026-08-04 10:00"),
        ("Termin am 04.08.2026 um 10 Uhr", "2026-08-04 10:00"),  # year-less or two-digit: refused (issue 37)
        ("Termin am 4. August um 10 Uhr", "2026-08-04 10:00"),
        ("Termin am 4.August um 10 Uhr", "2026-08-04 10:00"),
        ("meeting on August 4th at 10am", "2026-08-04 10:00"),
        ("meeting on 4 August at 10am", "2026-08-04 10:00"),
        ("meeting on the 4th of August at 10am", "2026-08-04 10:00"),
        ("meeting on Aug. 4, 2026 at 10am", "2026-08-04 10:00"),
        ("heute um 14 Uhr", "2026-08-03 14:00"),
        ("today at 2pm", "2026-08-03 14:00"),
        ("tonight at 8", "2026-08-03 20:00"),
        ("morgen um 14 Uhr", "2026-08-04 14:00"),
        ("tomorrow at 14:00", "2026-08-04 14:00"),
        ("übermorgen um 14 Uhr", "2026-08-05 14:00"),
        ("kommenden Freitag um 14 Uhr", "2026-08-07 14:00"),
        ("next Monday at 2pm", "2026-08-10 14:00"),
        ("Dienstag nächste Woche um 14 Uhr", "2026-08-11 14:00"),
        ("in der nächsten Woche am Dienstag um 14 Uhr", "2026-08-11 14:00"),
        ("in der übernächsten Woche am Donnerstag um 16 Uhr", "2026-08-20 16:00"),
        ("Freitag zwischen 14 und 16 Uhr", "2026-08-07 14:00"),  # a window: its start (the end is kept too)
        ("Dienstag um 14 Uhr", "2026-08-04 14:00"),  # the next one after the message day
        ("kommenden Montag um 14 Uhr", "2026-08-10 14:00"),
        ("Freitag, 7. August um 14.30 Uhr", "2026-08-07 14:30"),
        ("Freitag um 2 p.m.", "2026-08-07 14:00"),
        ("Freitag gegen 15", "2026-08-07 15:00"),
        ("Friday at 16", "2026-08-07 16:00"),
        ("Freitag 14 Uhr 30", "2026-08-07 14:30"),
        ("Freitag um 3 Uhr nachmittags", "2026-08-07 15:00"),
        ("Freitagabend um 8", "2026-08-07 20:00"),
        ("Freitag um 8 Uhr", "2026-08-07 08:00"),
        ("Friday at 9 in the morning", "2026-08-07 09:00"),
    ],
)
def test_shapes(text: str, start: str) -> None:
    language = Locale.EN if text[0].islower() and " at " in text else Locale.DE
    assert starts(text, language=language) == [start]


@pytest.mark.parametrize(
    "text",
    [
        "nächsten Mittwoch um 14 Uhr",  # said on a Monday: this week's or next week's
        "letzten Freitag um 14 Uhr",
        "in der letzten Woche am Donnerstag um 16 Uhr",  # not the coming Thursday
        "Freitag bis 14 Uhr",
        "Friday by 2pm",
        "Freitag um 9 oder 10 Uhr",
        "Freitag um 14 Uhr IST",  # a zone we cannot resolve
        "Friday at 9am EST",  # New York is on EDT in August: which one was meant?
        "Freitag um 14:30:17",
        "Montag um 14 Uhr",  # written on a Monday: today, or a week on?
    ],
)
def test_ambiguous_or_bounded_readings_are_refused(text: str) -> None:
    assert read(text) == ()


@pytest.mark.parametrize(
    "text",
    [
        "Abgabefrist: Freitag 12 Uhr",  # German makes a deadline of any noun
        "Die Rückmeldefrist ist Freitag, 12 Uhr.",
        "Redaktionsschluss: Freitag 12 Uhr",
    ],
)
def test_a_deadline_written_as_a_compound_is_no_appointment(text: str) -> None:
    assert read(text) == ()


@pytest.mark.parametrize(
    ("language", "text"),
    [
        # Written on Monday 3 August: these tell of last Friday, and next Friday would be an invented appointment.
        (Locale.EN, "The package arrived on Friday at 10am."),
        (Locale.EN, "We visited them on Friday at 3pm."),
        (Locale.DE, "Das Paket kam am Freitag um 10 Uhr an."),
        (Locale.DE, "Wir haben uns am Freitag um 10 Uhr getroffen."),
        (Locale.DE, "Ich bin am Freitag um 10 Uhr angekommen."),
    ],
)
def test_a_sentence_telling_what_happened_reads_no_weekday_ahead(language: Locale, text: str) -> None:
    assert read(text, language=language) == ()


@pytest.mark.parametrize(
    ("language", "text", "start"),
    [
        # The act is past, the day it is for is ahead; arranging is no telling of what happened.
        (Locale.EN, "I sent you the agenda for the meeting on Friday at 3pm.", "2026-08-07 15:00"),
        (Locale.DE, "Ich habe dir die Einladung für Freitag um 15 Uhr geschickt.", "2026-08-07 15:00"),
        (Locale.DE, "Ich habe den Termin für Freitag um 10 Uhr gebucht.", "2026-08-07 10:00"),
        (Locale.EN, "Call me when you arrive on Friday at 3pm.", "2026-08-07 15:00"),
        # Telling, sending and getting are news of a day that is often ahead.
        (Locale.EN, "She said Friday at 3pm works.", "2026-08-07 15:00"),
        (Locale.EN, "I got us a table on Friday at 8pm.", "2026-08-07 20:00"),
        (Locale.DE, "Er schrieb, dass Freitag um 15 Uhr passt.", "2026-08-07 15:00"),
        (Locale.EN, "We talked about meeting on Friday at 3pm.", "2026-08-07 15:00"),
        (Locale.EN, "Sorry I missed your call, does Friday at 3pm work?", "2026-08-07 15:00"),
    ],
)
def test_a_past_act_for_a_day_ahead_keeps_the_day(language: Locale, text: str, start: str) -> None:
    assert starts(text, language=language) == [start]


@pytest.mark.parametrize(
    ("text", "start"),
    [
        ("Kurzfristig: Freitag um 12 Uhr?", "2026-08-07 12:00"),  # "-fristig" is no deadline
        ("Abschlussfeier am Freitag um 18 Uhr", "2026-08-07 18:00"),  # nor is every "-schluss"
    ],
)
def test_words_that_only_look_like_a_deadline_keep_their_time(text: str, start: str) -> None:
    assert starts(text) == [start]


def test_zone_names_that_are_words_count_only_in_capitals_or_after_am_pm() -> None:
    assert starts("Am Freitag um 14 Uhr ist das Meeting.") == ["2026-08-07 14:00"]
    assert starts("Am Freitag um 14 Uhr et cetera.") == ["2026-08-07 14:00"]
    assert read("Friday at 14:00 IST", language=Locale.EN) == ()
    assert read("Friday at 9:30pm ist", language=Locale.EN) == ()


def test_zones_written_next_to_the_time_are_converted() -> None:
    assert starts("Friday at 14:00 UTC", language=Locale.EN) == ["2026-08-07 16:00"]
    assert starts("Friday at 9am ET", language=Locale.EN) == ["2026-08-07 15:00"]
    assert starts("Friday at 9am EDT", language=Locale.EN) == ["2026-08-07 15:00"]
    assert starts("Freitag um 14 Uhr (UTC+2)") == ["2026-08-07 14:00"]


def test_a_time_skipped_by_the_clock_change_moves_forward() -> None:
    sent = datetime(2026, 3, 20, 9, 0, tzinfo=BERLIN)
    (candidate,) = read("Am 29.03.2026 um 02:30 Uhr", sent=sent)
    assert candidate.start.astimezone(BERLIN).strftime("%H:%M %z") == "03:30 +0200"


@pytest.mark.parametrize(
    ("text", "minutes"),
    [
        ("Freitag um 14 Uhr für 2 Stunden", 120),
        ("Freitag um 14 Uhr, ca. 1,5 Std.", 90),
        ("Friday at 2pm for 90 minutes", 90),
        ("Friday at 2pm for an hour", 60),
        ("Friday at 2pm for half an hour", 30),
        ("Freitag um 14 Uhr, eine halbe Stunde", 30),
        ("Freitag um 14 Uhr, anderthalb Stunden", 90),
        ("Freitag von 14 bis 17:30 Uhr", 210),
        ("Freitag um 14 Uhr", 60),  # the default for a timed proposal
        ("Freitag um 14 Uhr für 3 Minuten", 60),  # below the sane range: ignored
        ("Freitag um 14 Uhr für 14 Stunden", 60),  # above it: ignored
        ("Freitag um 14 Uhr, in 2 Stunden Bescheid", 60),  # "in 2 Stunden" is a moment, not a length
    ],
)
def test_durations(text: str, minutes: int) -> None:
    language = Locale.EN if text.startswith("Friday") else Locale.DE
    (candidate,) = read(text, language=language)
    assert candidate.end - candidate.start == timedelta(minutes=minutes)
    assert not candidate.all_day


def test_a_date_alone_is_all_day() -> None:
    (candidate,) = read("Lass uns am 12.8.2026 essen gehen.")
    assert candidate.all_day
    assert candidate.start == datetime(2026, 8, 12, tzinfo=BERLIN)
    assert candidate.end == datetime(2026, 8, 13, tzinfo=BERLIN)


def test_a_relative_day_or_weekday_alone_names_no_appointment() -> None:
    assert read("Angebot endet Freitag!") == ()
    assert read("Ich bin morgen nicht da.") == ()
    assert read("See you Friday.", language=Locale.EN) == ()


def test_a_date_and_a_time_far_apart_are_not_joined() -> None:
    near = "Am Dienstag, " + "ja " * MAX_JOIN_TOKENS + "um 14 Uhr"
    far = "Am Dienstag, " + "ja " * (MAX_JOIN_TOKENS + 1) + "um 14 Uhr"
    assert starts(near) == ["2026-08-04 14:00"]
    assert read(far) == ()


def test_a_part_of_day_word_must_touch_its_time() -> None:
    assert starts("Guten Abend Frau Weber, morgen um 10 Uhr passt.") == ["2026-08-04 10:00"]
    assert starts("Morgen um 10 Uhr abends") == ["2026-08-04 22:00"]


def test_each_sentence_of_a_message_is_read_and_duplicates_collapse() -> None:
    text = "Dienstag um 10 Uhr passt. Und Donnerstag um 15 Uhr auch. Also Dienstag um 10 Uhr!"
    assert starts(text) == ["2026-08-04 10:00", "2026-08-06 15:00"]


def test_the_detector_reads_past_dates_too_because_it_does_not_decide() -> None:
    assert starts("Wir haben am 2. Mai 2024 um 10 Uhr telefoniert.") == ["2024-05-02 10:00"]


def test_candidate_carries_sentence_title_and_confidence() -> None:
    (candidate,) = read("Hallo Anna! Können wir Freitag um 10 Uhr reden? Gruß", subject="AW: Re: Projektstart")
    assert candidate.source_sentence == "Können wir Freitag um 10 Uhr reden?"
    assert candidate.title == "Projektstart"
    assert 0 < candidate.confidence <= 100
    (explicit,) = read("Am 7.8.2026 um 10 Uhr")
    assert explicit.confidence > candidate.confidence  # a calendar date is surer than a weekday


def test_the_deterministic_detector_is_a_proposal_detector() -> None:
    detector: ProposalDetector = DeterministicDateDetector()
    assert detector.name == "deterministic"


def test_a_message_date_without_a_zone_is_refused_outright() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        DetectionRequest("Freitag um 10 Uhr", "", datetime(2026, 8, 3, 9, 0), "Europe/Berlin", Locale.DE)


def test_title_falls_back_to_the_sentence() -> None:
    assert guess_title("", "Kurz") == "Kurz"
    long_sentence = "Wort " * 40
    assert guess_title("Re:", long_sentence).endswith("…")
    assert len(guess_title("x" * 500, "")) == 200
