"""Wording that turns a correctly read date into something that is not an appointment.

These are reading rules, not noise rules: they say what a sentence means ("Angebot endet Freitag" names
a deadline, "Mo–Fr 9–17 Uhr" office hours, "letzten Montag" the past). Whether a message may be offered
anything at all is decided in one place only, the proposer.
"""

from __future__ import annotations

import re

from plmail.calendar.proposals.vocabulary import MONTH_ABBREVIATIONS, MONTHS, WEEKDAYS, alternation

_WORD = re.compile(r"[a-zäöüß]+(?:'[a-z]+)?")

# A deadline, a validity, a contract term, a recurrence, a refusal or a cancellation: the date is real,
# the appointment is not.
_SENTENCE_VETO = frozenset(
    {
        # German
        "endet", "enden", "endete", "beendet", "abgelaufen", "abläuft", "ablauf", "ablaufdatum", "läuft",
        "gültig", "gültigkeit", "gilt", "gelten", "frist", "fristen", "deadline", "einsendeschluss",
        "anmeldeschluss", "annahmeschluss", "bewerbungsschluss", "abgabeschluss", "redaktionsschluss",
        "meldeschluss", "buchungsschluss", "fällig", "fälligkeit", "spätestens",
        "kündigung", "kündigen", "gekündigt", "kündigungsfrist", "vertrag", "vertrages", "vertrags",
        "vertragsende", "vertragslaufzeit", "laufzeit", "mindestlaufzeit", "garantie", "gewährleistung",
        "öffnungszeiten", "geöffnet", "geschlossen", "sprechzeiten", "sprechstunde", "sprechstunden",
        "servicezeiten", "erreichbar", "jeden", "jede", "jeder", "jedes", "täglich", "wöchentlich",
        "monatlich", "jährlich", "immer", "regelmäßig", "rabatt", "gutschein", "aktion", "angebot", "angebote",
        "zahlbar", "überweisung", "abbuchung", "lastschrift", "rechnung", "rechnungsdatum", "nicht", "kein",
        "keine", "keinen", "keinem", "leider", "abgesagt", "absagen", "storniert", "storno", "ausgefallen",
        "entfällt", "entfallen", "seit",
        # English
        "ends", "ended", "ending", "expire", "expires", "expired", "expiry", "expiration", "valid", "validity",
        "due", "overdue", "contract", "renewal", "renew", "renews", "renewed", "warranty", "guarantee",
        "cancel", "cancelled", "canceled", "cancellation", "every", "each", "daily", "weekly", "monthly",
        "yearly", "always", "sale", "discount", "coupon", "promo", "offer", "offers", "invoice", "payment",
        "paid", "billed", "not", "cannot", "can't", "won't", "unable", "unfortunately", "don't", "doesn't",
        "isn't", "since", "happened", "close", "closes", "closing", "schließt", "schließen",
    }
)  # fmt: skip
_PHRASE_VETO = re.compile(
    r"\b(?:office|opening|business|support|service)\s+hours\b|\bopen\s+(?:from|until|till)\b|\bclosed\s+on\b"
    r"|\b(?:or|and)\s+(?:later|after|earlier|before)\b|\b(?:oder|und)\s+(?:später|danach|früher|davor)\b"
    r"|\bat\s+the\s+(?:latest|earliest)\b|\bno\s+later\s+than\b|\bborn\b|\bgeboren\b"
    r"|\bf(?:ä|ae)llt\b[^.;!?]{0,60}\baus\b|\bfallen\b[^.;!?]{0,60}\baus\b",  # "der Termin … fällt aus": cancelled
    re.IGNORECASE,
)
# Relative words ("Freitag", "morgen") take their day from the message; in a past-tense sentence that
# day is already behind the writer.
_PAST = frozenset(
    {
        "war", "waren", "warst", "wart", "hatte", "hatten", "hattest", "gestern", "vorgestern", "letzte",
        "letzten", "letzter", "letztes", "letztem", "vergangene", "vergangenen", "vergangener", "vorige",
        "vorigen", "gab", "gabs", "yesterday", "last", "ago", "previous", "had", "did", "went", "met", "was", "were",
    }
)  # fmt: skip
# Negations that agree rather than refuse ("Kein Problem, dann Freitag um 10", "don't forget: Monday 2pm"),
# and past forms that ask about the future ("I was wondering if Tuesday at 2pm works").
_HARMLESS_NEGATION = re.compile(
    r"\b(?:kein(?:e)?\s+(?:problem|ursache|thema|stress)|no\s+(?:problem|worries)|not\s+a\s+problem|"
    r"nicht\s+vergessen|vergiss\s+nicht|vergessen\s+sie\s+nicht|don't\s+forget|do\s+not\s+forget|"
    r"warum\s+nicht|why\s+not|(?:was|were)\s+(?:wondering|hoping|thinking|going\s+to))\b"
)
# A request to book points ahead: "Book meeting room on 14th Feb" is the next 14 February, never one behind.
_BOOKING_REQUEST = re.compile(
    r"(?:^|[,;:]\s*|\b(?:please|pls|kindly|you|me|to|let's|let\s+us)\s+)(?:please\s+)?(?:book|schedule|reserve)\b"
    r"|\b(?:buche|buchen|reserviere|reservieren)\b",
    re.IGNORECASE,
)
_ALTERNATIVES = frozenset({"oder", "or", "alternativ", "alternatively", "either", "bzw", "beziehungsweise", "sonst",
                           "ansonsten", "otherwise"})
