"""Day and month names, German and English, shared by the gate and the grammar.

One table for both, so the gate can never forget a name the parser reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import Enum

WEEKDAYS: dict[str, int] = {
    "montag": 0, "monday": 0,
    "dienstag": 1, "tuesday": 1,
    "mittwoch": 2, "wednesday": 2,
    "donnerstag": 3, "thursday": 3,
    "freitag": 4, "friday": 4,
    "samstag": 5, "sonnabend": 5, "saturday": 5,
    "sonntag": 6, "sunday": 6,
}  # fmt: skip

# Read only directly in front of an explicit date ("Di. 27.09.", "Fri, Aug 4"): alone, "so", "do",
# "sat" and "mi" are ordinary words.
WEEKDAY_ABBREVIATIONS: dict[str, int] = {
    "mo": 0, "mon": 0,
    "di": 1, "tue": 1, "tues": 1,
    "mi": 2, "wed": 2,
    "do": 3, "thu": 3, "thur": 3, "thurs": 3,
    "fr": 4, "fri": 4,
    "sa": 5, "sat": 5,
    "so": 6, "sun": 6,
}  # fmt: skip

MONTHS: dict[str, int] = {
    "januar": 1, "jänner": 1, "january": 1,
    "februar": 2, "february": 2,
    "märz": 3, "maerz": 3, "march": 3,
    "april": 4,
    "mai": 5, "may": 5,
    "juni": 6, "june": 6,
    "juli": 7, "july": 7,
    "august": 8,
    "september": 9,
    "oktober": 10, "october": 10,
    "november": 11,
    "dezember": 12, "december": 12,
}  # fmt: skip

# Ordinary English words as well as months ("you may", "to march"): only a month beside a day number.
MONTHS_NEEDING_A_NUMBER = frozenset({"may", "march"})

MONTH_ABBREVIATIONS: dict[str, int] = {
    "jan": 1, "feb": 2, "mär": 3, "mrz": 3, "mar": 3, "apr": 4, "jun": 6, "jul": 7,
    "aug": 8, "sep": 9, "sept": 9, "okt": 10, "oct": 10, "nov": 11, "dez": 12, "dec": 12,
}  # fmt: skip

LETTER = "a-zäöüß"


def alternation(words: Iterable[str]) -> str:
    """A regex alternation, longest first so a name is never cut to a shorter one."""
    return "|".join(re.escape(w) for w in sorted(words, key=lambda w: (-len(w), w)))


class DayPart(Enum):
    MORNING = "morning"
    NOON = "noon"
    AFTERNOON = "afternoon"
    EVENING = "evening"
    NIGHT = "night"


# The part of day a word names; it decides the hour of an ambiguous "um 3" or "at 8". Not "morgen"
# (tomorrow, unless an article makes it the morning) and not "früh" ("zu früh" is "too early").
DAY_PART_WORDS: dict[str, DayPart] = {
    "morgens": DayPart.MORNING, "morning": DayPart.MORNING, "vormittag": DayPart.MORNING, "vormittags": DayPart.MORNING,
    "mittag": DayPart.NOON, "mittags": DayPart.NOON, "midday": DayPart.NOON,
    "nachmittag": DayPart.AFTERNOON, "nachmittags": DayPart.AFTERNOON, "afternoon": DayPart.AFTERNOON,
    "abend": DayPart.EVENING, "abends": DayPart.EVENING, "evening": DayPart.EVENING, "tonight": DayPart.EVENING,
    "spätabend": DayPart.EVENING, "spätabends": DayPart.EVENING, "spätnachmittag": DayPart.AFTERNOON,
    "spätnachmittags": DayPart.AFTERNOON, "frühmorgens": DayPart.MORNING,
    "nacht": DayPart.NIGHT, "nachts": DayPart.NIGHT, "night": DayPart.NIGHT,
}  # fmt: skip

# Hours written as words: "um acht Uhr", "halb vier", "at six pm", "quarter past ten".
HOUR_WORDS: dict[str, int] = {
    "eins": 1, "ein": 1, "one": 1, "zwei": 2, "two": 2, "drei": 3, "three": 3, "vier": 4, "four": 4,
    "fünf": 5, "fuenf": 5, "five": 5, "sechs": 6, "six": 6, "sieben": 7, "seven": 7, "acht": 8, "eight": 8,
    "neun": 9, "nine": 9, "zehn": 10, "ten": 10, "elf": 11, "eleven": 11, "zwölf": 12, "zwoelf": 12, "twelve": 12,
}  # fmt: skip

_ENGLISH_UNITS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}
_ENGLISH_TEENS = {
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19,
}  # fmt: skip
_ENGLISH_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50}
# The minutes of a spoken English time ("nine thirty", "seven twenty-seven", "ten oh five"), from 1 to 59.
SPOKEN_MINUTES: dict[str, int] = {
    **{f"oh{joint}{word}": value for word, value in _ENGLISH_UNITS.items() for joint in (" ", "-")},
    **_ENGLISH_TEENS, **_ENGLISH_TENS,
    **{f"{tens}{joint}{unit}": tens_value + value for tens, tens_value in _ENGLISH_TENS.items()
       for unit, value in _ENGLISH_UNITS.items() for joint in (" ", "-")},
}  # fmt: skip
# English hour words only: a spoken time with its minutes is an English form.
ENGLISH_HOUR_WORDS: dict[str, int] = {**_ENGLISH_UNITS, "ten": 10, "eleven": 11, "twelve": 12}

_GERMAN_UNITS = {"ein": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9}
_GERMAN_TENS = {"zwanzig": 20, "dreißig": 30, "dreissig": 30, "vierzig": 40, "fünfzig": 50}
# The minutes after a German "Uhr" spoken out: "acht Uhr dreißig", "neun Uhr fünfundvierzig".
GERMAN_SPOKEN_MINUTES: dict[str, int] = {
    "eins": 1, **{k: v for k, v in _GERMAN_UNITS.items() if k != "ein"}, "zehn": 10, "elf": 11, "zwölf": 12,
    "dreizehn": 13, "vierzehn": 14, "fünfzehn": 15, "sechzehn": 16, "siebzehn": 17, "achtzehn": 18, "neunzehn": 19,
    **_GERMAN_TENS,
    **{f"{unit}und{tens}": unit_value + tens_value for unit, unit_value in _GERMAN_UNITS.items()
       for tens, tens_value in _GERMAN_TENS.items()},
}  # fmt: skip

_ORDINAL_UNITS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9,
}  # fmt: skip
# Days of the month as English ordinal words: "march eighteenth", "monday the twenty seventh".
ORDINAL_WORDS: dict[str, int] = {
    **_ORDINAL_UNITS, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14,
    "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20,
    "thirtieth": 30, "thirty first": 31, "thirty-first": 31,
    **{f"twenty{joint}{word}": 20 + value for word, value in _ORDINAL_UNITS.items() for joint in (" ", "-")},
}  # fmt: skip
# German ones, with the endings an article or preposition gives them: "am zwanzigsten August", "der erste Mai".
_GERMAN_ORDINAL_STEMS = {
    "erst": 1, "zweit": 2, "dritt": 3, "viert": 4, "fünft": 5, "fuenft": 5, "sechst": 6, "siebt": 7, "siebent": 7,
    "acht": 8, "neunt": 9, "zehnt": 10, "elft": 11, "zwölft": 12, "zwoelft": 12, "dreizehnt": 13, "vierzehnt": 14,
    "fünfzehnt": 15, "fuenfzehnt": 15, "sechzehnt": 16, "siebzehnt": 17, "achtzehnt": 18, "neunzehnt": 19,
    "zwanzigst": 20, "dreißigst": 30, "dreissigst": 30, "einunddreißigst": 31, "einunddreissigst": 31,
    **{f"{unit}undzwanzigst": 20 + value for unit, value in _GERMAN_UNITS.items()},
}  # fmt: skip
ORDINAL_WORDS |= {
    stem + ending: value for stem, value in _GERMAN_ORDINAL_STEMS.items() for ending in ("e", "en", "er", "em")
}

# What names a place an appointment can be at, as a whole word ("office", "Büro", "Kantine") or, in German, as
# the head of a compound ("Besprechungsraum", "Hauptbahnhof", "Zahnarztpraxis").
PLACE_WORDS = frozenset({
    "office", "room", "lobby", "reception", "cafe", "café", "restaurant", "bar", "pub", "hotel", "station",
    "airport", "terminal", "building", "bldg", "floor", "hall", "auditorium", "library", "museum", "theater",
    "theatre", "cinema", "park", "school", "university", "campus", "clinic", "hospital", "church", "gym", "studio",
    "lab", "kitchen", "place", "cafeteria", "canteen", "boardroom", "garden", "mall", "store", "shop", "bakery",
    "plaza",
    "raum", "zimmer", "büro", "saal", "halle", "foyer", "empfang", "eingang", "kantine", "mensa", "bistro", "kneipe",
    "bahnhof", "bahnsteig", "gleis", "flughafen", "praxis", "klinik", "apotheke", "friseur", "salon", "atelier",
    "werkstatt", "labor", "gebäude", "etage", "stockwerk", "kirche", "schule", "kita", "kindergarten", "uni",
    "universität", "bibliothek", "kino", "stadion", "garten", "platz", "laden", "geschäft", "filiale", "zentrale",
    "küche", "terrasse", "wohnung", "arzt", "ärztin",
})  # fmt: skip
PLACE_HEADS = (
    "raum", "zimmer", "büro", "saal", "halle", "kantine", "café", "cafe", "restaurant", "bahnhof", "praxis",
    "klinik", "haus", "kirche", "schule", "garten", "platz", "gebäude", "arzt", "ärztin", "laden", "hotel",
    "straße", "strasse", "allee", "gasse", "markt", "park", "stube",
)  # fmt: skip
# Compounds with a place's head that name no place: "im Zeitraum", "im Traum", "auf dem Arbeitsmarkt".
NOT_PLACE_COMPOUNDS = frozenset({
    "zeitraum", "spielraum", "freiraum", "traum", "alptraum", "albtraum", "lebensraum", "arbeitsmarkt",
    "haushalt", "vorhaus",
})  # fmt: skip
