"""Sentences and the author's own text."""

from __future__ import annotations

import pytest

from plmail.calendar.proposals import split_sentences, strip_quoted


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Treffen am 04.08. um 14 Uhr. Bis dann!", ["Treffen am 04.08. um 14 Uhr.", "Bis dann!"]),
        ("Um 14.30 Uhr geht es los. Danke.", ["Um 14.30 Uhr geht es los.", "Danke."]),
        ("Am 4. August passt es. Gut?", ["Am 4. August passt es.", "Gut?"]),
        ("Wir könnten z.B. am Montag reden. Oder nicht?", ["Wir könnten z.B. am Montag reden.", "Oder nicht?"]),
        ("Bring snacks, e.g. chips. Thanks!", ["Bring snacks, e.g. chips.", "Thanks!"]),
        ("Call at 2 p.m. tomorrow. OK?", ["Call at 2 p.m. tomorrow.", "OK?"]),
        ("Treffen ca. 15 Uhr. Gut.", ["Treffen ca. 15 Uhr.", "Gut."]),
        ("Mo. 19. Jun. 10:05 geht. Ja.", ["Mo. 19. Jun. 10:05 geht.", "Ja."]),
        ("Der Termin am 4.8.2026. Danach Pause.", ["Der Termin am 4.8.2026.", "Danach Pause."]),
        ("eine Zeile\numgebrochen. Zweiter Satz", ["eine Zeile umgebrochen.", "Zweiter Satz"]),
        ("Absatz eins\n\nAbsatz zwei", ["Absatz eins", "Absatz zwei"]),
        ("Vorschläge:\n- Montag 10 Uhr\n- Dienstag 11 Uhr", ["Vorschläge:", "- Montag 10 Uhr", "- Dienstag 11 Uhr"]),
    ],
)
def test_split_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_quoted_lines_go() -> None:
    assert strip_quoted("Gern.\n> Freitag 10 Uhr?\n>> älter\nBis dann") == "Gern.\nBis dann"


@pytest.mark.parametrize(
    "attribution",
    [
        "On Mon, Aug 3, 2026 at 9:00 AM Anna <anna@example.org> wrote:",
        "On Mon, Aug 3, 2026 at 9:00 AM Anna Beispiel\n<anna@example.org> wrote:",
        "Am 03.08.2026 um 09:00 schrieb Anna Beispiel <anna@example.org>:",
        "Am Mo., 3. Aug. 2026 um 09:00 Uhr schrieb Anna\nBeispiel <anna@example.org>:",
        "Anna <anna@example.org> writes:",
    ],
)
def test_top_post_attribution_ends_the_author_text(attribution: str) -> None:
    text = f"Passt mir.\n\n{attribution}\nFreitag um 10 Uhr?\nGruß Anna"
    assert strip_quoted(text).strip() == "Passt mir."


def test_bottom_post_keeps_the_reply_between_quotes() -> None:
    text = "On Mon, Aug 3 Anna wrote:\n> Freitag?\nJa, Freitag um 10.\n> Wo?\nBei mir."
    assert strip_quoted(text) == "Ja, Freitag um 10.\nBei mir."


@pytest.mark.parametrize(
    "marker",
    [
        "-----Original Message-----",
        "---------- Forwarded message ---------",
        "-------- Weitergeleitete Nachricht --------",
        "-----Ursprüngliche Nachricht-----",
        "Begin forwarded message:",
        "From: Anna <anna@example.org>\nSent: Monday, August 3, 2026 09:00\nTo: me\nSubject: Termin",
        "Von: Anna <anna@example.org>\nGesendet: Montag, 3. August 2026 09:00\nAn: mich\nBetreff: Termin",
        "-- ",
    ],
)
def test_forwarded_parts_header_blocks_and_signatures_go(marker: str) -> None:
    text = f"Siehe unten.\n\n{marker}\n\nParty am Samstag um 20 Uhr!"
    assert strip_quoted(text).strip() == "Siehe unten."


def test_a_from_line_alone_is_text() -> None:
    assert strip_quoted("From: the team, with love.\nSee you Friday.") == (
        "From: the team, with love.\nSee you Friday."
    )