# Moving an appointment names the old time beside the new one ("moved from 10am to 11am", "von 10 auf 11 Uhr
# verschoben"): which is which is not ours to guess.
_RESCHEDULING = frozenset({"moved", "moves", "move", "moving", "push", "pushed", "postpone", "postponed", "reschedule",
                           "rescheduled", "rescheduling", "verschoben", "verschiebt", "verschieben", "schieben",
                           "verlegt", "verlegen", "vorverlegt", "vorziehen", "umgelegt"})
# "heute vor einer Woche", "vor zwei Tagen": counted back from the message, in the past like "ago".
_COUNTED_BACK = re.compile(
    r"\bvor\s+(?:einer|einem|\d{1,2}|zwei|drei|vier|fünf|sechs|sieben|acht|zehn|vierzehn)\s+"
    r"(?:wochen?|tag(?:en)?|monat(?:en)?|jahr(?:en)?)\b",
    re.IGNORECASE,
)

# Directly before a day: the day is a bound or a reference, not the day of an event.
_DAY_CONTEXT_BEFORE = re.compile(
    r"\b(?:bis|until|till|through|thru|by|before|vor|ab|seit|since|vom|from|nach|after|dated|datiert|spätestens|"
    r"latest|frühestens|earliest|than|als|zum|between|zwischen|next|last|n(?:ä|ae)chste[nmrs]?|letzte[nmrs]?|"
    r"week\s+of|week\s+(?:beginning|starting|commencing)|w/c|starting|beginning|commencing|woche\s+vom|kw|"
    r"(?:date|datum|sent|gesendet|posted|created|erstellt|updated|aktualisiert|modified|published|filed)\s*:?)"
    r"\s+(?:(?:zum|dem|den|the|am|on|from)\s+)?$",
    re.IGNORECASE,
)
_RANGE_WORD = r"(?:-|–|—|/|&|,|bis(?:\s+zum)?|to|till|until|through|thru|auf(?:\s+den)?|and|und|or|oder)"
_MONTH_OR_WEEKDAY = alternation([*MONTHS, *MONTH_ABBREVIATIONS, *WEEKDAYS])
# A day that ends or continues a span or a list: "13. - 15. Juli", "vom 21 auf 22 November", "Nov-Feb 5th",
# "July 17th, 18th, or 19th", "april 9th through 17th". Which of the days is meant is not in the text.
# "22, 23 Apr" lists two days; in "16:00, 23 Apr" the "00" is a time's minutes, not a day.
_RANGE_BEFORE = re.compile(
    rf"(?:(?<!:)\b\d{{1,2}}(?:\.|st|nd|rd|th)?|\b(?:{_MONTH_OR_WEEKDAY})\.?)\s*{_RANGE_WORD}\s*(?:(?:the|den|dem|zum)\s+)?$",
    re.IGNORECASE,
)
_ORDINAL_WORDS = (
    r"first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|\w+teenth|twentieth|"
    r"thirtieth|twenty[- ]\w+|thirty[- ]\w+"
)
_RANGE_AFTER = re.compile(
    rf"\s*{_RANGE_WORD}\s*(?:(?:the|den|zum)\s+)?(?:\d{{1,2}}(?:\.(?!\d)|st\b|nd\b|rd\b|th\b)|(?:{_ORDINAL_WORDS})\b)"
    r"|\s*[-–]\s*\d{1,2}\b(?![:.]\d)"
    r"|\s*,?\s*(?:or|oder|and|und)\s+(?:\w+\s+){0,2}?(?:the\s+|den\s+)?\d{1,2}(?:st|nd|rd|th|\.)"
    r"|\s*,?\s*(?:of|in)\s+'?\d|\s+(?:nineteen|twenty|eighteen|seventeen|sixteen)\b",
    re.IGNORECASE,
)
# "from Jul24 to Jul 25th", "between now and November 15th": the far end of a span.
_SPAN_END_BEFORE = re.compile(
    r"\b(?:from|vom|von|between|zwischen)\b[^.!?]{0,40}\b(?:and|und|to|bis|until|till)\s+(?:(?:the|dem|den|zum)\s+)?$",
    re.IGNORECASE,
)
# A number right before a date: "14te April 15", "Zimmer 12 4.8." — which number is the day is not clear.
_NUMBER_RIGHT_BEFORE = re.compile(r"(?<![\d.:/\-])\b\d+(?:te[nr]?|st|nd|rd|th)?\.?\s+$", re.IGNORECASE)
_RANGE_BETWEEN = re.compile(r"(?:^|\s)(?:-|–|—|bis|to|till|until|through|thru|auf)(?:\s|$)", re.IGNORECASE)
# In a sentence with a date alone, these say there is a time of day without saying which: "05.09. später",
# "am 27.10. gegen Mitternacht", "between 3 and 5 on 1/1/2015", "am Morgen des 15. Februar".
_VAGUE_TIME = re.compile(
    r"\b(?:später|spät|späten|früher|früh|frühe|frühen|later|late|early|earlier|mitternacht|midnight|noon|"
    r"spätabends?|frühmorgens|spätnachmittags?|am\s+(?:morgen|abend|nachmittag|vormittag|mittag)|morgen\s+des|"
    r"(?:between|zwischen)\s+\d)\b",
    re.IGNORECASE,
)
# After a day, digits that are no time we could read ("27.10.2017 20-21", "12 Nov 1115") mean an unread time.
_DIGITS_AFTER = re.compile(r"\s*[,(\-–]?\s*(?:[\w.@]+,?\s+){0,2}\d", re.IGNORECASE)

