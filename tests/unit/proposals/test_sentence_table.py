"""Our own table: German and English sentences, more than half of them traps, with what must be offered.

Each row runs through the whole EventProposer with message facts that pass every message rule, so what
is checked is what a user would see: the reading, and the date rules (past, horizon) applied to it.
Unless a row says otherwise the message was sent on Monday 2026-08-03 at 09:00 in Europe/Berlin.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from plmail.calendar.proposals import EventProposer, ProposalInput
from plmail.domain.enums import Category, Locale

BERLIN = "Europe/Berlin"
MONDAY = datetime(2026, 8, 3, 9, 0, tzinfo=ZoneInfo(BERLIN))
DE, EN = Locale.DE, Locale.EN


@dataclass(frozen=True, slots=True)
class Row:
    language: Locale
    text: str
    start: str | None  # local wall clock "2026-08-04T14:30", or a day "2026-08-12" for all-day; None: nothing
    end: str | None = None
    sent: datetime = MONDAY
    zone: str = BERLIN

    @property
    def trap(self) -> bool:
        return self.start is None


ROWS: list[Row] = [
    # --- German, offered -------------------------------------------------------------------------------
    Row(DE, "Können wir uns am Dienstag, den 4. August um 14:30 Uhr treffen?", "2026-08-04T14:30", "2026-08-04T15:30"),
    Row(DE, "Treffen am 04.08.2026 um 14.30 Uhr, ca. 2 Stunden.", "2026-08-04T14:30", "2026-08-04T16:30"),
    Row(DE, "Treffen am 04.08. um 14.30 Uhr, ca. 2 Stunden.", None),  # issue 37: without its full year, not offered
    Row(DE, "Morgen um 14 Uhr?", "2026-08-04T14:00", "2026-08-04T15:00"),
    Row(DE, "Guten Morgen, passt Freitag um 10 Uhr?", "2026-08-07T10:00", "2026-08-07T11:00"),
    Row(DE, "Guten Abend Herr Müller, morgen um 10 Uhr passt.", "2026-08-04T10:00", "2026-08-04T11:00"),
    Row(DE, "Wie wäre es mit übermorgen gegen 15 Uhr?", "2026-08-05T15:00", "2026-08-05T16:00"),
    Row(DE, "Lass uns am 12.8.2026 essen gehen.", "2026-08-12", "2026-08-13"),
    Row(DE, "Lass uns am 12.8. essen gehen.", None),  # issue 37: without its full year, not offered
    Row(DE, "Heute Abend um 8?", "2026-08-03T20:00", "2026-08-03T21:00"),
    Row(DE, "Dienstag nächste Woche um 10 Uhr passt mir.", "2026-08-11T10:00", "2026-08-11T11:00"),
    Row(DE, "Kommenden Mittwoch um 14 Uhr im Büro?", "2026-08-05T14:00", "2026-08-05T15:00"),
    Row(DE, "Das Treffen ist am Freitag von 14 bis 16 Uhr.", "2026-08-07T14:00", "2026-08-07T16:00"),
    Row(DE, "Am 6. August um 3 Uhr nachmittags beim Zahnarzt.", "2026-08-06T15:00", "2026-08-06T16:00"),
    Row(DE, "Wir sehen uns am 2026-08-20 um 09:00.", "2026-08-20T09:00", "2026-08-20T10:00"),
    Row(DE, "Termin: 20.8.2026, 18:30 Uhr, Dauer 90 Minuten.", "2026-08-20T18:30", "2026-08-20T20:00"),
    Row(DE, "Passt dir Donnerstagabend um 7?", "2026-08-06T19:00", "2026-08-06T20:00"),
    Row(DE, "Können wir morgen früh um 8:30 telefonieren?", "2026-08-04T08:30", "2026-08-04T09:30"),
    Row(DE, "Am Samstag, 8. August, um 19 Uhr feiern wir, etwa drei Stunden lang.", "2026-08-08T19:00",
        "2026-08-08T22:00"),
    Row(DE, "Mittagessen am 10. August um 12 Uhr?", "2026-08-10T12:00", "2026-08-10T13:00"),
    Row(DE, "Die Besprechung beginnt am 11.08.2026 um 09:15 Uhr und dauert eine halbe Stunde.",
        "2026-08-11T09:15", "2026-08-11T09:45"),
    # issue 37: without its full year, not offered
    Row(DE, "Die Besprechung beginnt am 11.08. um 09:15 Uhr und dauert eine halbe Stunde.", None),
    Row(DE, "(Übermorgen) um 16 Uhr bei mir?", "2026-08-05T16:00", "2026-08-05T17:00"),
    Row(DE, "Wir treffen uns am 14. August 2026 um 13 Uhr.", "2026-08-14T13:00", "2026-08-14T14:00"),
    Row(DE, "Wie wäre es mit Montag, 10.08.2026, 11 Uhr?", "2026-08-10T11:00", "2026-08-10T12:00"),
    Row(DE, "Wie wäre es mit Montag, 10.08., 11 Uhr?", None),  # issue 37: without its full year, not offered
    Row(DE, "Um 15 Uhr am Donnerstag?", "2026-08-06T15:00", "2026-08-06T16:00"),
    Row(DE, "Ja, passt!\n\nFreitag um 11 Uhr wäre besser.\n\nAm 03.08.2026 um 08:00 schrieb Max <max@example.org>:\n"
        "> Treffen wir uns Freitag um 10 Uhr?", "2026-08-07T11:00", "2026-08-07T12:00"),
    Row(DE, "Können wir morgen um 14 Uhr telefonieren?", "2019-03-05T14:00", "2019-03-05T15:00",
        sent=datetime(2019, 3, 4, 10, 0, tzinfo=ZoneInfo(BERLIN))),
    Row(DE, "Sprechen wir am 2.11.2026 um 10 Uhr?", "2026-11-02T10:00", "2026-11-02T11:00"),
    Row(DE, "Sprechen wir am 2.11. um 10 Uhr?", None),  # issue 37: without its full year, not offered
    Row(DE, "Geht auch –Dienstag um 17:45?", "2026-08-04T17:45", "2026-08-04T18:45"),
    Row(DE, "Der Zoom-Call ist am 12. August von 13:00 bis 14:30 Uhr.", "2026-08-12T13:00", "2026-08-12T14:30"),
    Row(DE, "Am Freitag um 14 Uhr ist das Meeting.", "2026-08-07T14:00", "2026-08-07T15:00"),
    Row(DE, "Kein Problem, dann Freitag um 10 Uhr.", "2026-08-07T10:00", "2026-08-07T11:00"),
    Row(DE, "Am Montag, dem 10.8.2026 um 11 Uhr?", "2026-08-10T11:00", "2026-08-10T12:00"),
    Row(DE, "Am Montag, dem 10.8. um 11 Uhr?", None),  # issue 37: without its full year, not offered
    Row(EN, "Don't forget: Wednesday at 2:30pm in room 4.", "2026-08-05T14:30", "2026-08-05T15:30"),
    Row(EN, "I was wondering if Tuesday at 2pm works for you?", "2026-08-04T14:00", "2026-08-04T15:00"),
    # --- English, offered ------------------------------------------------------------------------------
    Row(EN, "Can we meet on August 4th at 2pm?", "2026-08-04T14:00", "2026-08-04T15:00"),
    Row(EN, "How about tomorrow at 2 p.m. for 90 minutes?", "2026-08-04T14:00", "2026-08-04T15:30"),
    Row(EN, "Let's do 8/12/2026 at 10:00.", "2026-08-12T10:00", "2026-08-12T11:00"),
    Row(EN, "Let's do 8/12 at 10:00.", None),  # issue 37: without its full year, not offered
    Row(EN, "Lunch on the 4th of August at noon?", "2026-08-04T12:00", "2026-08-04T13:00"),
    Row(EN, "See you tonight at 8", "2026-08-03T20:00", "2026-08-03T21:00"),
    Row(EN, "next Monday 1-3 pm works for me", "2026-08-10T13:00", "2026-08-10T15:00"),
    Row(EN, "Are you free on Friday at 9:30am?", "2026-08-07T09:30", "2026-08-07T10:30"),
    Row(EN, "Dinner on August 15 at 7:30 pm?", "2026-08-15T19:30", "2026-08-15T20:30"),
    Row(EN, "The review is on Tuesday, August 11 from 10am to 11:30am.", "2026-08-11T10:00", "2026-08-11T11:30"),
    Row(EN, "Call me tomorrow at 4 in the afternoon.", "2026-08-04T16:00", "2026-08-04T17:00"),
    Row(EN, "Let's meet on 4 August at 15:00 for an hour.", "2026-08-04T15:00", "2026-08-04T16:00"),
    Row(EN, "Coffee this Thursday at 10am?", "2026-08-06T10:00", "2026-08-06T11:00"),
    Row(EN, "Coffee this Thursday at 10:00?", "2026-08-06T10:00", "2026-08-06T11:00"),
    Row(EN, "Can we do the day after tomorrow at 11am?", "2026-08-05T11:00", "2026-08-05T12:00"),
    Row(EN, "Meeting on 2026-09-01 at 14:00 CEST.", "2026-09-01T14:00", "2026-09-01T15:00"),
    Row(EN, "The call is at 3pm PDT on Friday.", "2026-08-08T00:00", "2026-08-08T01:00"),
    Row(EN, "Wedding party on 8/22/2026 at 6 pm.", "2026-08-22T18:00", "2026-08-22T19:00"),
    Row(EN, "I booked the room for Wednesday at 14:00 for 45 minutes.", "2026-08-05T14:00", "2026-08-05T14:45"),
    Row(EN, "The dentist appointment is on 12.08.2026 at 10:00.", "2026-08-12T10:00", "2026-08-12T11:00"),
    Row(EN, "The dentist appointment is on 12.08. at 10:00.", None),  # issue 37: without its year, not offered
    Row(EN, "Let's talk tomorrow at 9am.", "2026-08-04T09:00", "2026-08-04T10:00", zone="America/New_York"),
    Row(EN, "Sounds good. Say, Thursday at 4pm, e.g. in the lobby?", "2026-08-06T16:00", "2026-08-06T17:00"),
    # --- traps: deadlines, offers, contracts, office hours ---------------------------------------------
    Row(DE, "Angebot endet Freitag!", None),
    Row(DE, "Angebot endet Freitag um 18 Uhr!", None),
    Row(DE, "Ihr Vertrag endet am 31.12.2026.", None),
    Row(DE, "Kündigung zum 30.09. möglich.", None),
    Row(DE, "Die Garantie läuft am 4. August 2027 ab.", None),
    Row(DE, "Bitte überweisen Sie den Betrag bis 15.08.", None),
    Row(DE, "Der Rabatt gilt nur heute bis 23:59 Uhr.", None),
    Row(DE, "Mo–Fr 9–17 Uhr erreichbar.", None),
    Row(DE, "Unsere Öffnungszeiten: Montag bis Freitag von 9 bis 17 Uhr.", None),
    Row(DE, "Brückentag: 14.08. – geschlossen.", None),
    Row(EN, "Offer ends Friday!", None),
    Row(EN, "Sale ends Sunday at midnight.", None),
    Row(EN, "Valid until 31.12.2026.", None),
    Row(EN, "Our office hours are Monday to Friday, 9am to 5pm.", None),
    Row(EN, "The contract renews on 1 September 2026.", None),
    Row(EN, "Payment is due on 15 August.", None),
    Row(EN, "Reply by Friday at 5pm.", None),
    Row(EN, "The deadline is August 15 at 23:59.", None),
    Row(EN, "Shop open until 8pm tonight.", None),
    # --- traps: numbers that look like dates or times --------------------------------------------------
    Row(DE, "Das kostet 14.99 Euro.", None),
    Row(DE, "Am Freitag kostet das 12.50 Euro.", None),
    Row(DE, "Version 2.4.1 ist ab sofort verfügbar.", None),
    Row(DE, "Ihre Sendungsnummer lautet 00340434161094042557.", None),
    Row(DE, "IBAN: DE89 3704 0044 0532 0130 00", None),
    Row(DE, "Wir sind seit 2019 Kunde bei Ihnen.", None),
    Row(DE, "Telefon: 089 14 30 22 11, Montag erreichbar.", None),
    Row(DE, "Kundennummer 12.10.2026", None),
    Row(DE, "Am Montag stieg der Kurs um 14 Prozent.", None),
    Row(DE, "Wir haben 24/7 Support.", None),
    Row(EN, "Price: $14.30 per unit, shipping tomorrow.", None),
    Row(EN, "Upgrade to version 10.12 today!", None),
    Row(EN, "The package with tracking number 1Z999AA10123456784 arrives tomorrow.", None),
    Row(EN, "Release 3.4.26 is out.", None),
    Row(EN, "Use aspect ratio 16:9 on Monday's slides.", None),
    Row(EN, "Call us at 555-0142 on Monday.", None),
    Row(EN, "Windows 10 may crash again.", None),  # not 10 May
    Row(EN, "Soldiers march 5 miles.", None),
    Row(DE, "Am 24.8.2026 so gegen 15 Uhr?", "2026-08-24T15:00", "2026-08-24T16:00"),
    Row(DE, "Am 24.8. so gegen 15 Uhr?", None),  # issue 37: without its full year, not offered
    # --- traps: quoted and forwarded text --------------------------------------------------------------
    Row(EN, "> Can we meet Friday at 10?", None),
    Row(EN, "Sounds good.\n\nOn Mon, Aug 3, 2026 at 9:00 AM Anna <anna@example.org> wrote:\n> Tuesday at 2pm?", None),
    Row(EN, "FYI\n\n---------- Forwarded message ---------\nFrom: Shop <shop@example.com>\nDate: Mon, Aug 3, 2026\n"
        "Subject: Party\n\nParty on Saturday at 8pm!", None),
    Row(DE, "Siehe unten.\n\n-------- Weitergeleitete Nachricht --------\nBetreff: Feier\nDatum: 03.08.2026\n\n"
        "Feier am Samstag um 20 Uhr!", None),
    Row(EN, "Thanks!\n\n-----Original Message-----\nFrom: Bob\nSent: Monday, August 3, 2026 8:00 AM\nTo: me\n"
        "Subject: Sync\n\nSync on Wednesday at 3pm?", None),
    Row(DE, "Danke!\n\nVon: Anna <anna@example.org>\nGesendet: Montag, 3. August 2026 08:00\nAn: mich\n"
        "Betreff: Termin\n\nTermin am Mittwoch um 15 Uhr?", None),
    Row(DE, "Danke dir!\n-- \nMax Mustermann\nSprechzeiten: Dienstag 10 bis 12 Uhr", None),
    # --- traps: past, far future, refusals, recurrences, ambiguity -------------------------------------
    Row(DE, "Am Montag haben wir besprochen, dass das Meeting künftig um 14 Uhr beginnt.", None),
    Row(DE, "Nächsten Mittwoch um 14 Uhr?", None),
    Row(DE, "Letzten Freitag um 14 Uhr war ich beim Arzt.", None),
    Row(DE, "Gestern um 15 Uhr hatten wir ein Gespräch.", None),
    Row(DE, "Ich kann am Dienstag um 10 Uhr leider nicht.", None),
    Row(DE, "Montag oder Dienstag um 14 Uhr?", None),
    Row(DE, "Am Freitag um 3?", "2026-08-07T15:00", "2026-08-07T16:00"),  # an hour before six is the afternoon
    Row(DE, "Guten Morgen!", None),
    Row(DE, "Ihre Bestellung vom 12.07. wurde versandt.", None),
    Row(DE, "Von 4.8. bis 8.8. bin ich im Urlaub.", None),
    Row(DE, "13. - 15. August Messe in Köln.", None),
    Row(DE, "Termin abgesagt: Donnerstag 15 Uhr.", None),
    Row(DE, "Am 4. August 2027 um 10 Uhr feiern wir.", None),
    Row(DE, "Wir haben am 2. Mai 2024 um 10 Uhr telefoniert.", None),
    Row(DE, "Jeden Montag um 9 Uhr ist Teamrunde.", None),
    Row(DE, "Montag um 14 Uhr?", None),  # sent on a Monday: today or in a week
    Row(EN, "Thanks for the meeting on August 1st at 10am.", None),
    Row(EN, "Every Monday at 9am we have standup.", None),
    Row(EN, "I was born on 4 August 1990.", None),
    Row(EN, "Call me at 3 tomorrow.", "2026-08-04T15:00", "2026-08-04T16:00"),
    Row(EN, "Dinner on Friday at 8?", None),  # 08:00 or 20:00: an English "at 8" does not say
    Row(EN, "We met yesterday at 2pm.", None),
    Row(EN, "The next day, Aug. 13, there was another warning at 9:00.", None),  # which year? a report
    Row(DE, "Am 12.8. um 10 Uhr war ich beim Arzt.", None),
    Row(EN, "September 6, 2026", None, sent=datetime(2026, 9, 6, 8, 0, tzinfo=ZoneInfo(BERLIN))),  # a dateline
    Row(EN, "Meeting on Monday at 2pm or Tuesday at 3pm?", None),
    Row(EN, "Let's meet on 13/08 at 10:00.", None),  # impossible as M/D: refused, never swapped
    Row(EN, "Good morning, today at 7:00 was early.", None),  # before the message was sent
]


def _offered(row: Row) -> list[tuple[str, str]]:
    facts = ProposalInput(
        message_key="<table@example.org>", owner_user_id=1, is_draft=False, category=Category.GENERAL,
        message_date=row.sent, body_text=row.text, to_addresses=("Me <me@example.org>",),
        account_addresses=frozenset({"me@example.org"}), time_zone=row.zone, language=row.language,
    )  # fmt: skip
    zone = ZoneInfo(row.zone)
    offered = []
    for proposal in EventProposer().decide(facts).proposals:
        start, end = proposal.start.astimezone(zone), proposal.end.astimezone(zone)
        if proposal.all_day:
            offered.append((start.date().isoformat(), end.date().isoformat()))
        else:
            offered.append((start.strftime("%Y-%m-%dT%H:%M"), end.strftime("%Y-%m-%dT%H:%M")))
    return offered


def test_the_table_is_large_and_mostly_traps() -> None:
    assert len(ROWS) >= 80
    assert sum(row.trap for row in ROWS) * 2 >= len(ROWS)
    assert {row.language for row in ROWS} == {DE, EN}


@pytest.mark.parametrize("row", ROWS, ids=[f"{i:03d}-{row.text[:40]}" for i, row in enumerate(ROWS)])
def test_sentence(row: Row) -> None:
    expected = [] if row.start is None else [(row.start, row.end)]
    assert _offered(row) == expected
