"""The author's own words: quoted and forwarded parts dropped, the rest cut into sentences."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

_MAX_ATTRIBUTION = 300

# Everything below one of these is someone else's message, not the sender's proposal.
_FORWARD_MARKER = re.compile(
    r"^(?:-{2,}\s*(?:original message|ursprüngliche nachricht|forwarded message|weitergeleitete nachricht"
    r"|message transféré|nachricht)\s*-{2,}|begin forwarded message:|anfang der weitergeleiteten nachricht:)",
    re.IGNORECASE,
)
# "On … wrote:", "Am … schrieb Anna <a@b>:", "Anna <a@b> writes:", "On 06 September 2002, Tim said:",
# "* Steve <s@example.org> [2002-08-28T07:52-0700]:"
_ATTRIBUTION_END = re.compile(
    r"(?:^(?:on|am)\s.*\b(?:wrote|write|said|stated|mused|schrieb|sagte)\b.*"
    r"|\b(?:wrote|writes|said|says|schrieb|schreibt)|^.{0,120}<[^<>@\s]+@[^<>\s]+>.{0,60})\s*:\s*$",
    re.IGNORECASE,
)
_MARKER_STARTS = frozenset("-bBaA")
_ATTRIBUTION_START = re.compile(r"^(?:on|am)\s", re.IGNORECASE)
_HEADER_FIRST = re.compile(r"^\*?(?:from|von)\s*:\*?\s", re.IGNORECASE)
_HEADER_NEXT = re.compile(
    r"^\*?(?:sent|gesendet|date|datum|to|an|cc|subject|betreff)\s*:\*?(?:\s|$)", re.IGNORECASE
)
_BULLET = re.compile(r"^\s*(?:[-*•·–]|\d{1,2}[.)])\s+")
_PARAGRAPH = re.compile(r"\n[ \t]*\n")
_SPACE = re.compile(r"\s+")
_BOUNDARY = re.compile(r"[.!?…]+[\"'»«“”)\]]*(?=\s|$)")
# "04.08.", "4.", and a range of them, "26.–28.", "06.09.-07.09.": dots inside a date, not a sentence's end.
_NUMERIC_TOKEN = re.compile(r"^\(?(?:\d{1,2}\.){1,2}(?:[-–—](?:\d{1,2}\.){1,2})?$")

# A dot after one of these does not end a sentence ("z.B. am Montag", "ca. 14 Uhr", "Mo. 19. Jun.").
_ABBREVIATIONS = frozenset(
    {
        "z.b", "zb", "e.g", "i.e", "u.a", "d.h", "bzw", "ca", "vgl", "nr", "no", "tel", "dr", "mr", "mrs",
        "ms", "prof", "st", "str", "inkl", "evtl", "ggf", "usw", "u.s.w", "etc", "vs", "approx", "min",
        "std", "a.m", "p.m", "sog", "bspw", "allg", "abs", "art", "ff", "hr", "fr", "frau", "geb",
        "jan", "feb", "mär", "mrz", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "okt", "oct", "nov",
        "dez", "dec", "mo", "di", "mi", "do", "sa", "so", "mon", "tue", "tues", "wed", "thu", "thur",
        "thurs", "fri", "sat", "sun",
    }
)  # fmt: skip


def _attribution_at(lines: list[str], index: int) -> int:
    """How many lines ("On … wrote:" / "Am … schrieb …:", wrapped or not) start at `index`; 0 if none."""
    line = lines[index].strip()
    if line.endswith(":") and len(line) <= _MAX_ATTRIBUTION and _ATTRIBUTION_END.search(line):
        return 1
    following = lines[index + 1].rstrip() if index + 1 < len(lines) else ""
    if following.endswith(":") and _ATTRIBUTION_START.match(line):
        joined = f"{line} {lines[index + 1].strip()}"
        if len(joined) <= _MAX_ATTRIBUTION and _ATTRIBUTION_END.search(joined):
            return 2
    return 0


def _header_block_at(lines: list[str], index: int) -> bool:
    if ":" not in lines[index] or not _HEADER_FIRST.match(lines[index].strip()):
        return False
    following = (line.strip() for line in lines[index + 1 : index + 5])
    return any(_HEADER_NEXT.match(line) for line in following)


def _next_text_line(lines: list[str], index: int) -> str:
    for line in lines[index:]:
        if line.strip():
            return line.strip()
    return ""


def strip_quoted(text: str) -> str:
    """The sender's own text: no `>` lines, nothing after a forward marker, header block or signature.

    An attribution followed by `>` lines is a bottom-post and the reply may continue below it; one followed
    by plain text is a top-post whose rest is the older message, so everything below it goes.
    """
    lines = text.splitlines()
    kept: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if stripped.startswith(">"):
            index += 1
            continue
        if line.rstrip() == "--" or (stripped[:1] in _MARKER_STARTS and _FORWARD_MARKER.match(stripped)):
            break
        if _header_block_at(lines, index):
            break
        attribution = _attribution_at(lines, index)
        if attribution:
            index += attribution
            if not _next_text_line(lines, index).startswith(">"):
                break
            continue
        kept.append(line)
        index += 1
    return "\n".join(kept)


def _ends_sentence(text: str, punct_start: int, punct: str, after: int) -> bool:
    if "!" in punct or "?" in punct or "…" in punct:
        return True
    token = text[text.rfind(" ", 0, punct_start) + 1 : punct_start + 1]
    bare = token.rstrip(".").lower().lstrip("(\"'„“")
    if bare in _ABBREVIATIONS or _NUMERIC_TOKEN.match(token) or (len(bare) == 1 and bare.isalpha()):
        return False
    following = text[after:].lstrip()
    return not (following[:1].islower())


def _split_paragraph(paragraph: str) -> list[str]:
    sentences: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(paragraph):
        if _ends_sentence(paragraph, match.start(), match.group(0), match.end()):
            sentences.append(paragraph[start : match.end()].strip())
            start = match.end()
    sentences.append(paragraph[start:].strip())
    return [s for s in sentences if s]


def split_sentences(text: str) -> list[str]:
    """Sentences, without splitting on the dots of "04.08.", "14.30 Uhr", "4. August" or "z.B.".

    A blank line or a bullet starts a new sentence; any other line break is wrapping, not structure.
    """
    sentences: list[str] = []
    for block in _PARAGRAPH.split(text):
        chunk: list[str] = []
        for line in block.splitlines():
            if _BULLET.match(line) and chunk:
                sentences.extend(_split_paragraph(_SPACE.sub(" ", " ".join(chunk))))
                chunk = []
            chunk.append(line)
        if chunk:
            sentences.extend(_split_paragraph(_SPACE.sub(" ", " ".join(chunk))))
    return sentences


_WORD = re.compile(r"\w+")


class Words:
    """Word positions of one sentence, to count the words between two spans of it."""

    def __init__(self, sentence: str) -> None:
        spans = [(m.start(), m.end()) for m in _WORD.finditer(sentence)]
        self.starts = [s for s, _ in spans]
        self.ends = [e for _, e in spans]

    def between(self, first: tuple[int, int], second: tuple[int, int]) -> int:
        if first[0] > second[0]:
            first, second = second, first
        if second[0] < first[1]:
            return 0
        low = bisect_left(self.starts, first[1])
        high = bisect_right(self.ends, second[0])
        return max(0, high - low)
