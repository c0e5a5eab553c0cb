"""Issue 23: the end a range writes and the place a sentence names, on the candidate and on the proposal.

Expected values are read off each sentence by hand. The message was sent on Monday 2026-08-03 at 09:00
in Europe/Berlin: Tuesday is the 4th, Wednesday the 5th, Friday the 7th, Saturday the 8th.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from plmail.calendar.proposals import (
    DetectionRequest,
    DeterministicDateDetector,
    EventProposer,
    ProposalCandidate,
    ProposalInput,
)
from plmail.domain.enums import Category, Locale

BERLIN = ZoneInfo("Europe/Berlin")
MONDAY = datetime(2026, 8, 3, 9, 0, tzinfo=BERLIN)
DE, EN = Locale.DE, Locale.EN
DETECTOR = DeterministicDateDetector()


def read(text: str, language: Locale) -> tuple[ProposalCandidate, ...]:
    return DETECTOR.detect(DetectionRequest(text, "", MONDAY, "Europe/Berlin", language))


def local(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(BERLIN).strftime("%Y-%m-%d %H:%M")


@pytest.mark.parametrize(
    ("language", "text", "start", "end"),
    [
        (DE, "Das Treffen ist Freitag 14–16 Uhr.", "2026-08-07 14:00", "2026-08-07 16:00"),
        (EN, "Friday 2-4pm works.", "2026-08-07 14:00", "2026-08-07 16:00"),
        (DE, "Am Freitag von 9 bis 11 im Büro.", "2026-08-07 09:00", "2026-08-07 11:00"),
        (EN, "On Friday from 2 to 4 pm?", "2026-08-07 14:00", "2026-08-07 16:00"),
        (EN, "Tuesday 10:00-11:30 works.", "2026-08-04 10:00", "2026-08-04 11:30"),
        (EN, "Friday 9a to 11a", "2026-08-07 09:00", "2026-08-07 11:00"),
        (EN, "Thursday from 9:30 till 11:00", "2026-08-06 09:30", "2026-08-06 11:00"),
        (DE, "Am 12.8.2026 0930-1045", "2026-08-12 09:30", "2026-08-12 10:45"),
        (DE, "Am 12.8.2026 2205-0455", "2026-08-12 22:05", "2026-08-13 04:55"),  # past midnight
        (DE, "Freitag um 14 Uhr für 2 Stunden", "2026-08-07 14:00", "2026-08-07 16:00"),  # a written length
        # A timed day to a timed day: a stay, a trip, a fair.
        (DE, "Wir sind vom 22.08.2026 15:00 Uhr bis 24.08.2026 11:00 Uhr dort.", "2026-08-22 15:00",
         "2026-08-24 11:00"),
        (DE, "Messe Freitag 8 Uhr bis Samstag 14 Uhr", "2026-08-07 08:00", "2026-08-08 14:00"),
        (DE, "Anreise 14.08.2026 06:00 Uhr bis zum 15.08.2026 18:00", "2026-08-14 06:00", "2026-08-15 18:00"),
        (EN, "Sep 7th, 9am - Sep 7th, 11pm", "2026-09-07 09:00", "2026-09-07 23:00"),
        # A window after its day is the event's span too, as "14–16 Uhr" is: start and end as written.
        (DE, "Freitag zwischen 14 und 16 Uhr", "2026-08-07 14:00", "2026-08-07 16:00"),
        (DE, "Am Donnerstag zwischen 9:30 und 11:00", "2026-08-06 09:30", "2026-08-06 11:00"),
        (DE, "Am 12.8.2026 zwischen 9 und 11", "2026-08-12 09:00", "2026-08-12 11:00"),
        (EN, "between 9:30 and 11:00 on thursday", "2026-08-06 09:30", "2026-08-06 11:00"),
        (EN, "Friday between 2 and 4pm", "2026-08-07 14:00", "2026-08-07 16:00"),
        # A part of the day right after two bare numbers makes them hours.
        (EN, "Friday 5-6 in the evening", "2026-08-07 17:00", "2026-08-07 18:00"),
        (DE, "Freitag 5-6 abends", "2026-08-07 17:00", "2026-08-07 18:00"),
        # Bounds on both sides make the same span.
        (EN, "later than 9:30 but before 11:00 on Thursday", "2026-08-06 09:30", "2026-08-06 11:00"),
        (DE, "am Donnerstag nach 9:30 aber vor 11:00", "2026-08-06 09:30", "2026-08-06 11:00"),
        (DE, "Am 26.08.2026 zwischen 09.00 - 13.00 Uhr", "2026-08-26 09:00", "2026-08-26 13:00"),
    ],
)
def test_a_written_end_is_kept(language: Locale, text: str, start: str, end: str) -> None:
    (candidate,) = read(text, language)
    assert (local(candidate.start), local(candidate.stated_end)) == (start, end)
    assert candidate.end == candidate.stated_end
    assert not candidate.all_day


def test_without_a_written_end_the_end_is_the_default_hour_and_says_so() -> None:
    (candidate,) = read("Freitag um 14 Uhr?", DE)
    assert local(candidate.start) == "2026-08-07 14:00"
    assert local(candidate.end) == "2026-08-07 15:00"
    assert candidate.stated_end is None


@pytest.mark.parametrize(
    ("language", "text"),
    [
        (DE, "Von 4.8. bis 8.8. bin ich im Urlaub."),  # days without times: no appointment
        (DE, "Von 4.8.2026 bis 8.8.2026 bin ich im Urlaub."),  # with the year too (year-less is refused anyway)
        (DE, "Rückruf bis Freitag 14 Uhr bis Samstag 10 Uhr."),  # the first day is a deadline itself
        (DE, "Freitag 14 Uhr bis Freitag 13 Uhr"),  # the end before the start
        (DE, "Ausstellung vom 1.9. 10 Uhr bis 30.10. 18 Uhr"),  # a season, not an event
        (DE, "Ausstellung vom 1.9.2026 10 Uhr bis 30.10.2026 18 Uhr"),
        (DE, "Freitag bis 14 Uhr"),  # an open end
        (DE, "Freitag um 9 und 11 Uhr"),  # two times to choose from, not two ends
        (EN, "Friday at 9 and 11"),
        (EN, "Thursday after 2 but before 4"),  # two bare numbers after "after" are not read as hours
        (EN, "Friday 5-6"),  # numbers, or hours at night or in the afternoon
        (EN, "Friday 5-6 people in the evening"),  # a count
        (DE, "am Donnerstag nach 9:30"),  # an open start
        (EN, "Thursday after 9:30 to 11:00"),  # "after" opens no span
    ],
)
def test_spans_that_are_no_event_are_refused(language: Locale, text: str) -> None:
    assert read(text, language) == ()


@pytest.mark.parametrize(
    ("language", "text", "place"),
    [
        (DE, "Treffen wir uns morgen um 15 Uhr im Café Lotte?", "Café Lotte"),
        (EN, "Let's meet on Friday at 5pm at Cafe Lotte.", "Cafe Lotte"),
        (DE, "Freitag um 10 Uhr im Besprechungsraum 3.", "Besprechungsraum 3"),
        (DE, "Freitag um 14 Uhr im Raum 2.14.", "Raum 2.14"),
        (DE, "Am Mittwoch um 9 Uhr bei Anna.", "bei Anna"),
        (DE, "Freitag 14 Uhr bei Herrn Dr. Weber.", "bei Herrn Dr. Weber"),
        (EN, "Don't forget: Wednesday at 2:30pm in room 4.", "room 4"),
        (EN, "Lunch tomorrow at noon at the office?", "office"),
        (DE, "Freitag um 14 Uhr in der Kantine.", "Kantine"),
        (DE, "Am 6. August um 3 Uhr nachmittags beim Zahnarzt.", "Zahnarzt"),
        (DE, "Freitag um 14 Uhr am Hauptbahnhof.", "Hauptbahnhof"),  # the German "am" is no a.m.
        (EN, "The day after tomorrow at 6pm in Berlin.", "Berlin"),
        (EN, "The meeting is at the Marriott hotel on Friday at 2pm.", "Marriott hotel"),
        (EN, "Can we meet @ Chestnut Run Plaza Bldg 450 on Friday at 2pm?", "Chestnut Run Plaza Bldg 450"),
        (EN, "Friday at 2pm at Cafe Lotte, Berlin", "Cafe Lotte"),  # the clause ends at the comma
        (EN, "Friday at 2pm at Alpha Beta Gamma Delta Epsilon Zeta", "Alpha Beta Gamma Delta Epsilon"),  # bounded
    ],
)
def test_the_place_named_in_the_sentence(language: Locale, text: str, place: str) -> None:
    (candidate,) = read(text, language)
    assert candidate.location == place


@pytest.mark.parametrize(
    ("language", "text"),
    [
        (EN, "Friday at 5pm."),  # "at 5pm" is the time
        (EN, "Call me at 5pm in 3 days."),  # "in 3 days" is the day
        (EN, "Friday at 2pm in the afternoon."),  # a part of the day
        (EN, "See you Friday at 10am at least for an hour."),
        (EN, "Friday at 10am in English please."),
        (EN, "Friday at 2pm at Christmas party."),
        (EN, "Meet Friday at 2pm at Starbucks or at Cafe Lotte?"),  # two places: which?
        (DE, "Freitag um 10 Uhr, bei Fragen melden."),
        (DE, "Freitag um 14 Uhr im Anschluss an das Meeting."),
        (DE, "Übermorgen um 16 Uhr bei mir?"),  # a pronoun names nobody's address
        (DE, "Freitag um 14 Uhr in Ordnung?"),
        (DE, "Freitag um 10 Uhr bei Eingang der Zahlung."),
        (DE, "Freitag um 10 Uhr bei schönem Wetter."),
        (DE, "Freitag um 14 Uhr im Zeitraum danach."),
    ],
)
def test_no_place_is_made_up(language: Locale, text: str) -> None:
    (candidate,) = read(text, language)
    assert candidate.location is None


def test_the_proposal_carries_the_written_end_and_the_place() -> None:
    facts = ProposalInput(
        message_key="<ends@example.org>", owner_user_id=1, is_draft=False, category=Category.GENERAL,
        message_date=MONDAY, body_text="Können wir Freitag von 14 bis 16 Uhr im Besprechungsraum 3 sprechen?",
        to_addresses=("me@example.org",), account_addresses=frozenset({"me@example.org"}),
        time_zone="Europe/Berlin", language=DE,
    )  # fmt: skip
    (proposal,) = EventProposer().decide(facts).proposals
    assert local(proposal.start) == "2026-08-07 14:00"
    assert local(proposal.stated_end) == "2026-08-07 16:00"
    assert local(proposal.end) == "2026-08-07 16:00"
    assert proposal.location == "Besprechungsraum 3"
