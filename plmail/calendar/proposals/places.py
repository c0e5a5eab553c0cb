"""The place a sentence names for its appointment: "at Cafe Lotte", "im Besprechungsraum 3", "bei Anna".

Precision first, as everywhere here: a missing place costs the user a few keystrokes, an invented one
("in Ordnung", "at the latest") makes the card look foolish. A place is read only in a shape that says
it is one, and never from text another reading already took ("at 5pm", "in 3 days", "in the morning").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from plmail.calendar.proposals.vocabulary import (
    LETTER,
    MONTH_ABBREVIATIONS,
    MONTHS,
    NOT_PLACE_COMPOUNDS,
    PLACE_HEADS,
    PLACE_WORDS,
    WEEKDAY_ABBREVIATIONS,
    WEEKDAYS,
)

MAX_PLACE_WORDS = 5
MAX_PLACE_CHARS = 60

_PREPOSITION = re.compile(
    rf"(?<![{LETTER}\w@])(?P<prep>at|@|in|im|in\s+der|in\s+dem|beim|bei|am|auf\s+der|auf\s+dem)(?:\s+|(?<=@))",
    re.IGNORECASE,
)
# One word of a place: a name, a number ("Raum 3", "4.12", "B2"), a few abbreviations that keep their dot.
_TOKEN = re.compile(rf"(?:dr|prof|st|str|nr)\.|[\w{LETTER}][\w{LETTER}'’&\-]*(?:[./]\d+)*", re.IGNORECASE)
_GAP = re.compile(r"[ \t]+")
_ARTICLES = frozenset({"the", "der", "die", "das", "dem", "den"})
_TITLES = frozenset({"herrn", "herr", "frau", "dr.", "prof.", "familie", "firma", "fam."})
_PRONOUNS = frozenset({"mir", "dir", "uns", "euch", "ihm", "ihr", "ihnen", "mich", "dich", "me", "you", "us"})
# Capitalised words after "at"/"in" that are times, languages or idioms, not places.
_NOT_NAMES = frozenset({
    *WEEKDAYS, *WEEKDAY_ABBREVIATIONS, *MONTHS, *MONTH_ABBREVIATIONS, "noon", "midnight", "christmas", "easter",
    "thanksgiving", "weihnachten", "ostern", "pfingsten", "silvester", "eod", "cob", "asap", "english", "german",
    "french", "spanish", "italian", "deutsch", "englisch", "französisch", "spanisch", "italienisch", "person",
    "general", "advance", "time", "total", "i", "q1", "q2", "q3", "q4",
})  # fmt: skip
# After "bei", a capitalised word is a person ("bei Anna") unless it is one of the nouns "bei" governs.
_NOT_PEOPLE = frozenset({
    "bedarf", "fragen", "rückfragen", "interesse", "problemen", "problem", "regen", "schnee", "gelegenheit",
    "bedenken", "unklarheiten", "ankunft", "abfahrt", "anreise", "abreise", "gefallen", "zeit", "erhalt", "anruf",
    "eintreffen", "bedarfsfall", "krankheit", "verhinderung", "nichtgefallen", "sonnenschein",
    "wind", "wetter", "kaffee", "tee", "bier", "wein",
})  # fmt: skip
_ABSTRACT_ENDINGS = ("ung", "heit", "keit", "schaft", "tion", "sion", "tät", "nis", "ismus", "ment", "enz", "anz")
# Words that mark a German sentence: there, "in" before a capitalised noun is as often an idiom ("in Ordnung",
# "in Kürze") as a city, so only a word that names a place is read after it.
_GERMAN_WORDS = frozenset({
    "der", "die", "das", "und", "wir", "ich", "um", "uhr", "ist", "sind", "bei", "im", "mit", "uns", "dich", "dir",
    "mir", "es", "ein", "eine", "einen", "können", "kannst", "treffen", "wie", "wäre", "passt", "sehen", "am",
})  # fmt: skip
_WORD = re.compile(rf"[{LETTER}]+", re.IGNORECASE)
_POSSESSIVE = re.compile(r"['’]s$")


def _place_word(token: str) -> bool:
    word = token.lower()
    if word in PLACE_WORDS:
        return True
    return word not in NOT_PLACE_COMPOUNDS and any(word.endswith(head) and len(word) > len(head) + 2
                                                   for head in PLACE_HEADS)  # fmt: skip


def _capitalised(token: str) -> bool:
    return token[:1].isupper() or token[:1].isdigit()


def _phrase(sentence: str, start: int, stops: Sequence[int]) -> list[tuple[str, int]]:
    """The words after a preposition up to the clause's end, a mention, or MAX_PLACE_WORDS words."""
    words: list[tuple[str, int]] = []
    position = start
    limit = min([s for s in stops if s >= start] + [len(sentence)])
    while len(words) < MAX_PLACE_WORDS:
        gap = _GAP.match(sentence, position)
        if gap:
            position = gap.end()
        m = _TOKEN.match(sentence, position)
        if not m or m.end() > limit:
            break
        words.append((m.group(0), m.end()))
        position = m.end()
    return words


