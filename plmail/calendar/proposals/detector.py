"""Stage two: read a day, and perhaps a time, from the sentences a person wrote."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta
from itertools import pairwise
from zoneinfo import ZoneInfo

from plmail.calendar.proposals import cues
from plmail.calendar.proposals.clock_mentions import ClockMention, PartMention, deadline_before
from plmail.calendar.proposals.clocks import find_clocks, find_parts, resolve_hour
from plmail.calendar.proposals.day_mentions import DayKind, DayMention
from plmail.calendar.proposals.days import find_days, month_left_open
from plmail.calendar.proposals.durations import DurationMention, find_durations
from plmail.calendar.proposals.gate import DateShapeGate
from plmail.calendar.proposals.places import find_place
from plmail.calendar.proposals.text import Words as _Tokens
from plmail.calendar.proposals.text import split_sentences, strip_quoted
from plmail.calendar.proposals.titles import guess_title
from plmail.calendar.proposals.vocabulary import DayPart
from plmail.calendar.proposals.weekdays import next_weekday_with_its_date
from plmail.calendar.proposals.zones import zone_after
from plmail.domain.calendar import DetectionRequest, ProposalCandidate
from plmail.domain.enums import Locale

# A date and a time with more words than this between them are not read as one moment: "Am Montag ist
# Feiertag, deshalb verschieben wir das auf 10 Uhr" does not mean Monday at ten.
MAX_JOIN_TOKENS = 4
# A part-of-day word must touch its time: "Guten Abend Herr Müller, morgen um 10" is not 22:00.
MAX_PART_TOKENS = 1
DEFAULT_LENGTH = timedelta(hours=1)
# "vom 22.09. um 15 Uhr bis 24.09. um 11 Uhr" is a stay; one of weeks is a season, not an event to offer.
MAX_SPAN = timedelta(days=14)
# "tonight at 1am": a written hour before this, after an evening day, is that night's, on the next calendar day.
_SMALL_HOURS_END = 5
_JUST_AFTER = re.compile(r"[\s,]*")
_SPAN_OPENER = re.compile(r"\b(?:vom|von|ab|from)\s+(?:(?:dem|den|the)\s+)?$", re.IGNORECASE)
# A time whose own match begins with the word that opens a span: "from 2pm".
_OPENS_ITSELF = re.compile(r"from\s", re.IGNORECASE)
# Between the first day's time and the second day of a span: "15:00 Uhr bis 24.09.", "(14:00) - 30.11".
_SPAN_BETWEEN = re.compile(
    r"[\s,()]*(?:-|–|—|bis(?:\s+zum)?|to|till|until|untill|til|through)[\s,]*(?:(?:zum|the|den|dem)\s+)?", re.IGNORECASE
)
# A time written before its day: "16:00, 23 Apr".
_TIME_THEN_DAY = re.compile(r"\s*,\s*")
# Between a span's first time and the day both times are on: "from 2pm on Friday", "von 14 Uhr am Freitag".
_TIME_ON_DAY = re.compile(r"[\s,]*(?:(?:on|am)\s+)?", re.IGNORECASE)
_WINDOW_OPENER = re.compile(r"\b(?:between|zwischen)\s+$", re.IGNORECASE)
_WINDOW_JOIN = re.compile(r"\s*(?:and|und)\s+", re.IGNORECASE)
_APPOSITION = re.compile(r"[\s,(]*(?:(?:den|dem|the|der|also|i\.e\.|d\.h\.)[\s,]+)?[\s,(]*", re.IGNORECASE)


@dataclass(slots=True)
class _Day:
    mention: DayMention
    usable: bool
    clocks: list[_Clock]


@dataclass(slots=True)
class _Clock:
    mention: ClockMention
    usable: bool
    paired: bool = False


def _span(item: DayMention | ClockMention | PartMention | DurationMention) -> tuple[int, int]:
    return item.start, item.end


class DeterministicDateDetector:
    """Rules over German and English sentences, precision first: an unclear reading is no reading.

    A wrong proposal costs more than a missed one, so ambiguity refuses: a bare 6, 7 or 8 that may be
    the evening (see resolve_hour), "next Thursday" inside the current week, a D/M date that is
    impossible in the user's order, two times competing for one day, a date next to a price or a phone
    number. A relative day or a weekday
    alone names no appointment ("Angebot endet Freitag!"); it needs a time. What the sentence writes
    beside its start is kept: the end of a range ("14–16 Uhr", "zwischen 14 und 16 Uhr") or a length,
    and the place it names.
    """

    name = "deterministic"

    def __init__(self, *, skip_shapeless_sentences: bool = True) -> None:
        """`skip_shapeless_sentences` lets the gate pass over sentences with no date shape; switching it off
        exists so a test can show that nothing the detector reads is ever one the gate would have skipped."""
        self._gate = DateShapeGate() if skip_shapeless_sentences else None

    def detect(self, request: DetectionRequest) -> tuple[ProposalCandidate, ...]:
        zone = ZoneInfo(request.time_zone)
        reference = request.message_date.astimezone(zone).date()
        # "morgen" counts from the writer's day. A Date header with a real offset that puts the message on
        # another calendar day than the user's zone leaves "tomorrow" meaning two days; +00:00 says
        # nothing about the writer (servers and storage normalise to UTC), so it is trusted as the user's.
        writer_day = request.message_date.date()
        other_day = request.message_date.utcoffset() != timedelta(0) and writer_day != reference
        found: list[ProposalCandidate] = []
        seen: set[tuple[datetime, bool]] = set()
        own_text = request.text if request.quotes_removed else strip_quoted(request.text)
        month_written = not month_left_open(own_text)
        for sentence in split_sentences(own_text):
            if self._gate is not None and not self._gate.admits(sentence):
                continue
            for candidate in self._read_sentence(sentence, reference, zone, request, other_day, writer_day,
                                                   month_written):
                key = (candidate.start, candidate.all_day)
                if key not in seen:
                    seen.add(key)
                    found.append(candidate)
        return tuple(found)

    def _read_sentence(
        self,
        sentence: str,
        reference: date,
        zone: ZoneInfo,
        request: DetectionRequest,
        other_day: bool,
        writer_day: date,
        month_written: bool,
    ) -> list[ProposalCandidate]:
        vocabulary = cues.words(sentence)
        past = cues.past_tense(vocabulary, sentence) or cues.counts_back(sentence)
        mentions = find_days(sentence, reference, request.language, relative_refused=other_day or past, past_tense=past,
                             booking=not past and cues.asks_to_book(sentence), month_written=month_written)
        if not mentions or cues.sentence_vetoed(vocabulary, sentence):
            return []
        clock_mentions = [c for c in find_clocks(sentence) if self._clock_stands(sentence, c, mentions)]
        if not clock_mentions:
            clock_mentions = _noon_of_its_day(sentence, mentions)
        mentions = [d for d in mentions if not any(_overlap(_span(d), _span(c)) for c in clock_mentions)]
        if not mentions:
            return []
        if cues.offers_alternatives(vocabulary) and len(mentions) + len(clock_mentions) > 2:
            return []
        if cues.reschedules(vocabulary) and (len(mentions) + len(clock_mentions) > 2
                                             or any(c.length for c in clock_mentions)):
            return []  # the old time and the new one: "Tuesday 10am moved to 11am", "von 10 auf 11 Uhr verschoben"
        days = [_Day(d, self._day_usable(sentence, d, mentions, clock_mentions, reference), []) for d in mentions]
        clocks = [_Clock(c, self._clock_usable(sentence, c, mentions)) for c in clock_mentions]
        tokens = _Tokens(sentence)
        self._pair(days, clocks, tokens, sentence)
        for day in days:
            for clock in day.clocks:
                zoned = _zone_after_its_day(sentence, day.mention, clock.mention)
                clock.usable = clock.usable and zoned is not None
                clock.mention = zoned or clock.mention
        # A sentence that writes a time we did not join to its day is not an all-day matter.
        any_clock = any(c.paired or not _needs_its_day(c.mention) for c in clocks)
        parts = find_parts(sentence)
        # "10 Minuten nach 8" is a time, not a length.
        durations = [d for d in find_durations(sentence)
                     if not any(_overlap(_span(d), _span(c)) for c in clock_mentions)]
        german = request.language is Locale.DE
        # Written at 00:30, "tonight at 1am" is within the hour: the night the writer is in, not the next one.
        written = request.message_date.astimezone(zone)
        already_night = written.date() if written.hour < _SMALL_HOURS_END else None
        candidates, spanned = self._spans(sentence, days, parts, tokens, zone, request)
        for day in days:
            when = day.mention.day
            if when is None and day.mention.if_passed is not None and len(day.clocks) == 1 and day.clocks[0].usable:
                today = self._resolve(reference, day.clocks[0].mention, day.mention, parts, tokens, zone, german=german)
                when = day.mention.if_passed if today is not None and today <= request.message_date else None
            if id(day) in spanned or not day.usable or when is None or len(day.clocks) > 1:
                continue
            if not self._agrees(day, days, sentence):
                continue
            if day.mention.clock is not None:
                if day.clocks:
                    continue  # "2026-08-04T10:00, besser 11 Uhr": two times for one day
                start = _at(when, time(*day.mention.clock), zone)
                candidates.append(self._timed(start, None, durations, 90, sentence, request))
                if day.mention.last_day is not None:
                    candidates[-1] = _to_last_day(candidates[-1], day.mention.last_day, zone)
            elif day.clocks:
                clock = day.clocks[0]
                if not clock.usable:
                    continue
                resolved = self._resolve(when, clock.mention, day.mention, parts, tokens, zone, german=german,
                                         already_night=already_night)
                if resolved is None:
                    continue
                confidence = 90 if day.mention.kind is DayKind.EXPLICIT else 80
                candidates.append(
                    self._timed(resolved, clock.mention.length, durations, confidence, sentence, request)
                )
                if day.mention.last_day is not None:
                    candidates[-1] = _to_last_day(candidates[-1], day.mention.last_day, zone)
            # A calendar date alone naming the day the message was written is its dateline ("September 6,
            # 2002" under a newsletter's masthead), not an appointment; a later one may be.
            elif len(days) == 1 and when > max(reference, writer_day) and self._all_day(
                sentence, day.mention, any_clock, parts
            ):
                start = _at(when, time(0, 0), zone)
                end = _at(when + timedelta(days=1), time(0, 0), zone)
                title = guess_title(request.subject, sentence)
                candidates.append(ProposalCandidate(start, end, True, request.time_zone, 60, sentence, title))
        if not candidates:
            return []
        taken = [*map(_span, mentions), *map(_span, clock_mentions), *map(_span, parts), *map(_span, durations)]
        place = find_place(sentence, taken)
        return [replace(c, location=place) for c in candidates] if place else candidates

    def _spans(
        self,
        sentence: str,
        days: list[_Day],
        parts: list[PartMention],
        tokens: _Tokens,
        zone: ZoneInfo,
        request: DetectionRequest,
    ) -> tuple[list[ProposalCandidate], set[int]]:
        """A day with its time to another day with its time: "vom 22.09. um 15 Uhr bis 24.09. um 11 Uhr",
        "5.8. 8 Uhr - 16.8. 13 Uhr", "Sep 7th, 9am - Sep 7th, 11pm", "16:00, 23 Apr - 22:00, 27 April". Both ends
        are written, so both are kept; the days themselves are ends of a span and offer nothing on their own."""
        found: list[ProposalCandidate] = []
        spanned: set[int] = set()
        german = request.language is Locale.DE
        for day in days:
            span = (self._until_tomorrow(sentence, day, parts, tokens, zone, request)
                    or self._around_its_day(sentence, day, days, parts, tokens, zone, request))
            if span is not None:
                spanned.add(id(day))
                found.append(span)
        for first, second in pairwise(days):
            if id(first) not in spanned and len(first.clocks) == 1 and not second.clocks:
                stay = self._stay(sentence, first, second, parts, tokens, zone, request)
                if stay is not None:
                    spanned |= {id(first), id(second)}
                    found.append(stay)
                continue
            if id(first) in spanned or len(first.clocks) != 1 or len(second.clocks) != 1:
                continue
            a, b = first.clocks[0], second.clocks[0]
            if first.mention.day is None or second.mention.day is None or not (a.usable and b.usable):
                continue
            if a.mention.length or b.mention.length or first.mention.clock or second.mention.clock:
                continue
            one, other = _unit(sentence, first.mention, a.mention), _unit(sentence, second.mention, b.mention)
            if one is None or other is None or not one[1] <= other[0]:
                continue
            if not _SPAN_BETWEEN.fullmatch(sentence, one[1], other[0]):
                continue
            if cues.bound_before(sentence, one[0]) and not _SPAN_OPENER.search(sentence, 0, one[0]):
                continue  # "bis Freitag 14 Uhr bis Samstag": the first day is itself a bound
            # A zone written once, after the span's far end, is the start's too: "… 22:00, 27 April (UTC+8)".
            opening = a.mention if a.mention.zone else replace(a.mention, zone=b.mention.zone,
                                                                zone_region=b.mention.zone_region)
            start = self._resolve(first.mention.day, opening, first.mention, parts, tokens, zone, german=german)
            end = self._resolve(second.mention.day, b.mention, second.mention, parts, tokens, zone, german=german)
            if start is None or end is None or not timedelta(0) < end - start <= MAX_SPAN:
                continue
            spanned |= {id(first), id(second)}
            title = guess_title(request.subject, sentence)
            found.append(ProposalCandidate(start, end, False, request.time_zone, 80, sentence, title, stated_end=end))
        return found, spanned

    def _until_tomorrow(
        self,
        sentence: str,
        day: _Day,
        parts: list[PartMention],
        tokens: _Tokens,
        zone: ZoneInfo,
        request: DetectionRequest,
    ) -> ProposalCandidate | None:
        """ "from 2pm till tomorrow 4:30pm", "von 14 Uhr bis morgen 16:30 Uhr": the start's day goes unwritten
        because it is the day of writing; only tomorrow, the one far end that says so."""
        when = day.mention.day
        written = request.message_date.astimezone(zone).date()
        if len(day.clocks) != 2 or day.mention.kind is not DayKind.RELATIVE or when != written + timedelta(days=1):
            return None
        a, b = sorted(day.clocks, key=lambda c: c.mention.start)
        if not (a.usable and b.usable) or a.mention.length or b.mention.length or day.mention.clock:
            return None
        if not a.mention.end <= day.mention.start < day.mention.end <= b.mention.start:
            return None
        if sentence[day.mention.end:b.mention.start].strip() or not _SPAN_BETWEEN.fullmatch(
            sentence, a.mention.end, day.mention.start
        ):
            return None
        opened = _SPAN_OPENER.search(sentence, 0, a.mention.start) or _OPENS_ITSELF.match(sentence, a.mention.start)
        if opened is None:
            return None  # "um 14 Uhr bis morgen 16:30 Uhr": a deadline after a time, not a span
        german = request.language is Locale.DE
        start = self._resolve(written, a.mention, replace(day.mention, part=None), parts, tokens, zone, german=german)
        end = self._resolve(when, b.mention, day.mention, parts, tokens, zone, german=german)
        if start is None or end is None or not timedelta(0) < end - start <= MAX_SPAN:
            return None
        title = guess_title(request.subject, sentence)
        return ProposalCandidate(start, end, False, request.time_zone, 80, sentence, title, stated_end=end)

    def _around_its_day(
        self,
        sentence: str,
        day: _Day,
        days: list[_Day],
        parts: list[PartMention],
        tokens: _Tokens,
        zone: ZoneInfo,
        request: DetectionRequest,
    ) -> ProposalCandidate | None:
        """ "from 2pm on Friday to 4pm", "von 14 Uhr am Freitag bis 16 Uhr", "between 2:00 tomorrow and 4:00": both
        times on the day written between them. The far end stands after "until" or "and", which alone would make it
        a deadline or a window's end; here it ends the span the opener began."""
        when = day.mention.day
        if when is None or not day.usable or len(day.clocks) != 2 or day.mention.clock:
            return None
        a, b = sorted(day.clocks, key=lambda c: c.mention.start)
        if not a.mention.end <= day.mention.start < day.mention.end <= b.mention.start:
            return None
        if not a.usable or a.mention.length or b.mention.length:
            return None
        if not _TIME_ON_DAY.fullmatch(sentence, a.mention.end, day.mention.start):
            return None
        if _WINDOW_OPENER.search(sentence, 0, a.mention.start):
            joined = _WINDOW_JOIN.fullmatch(sentence, day.mention.end, b.mention.start)
        elif _SPAN_OPENER.search(sentence, 0, a.mention.start) or _OPENS_ITSELF.match(sentence, a.mention.start):
            joined = _SPAN_BETWEEN.fullmatch(sentence, day.mention.end, b.mention.start)
        else:
            return None  # "um 14 Uhr am Freitag bis 16 Uhr": a time, then a deadline
        if joined is None or not (b.usable or self._ends_a_span(sentence, b.mention, days)):
            return None
        # A zone written once, after the far end, is the start's too: "from 2pm on Friday to 4pm EST".
        opening = a.mention if a.mention.zone else replace(a.mention, zone=b.mention.zone,
                                                            zone_region=b.mention.zone_region)
        german = request.language is Locale.DE
        start = self._resolve(when, opening, day.mention, parts, tokens, zone, german=german)
        end = self._resolve(when, b.mention, day.mention, parts, tokens, zone, german=german)
        if start is None or end is None or not timedelta(0) < end - start <= MAX_SPAN:
            return None
        title = guess_title(request.subject, sentence)
        return ProposalCandidate(start, end, False, request.time_zone, 80, sentence, title, stated_end=end)

    def _ends_a_span(self, sentence: str, clock: ClockMention, days: list[_Day]) -> bool:
        """A time refused as a start only for the "until", "bis" or "and" before it, which is how a span's end is
        written; a zone we cannot read after it still refuses it."""
        if not deadline_before(sentence, clock.start) or zone_after(sentence, clock.end, True)[0].unknown:
            return False
        return self._clock_usable(sentence, replace(clock, refused=False), [d.mention for d in days])

    def _stay(
        self,
        sentence: str,
        first: _Day,
        second: _Day,
        parts: list[PartMention],
        tokens: _Tokens,
        zone: ZoneInfo,
        request: DetectionRequest,
    ) -> ProposalCandidate | None:
        """A day with its time to a later calendar date: "Montag, 31.07.2017 ca. 14:00 Uhr bis zum 04.08.2017".
        It starts at the time written and ends with the last day, whose hour the sentence does not give."""
        a = first.clocks[0]
        begin, last = first.mention, second.mention
        if begin.day is None or last.day is None or last.kind is not DayKind.EXPLICIT or not a.usable:
            return None
        if a.mention.length or begin.clock or last.clock or not begin.end <= a.mention.start < last.start:
            return None
        if not _SPAN_BETWEEN.fullmatch(sentence, a.mention.end, last.start) or not begin.day < last.day:
            return None
        if cues.bound_before(sentence, begin.start) and not _SPAN_OPENER.search(sentence, 0, begin.start):
            return None
        start = self._resolve(begin.day, a.mention, begin, parts, tokens, zone, german=request.language is Locale.DE)
        end = _at(last.day + timedelta(days=1), time(0, 0), zone)
        if start is None or not timedelta(0) < end - start <= MAX_SPAN:
            return None
        title = guess_title(request.subject, sentence)
        return ProposalCandidate(start, end, False, request.time_zone, 80, sentence, title, stated_end=end)

    @staticmethod
    def _clock_stands(sentence: str, clock: ClockMention, days: list[DayMention]) -> bool:
        """Whether a time stays when it overlaps a day: the ISO day's own "T14:30" is the day's, and a shape
        that is a time only after its day ("6. August 11.05", "12 Nov 1115") yields to a date it overlaps,
        unless it follows a calendar date directly, where it is the time of that date."""
        overlapping = [d for d in days if _overlap(_span(d), _span(clock))]
        if any(d.clock is not None for d in overlapping):
            return False
        if not overlapping or not _needs_its_day(clock):
            return True
        return clock.adjacent_only and any(
            d.kind is DayKind.EXPLICIT and d.day is not None and _JUST_AFTER.fullmatch(sentence, d.end, clock.start)
            for d in days if d.end <= clock.start
        )

    @staticmethod
    def _day_usable(
        sentence: str, day: DayMention, everything: list[DayMention], clocks: list[ClockMention], reference: date
    ) -> bool:
        if (day.day is None and day.if_passed is None) or cues.replaced_before(sentence, day.start):
            return False
        # "vom 26. bis 28. Oktober": a range of days may open with the word that makes a single day a bound.
        if cues.bound_before(sentence, day.start) and not (
            (day.last_day is not None and _SPAN_OPENER.search(sentence, 0, day.start))
            or next_weekday_with_its_date(sentence, day, reference)
        ):
            return False
        time_follows = any(_JUST_AFTER.fullmatch(sentence, day.end, c.start) for c in clocks if c.start >= day.end)
        if cues.looks_like_a_number(sentence, day.start, day.end, time_follows=time_follows) or cues.in_a_span(
            sentence, day.start, day.end
        ):
            return False
        number = cues.number_right_before(sentence, day.start)
        if number is not None and not any(_overlap(number, _span(c)) for c in clocks):
            return False
        for other in everything:
            if other.start > day.end and cues.joins_a_range(sentence, day.end, other.start):
                return False
            if other.end < day.start and cues.joins_a_range(sentence, other.end, day.start):
                return False
        return True

    @staticmethod
    def _agrees(day: _Day, days: list[_Day], sentence: str) -> bool:
        """Days written side by side name one day ("morgen, Dienstag, den 4.8."); if they disagree, none is read."""
        for other in days:
            if other is day:
                continue
            first, second = sorted((day.mention, other.mention), key=lambda d: d.start)
            if _APPOSITION.fullmatch(sentence, first.end, second.start) and other.mention.day != day.mention.day:
                return False
        return True

    @staticmethod
    def _clock_usable(sentence: str, clock: ClockMention, days: list[DayMention]) -> bool:
        if clock.refused or cues.looks_like_a_number(sentence, clock.start, clock.end):
            return False
        if clock.date_like is not None and any(_may_be_its_date(clock.date_like, d) for d in days):
            return False
        number = cues.number_right_before(sentence, clock.start)
        return number is None or any(_overlap(number, _span(d)) for d in days)

    @staticmethod
    def _all_day(sentence: str, day: DayMention, any_clock: bool, parts: list[PartMention]) -> bool:
        """The one calendar date of its sentence, with no hint of a time of day we failed to read."""
        if day.kind is not DayKind.EXPLICIT or day.needs_clock or any_clock or day.part is not None or parts:
            return False
        return not cues.vague_time(sentence) and not cues.unread_digits_after(sentence, day.end)

    @staticmethod
    def _pair(days: list[_Day], clocks: list[_Clock], tokens: _Tokens, sentence: str) -> None:
        """Each time goes to its nearest day within MAX_JOIN_TOKENS words; ties go to the day before it, unless a
        span's dash or "to" stands between them: in "16:00, 23 Apr - 22:00, 27 April" 22:00 is the 27th's."""
        for clock in clocks:
            best: _Day | None = None
            best_key: tuple[int, int] | None = None
            for day in days:
                distance = tokens.between(_span(day.mention), _span(clock.mention))
                if distance > MAX_JOIN_TOKENS:
                    continue
                if _needs_its_day(clock.mention) and (distance or day.mention.start > clock.mention.start):
                    continue
                if clock.mention.adjacent_only and day.mention.kind is not DayKind.EXPLICIT:
                    continue
                side = 1
                if day.mention.start < clock.mention.start:
                    side = 2 if _SPAN_BETWEEN.fullmatch(sentence, day.mention.end, clock.mention.start) else 0
                key = (distance, side)
                if best_key is None or key < best_key:
                    best, best_key = day, key
            if best is not None:
                best.clocks.append(clock)
                clock.paired = True

    @staticmethod
    def _resolve(
        when: date,
        clock: ClockMention,
        day: DayMention,
        parts: list[PartMention],
        tokens: _Tokens,
        zone: ZoneInfo,
        *,
        german: bool,
        already_night: date | None = None,
    ) -> datetime | None:
        near = {p.part for p in parts if tokens.between(_span(p), _span(clock)) <= MAX_PART_TOKENS
                and not _overlap(_span(p), _span(day)) and not _overlap(_span(p), _span(clock))}
        if day.part is not None:
            near.add(day.part)
        if len(near) > 1:
            return None
        part: DayPart | None = next(iter(near), None)
        if part is DayPart.EVENING and day.part is DayPart.EVENING and clock.fixed and clock.hour < _SMALL_HOURS_END:
            # "tonight at 1am", "heute Abend um 01:30": the small hours after that evening, on the next day.
            part, when = DayPart.NIGHT, when if when == already_night else when + timedelta(days=1)
        hour = resolve_hour(clock, part, german=german)
        if hour is None:
            return None
        if clock.next_day:
            when += timedelta(days=1)
        if clock.zone is not None:
            written = datetime.combine(when, time(hour, clock.minute), clock.zone)
            if clock.zone_region is not None:
                meant = datetime.combine(when, time(hour, clock.minute), ZoneInfo(clock.zone_region))
                if meant.utcoffset() != written.utcoffset():
                    return None
            return written.astimezone(zone)
        return _at(when, time(hour, clock.minute), zone)

    @staticmethod
    def _timed(
        start: datetime,
        length: timedelta | None,
        durations: list[DurationMention],
        confidence: int,
        sentence: str,
        request: DetectionRequest,
    ) -> ProposalCandidate:
        if length is None and len(durations) == 1:
            length = durations[0].length
        end = (start.astimezone(UTC) + (DEFAULT_LENGTH if length is None else length)).astimezone(start.tzinfo)
        title = guess_title(request.subject, sentence)
        stated_end = end if length is not None else None
        return ProposalCandidate(start, end, False, request.time_zone, confidence, sentence, title, stated_end)