# Next to these, digits are a number, a price or an identifier, not a date or a time.
_NUMBER_BEFORE = re.compile(
    r"(?:\b(?:tel|telefon|phone|fax|mobil|mobile|handy|nr|no|nummer|number|kundennummer|sendungsnummer|"
    r"tracking|iban|bic|blz|version|ver|v|release|build|ticket|order|bestellung|bestellnummer|artikel|art|id|"
    r"ref|az|aktenzeichen|preis|price|kostet|costs|cost|betrag|amount|total|summe|kontonummer|plz|"
    r"kapitel|chapter|seite|page|paragraph|abs|§)\b\.?:?\s*(?:\S+\s+)?|[#€$£+]\s*|\b(?!(?:19|20)\d\d\b)\d{3,}\s+)$",
    re.IGNORECASE,
)
_NUMBER_AFTER = re.compile(
    r"\s*(?:€|eur\b|euro|\$|usd\b|chf\b|£|%|prozent|percent|[-–]\s*\d{3}|/\s*\d|\d{3,})", re.IGNORECASE
)


def words(sentence: str) -> set[str]:
    """The sentence's words, without the negations that are only politeness ("kein Problem")."""
    return set(_WORD.findall(_HARMLESS_NEGATION.sub(" ", sentence.lower())))


# German makes a deadline of any noun: "Abgabefrist", "Rückmeldefrist", "Zahlungsfristen".
_DEADLINE_COMPOUND_ENDS = ("frist", "fristen")


def sentence_vetoed(vocabulary: set[str], sentence: str) -> bool:
    return (not _SENTENCE_VETO.isdisjoint(vocabulary) or _PHRASE_VETO.search(sentence) is not None
            or any(word.endswith(_DEADLINE_COMPOUND_ENDS) for word in vocabulary))