def _read_place(prep: str, words: list[tuple[str, int]], german: bool) -> tuple[int, int] | None:
    """How many of the words are the place, and how many of them to drop in front (an article); None if no place."""
    if not words:
        return None
    first = 1 if words[0][0].lower() in _ARTICLES else 0
    rest = [w for w, _ in words[first:]]
    if not rest:
        return None
    if prep == "bei":
        return _person(rest, first, words)
    # A word naming a place, with what follows it that belongs to the name: "Besprechungsraum 3", "Café Lotte".
    if _place_word(rest[0]) or (first and _place_word(rest[0].rstrip("s"))):
        length = 1
        while length < len(rest) and _capitalised(rest[length]):
            length += 1
        return first, first + length
    if prep in ("im", "beim", "am", "in der", "in dem", "auf der", "auf dem") or (prep == "in" and german):
        return None
    # A name after "at", "@" or an English "in": "at Cafe Lotte", "in Berlin", "@ Chestnut Run Plaza Bldg 450".
    if not rest[0][:1].isupper() or _POSSESSIVE.sub("", rest[0].lower()) in _NOT_NAMES:
        return None
    length = 1
    while length < len(rest) and (_capitalised(rest[length]) or rest[length] == "&"):
        length += 1
    if length < len(rest) and _place_word(rest[length]):
        length += 1  # "at the Marriott hotel", "at Anna's place"
    return first, first + length


def _person(rest: list[str], first: int, words: list[tuple[str, int]]) -> tuple[int, int] | None:
    """ "bei Anna", "bei Herrn Müller", "bei Dr. Weber": a person's place, named by the person."""
    if first or rest[0].lower() in _PRONOUNS:
        return None
    index = 0
    while index < len(rest) - 1 and rest[index].lower() in _TITLES:
        index += 1  # "bei Herrn Dr. Weber"
    names = 0
    while index + names < len(rest) and names < 2 and rest[index + names][:1].isupper():
        name = rest[index + names].lower()
        if name in _NOT_PEOPLE or name in _TITLES or name.endswith(_ABSTRACT_ENDINGS) or _place_word(name):
            return None
        names += 1
    if not names:
        return None
    following = rest[index + names].lower() if index + names < len(rest) else ""
    if following in ("der", "des", "die", "dem", "den", "eines", "einer"):
        return None  # "bei Eingang der Zahlung": a noun with its genitive, not a person
    return 0, index + names


def find_place(sentence: str, taken: Sequence[tuple[int, int]]) -> str | None:
    """The place the sentence names, or None when it names none, or two different ones.

    `taken` are the spans of the days, times and parts of the day read from the sentence; a preposition
    inside one ("at 5pm", "in 3 Tagen", "in the morning") names no place, and a place ends where one starts.
    """
    vocabulary = {w.lower() for w in _WORD.findall(sentence)}
    german = not _GERMAN_WORDS.isdisjoint(vocabulary)
    stops = sorted(start for start, _ in taken)
    found: list[str] = []
    for m in _PREPOSITION.finditer(sentence):
        if any(start <= m.start() < end for start, end in taken):
            continue
        prep = " ".join(m["prep"].lower().split())
        words = _phrase(sentence, m.end(), stops)
        span = _read_place(prep, words, german)
        if span is None:
            continue
        drop, keep = span
        begin = m.end() if drop == 0 else words[drop - 1][1]
        text = " ".join(sentence[begin : words[keep - 1][1]].split())
        if prep == "bei":
            text = f"{m['prep']} {text}"
        if len(text) <= MAX_PLACE_CHARS:
            found.append(text)
    return found[0] if len(set(found)) == 1 else None