def _to_last_day(candidate: ProposalCandidate, last_day: date, zone: ZoneInfo) -> ProposalCandidate:
    """A range of days with one time ("22-23 Feb at 7pm") starts on its first day and ends on its last."""
    start_local, end_local = candidate.start.astimezone(zone), candidate.end.astimezone(zone)
    end = _at(last_day + (end_local.date() - start_local.date()), end_local.time(), zone)
    return replace(candidate, end=end, stated_end=end)


def _time_before_its_day(sentence: str, day: DayMention, clock: ClockMention) -> bool:
    """ "16:00, 23 Apr": the time written first, a comma between."""
    return clock.end <= day.start and _TIME_THEN_DAY.fullmatch(sentence, clock.end, day.start) is not None


def _unit(sentence: str, day: DayMention, clock: ClockMention) -> tuple[int, int] | None:
    """Where a day and its time are written as one: the time after the day, or before it with a comma."""
    if day.end <= clock.start:
        return day.start, clock.end
    if _time_before_its_day(sentence, day, clock):
        return clock.start, day.end
    return None


def _zone_after_its_day(sentence: str, day: DayMention, clock: ClockMention) -> ClockMention | None:
    """ "16:00, 23 Apr (UTC+8)": a zone after a day whose time is written before it is that time's zone.
    None when it is a zone we cannot resolve, which leaves the time as unclear as one written beside it."""
    if clock.zone is not None or not _time_before_its_day(sentence, day, clock):
        return clock
    found, _ = zone_after(sentence, day.end, False)
    if found.unknown:
        return None
    return replace(clock, zone=found.zone, zone_region=found.region) if found.zone is not None else clock