# What happened, told in the past: "The package arrived on Friday at 10am", "Wir haben uns am Freitag um 10 Uhr
# getroffen". Only verbs of something that took place at that time, and that rarely stand in a sentence about
# another day: not arranging ("booked", "gebucht"), telling, sending, getting or talking ("She said Friday at 3pm
# works", "We talked about Friday at 3pm"), nor the excuses before a new proposal ("I missed your call; Friday at 3?").
_HAPPENED = frozenset(
    {
        "arrived", "delivered", "landed", "departed", "visited", "attended", "occurred",
        "kam", "kamen", "traf", "trafen", "lieferte", "landete", "besuchte", "besuchten",
        "angekommen", "getroffen", "geliefert", "gelandet", "besucht", "gewesen", "passiert",
    }
)  # fmt: skip
# "I sent the agenda for the meeting on Friday at 3pm": the act is past, the day it names is ahead.
_FOR_A_DAY = re.compile(r"\b(?:for|für)\b", re.IGNORECASE)


def past_tense(vocabulary: set[str], sentence: str) -> bool:
    """The sentence tells of the past: a past form of "to be" or "to have", or a verb of what happened, unless
    "for"/"für" points the day ahead of the act."""
    if not _PAST.isdisjoint(vocabulary):
        return True
    return not _HAPPENED.isdisjoint(vocabulary) and _FOR_A_DAY.search(sentence) is None


def asks_to_book(sentence: str) -> bool:
    return _BOOKING_REQUEST.search(sentence) is not None


def offers_alternatives(vocabulary: set[str]) -> bool:
    return not _ALTERNATIVES.isdisjoint(vocabulary)


def reschedules(vocabulary: set[str]) -> bool:
    return not _RESCHEDULING.isdisjoint(vocabulary)


def counts_back(sentence: str) -> bool:
    return _COUNTED_BACK.search(sentence) is not None


# "Statt Dienstag um 10 Uhr … Mittwoch um 11 Uhr", "instead of Tuesday at 10am": the day given up.
_REPLACED_BEFORE = re.compile(
    r"\b(?:statt|anstatt|anstelle\s+von|instead\s+of|rather\s+than|not\s+on|nicht\s+(?:am|mehr\s+am))\s+"
    r"(?:(?:am|on|dem|den|the)\s+)?$",
    re.IGNORECASE,
)


def replaced_before(sentence: str, start: int) -> bool:
    return _REPLACED_BEFORE.search(sentence, max(0, start - 30), start) is not None


def bound_before(sentence: str, start: int) -> bool:
    """The day is preceded by "bis", "ab", "vom", "by", "since"…: a bound or a reference date."""
    return _DAY_CONTEXT_BEFORE.search(sentence, max(0, start - 40), start) is not None


def in_a_span(sentence: str, start: int, end: int) -> bool:
    """The day is one end of a span or one item of a list of days."""
    window = max(0, start - 60)
    return (
        _RANGE_BEFORE.search(sentence, window, start) is not None
        or _SPAN_END_BEFORE.search(sentence, window, start) is not None
        or _RANGE_AFTER.match(sentence, end) is not None
    )


def number_right_before(sentence: str, start: int) -> tuple[int, int] | None:
    """A number written right before a day or a time ("14te April 15", "09 00 Uhr"); the caller knows
    whether it belongs to a date or time it has read."""
    m = _NUMBER_RIGHT_BEFORE.search(sentence, max(0, start - 20), start)
    return (m.start(), m.end()) if m else None


def joins_a_range(sentence: str, end: int, next_start: int) -> bool:
    """Two days with a range word between them, a time or two in the middle allowed ("16:00, 23 Apr - 27 Apr")."""
    between = sentence[end:next_start]
    return len(between) <= 40 and _RANGE_BETWEEN.search(between) is not None


def vague_time(sentence: str) -> bool:
    return _VAGUE_TIME.search(sentence) is not None


def unread_digits_after(sentence: str, end: int) -> bool:
    return _DIGITS_AFTER.match(sentence, end) is not None


def looks_like_a_number(sentence: str, start: int, end: int, *, time_follows: bool = False) -> bool:
    """Phone numbers, prices, versions, identifiers: digits that only look like a date or a time.

    `time_follows` says the digits after are a time read on their own ("Jun 7 1440-1825"), not more of a number."""
    before = sentence[max(0, start - 40) : start]
    if _NUMBER_BEFORE.search(before) is not None:
        return True
    return not time_follows and _NUMBER_AFTER.match(sentence, end) is not None