def _may_be_its_date(numbers: tuple[int, int], day: DayMention) -> bool:
    """ "Friday 7-6" is 6 July where that is a Friday: after a weekday, two numbers that, month first or day
    first, make the next such date falling on that weekday may be its date rather than its hours."""
    when = day.day or day.if_passed
    if day.kind is not DayKind.WEEKDAY or when is None:
        return False
    since = when - timedelta(days=7)  # the message's week: the weekday is at most a week or two after it
    first, second = numbers
    for month, number in ((first, second), (second, first)):
        for year in (since.year, since.year + 1):
            try:
                found = date(year, month, number)
            except ValueError:
                continue
            if found >= since:
                if found.weekday() == when.weekday():
                    return True
                break
    return False


def _noon_of_its_day(sentence: str, days: list[DayMention]) -> list[ClockMention]:
    """ "morgen Mittag", "Freitagmittag", "Tuesday midday" is noon, as "tomorrow noon" is; the clock stands right
    after its day. Only in a sentence that writes no time: in "morgen Mittag um 1" Mittag makes 1 the afternoon."""
    return [ClockMention(d.end, d.end, 12, 0, True, refused=deadline_before(sentence, d.start), adjacent_any_day=True)
            for d in days if d.part is DayPart.NOON and d.clock is None]


def _needs_its_day(clock: ClockMention) -> bool:
    return clock.adjacent_only or clock.adjacent_any_day


def _overlap(first: tuple[int, int], second: tuple[int, int]) -> bool:
    return first[0] < second[1] and second[0] < first[1]


def _at(day: date, clock: time, zone: ZoneInfo) -> datetime:
    """A wall-clock time in the zone; one that a DST switch skips moves forward, as clocks do."""
    local = datetime.combine(day, clock, zone)
    return local.astimezone(UTC).astimezone(zone)
