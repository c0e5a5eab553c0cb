"""JMAP keywords (RFC 8621 §4.1.1) as plmail keeps them: $seen and $flagged in their own columns (read state is
`seen_at`, never a flag read back), every other keyword among the message's flags, where IMAP's system flags
mean their keywords ($answered is \\Answered). Keywords are case-insensitive and shown lower-cased."""

from __future__ import annotations

import re
from collections.abc import Iterable

SEEN, FLAGGED, DRAFT, ANSWERED, FORWARDED = "$seen", "$flagged", "$draft", "$answered", "$forwarded"
JUNK, NOT_JUNK = "$junk", "$notjunk"
COLUMN_KEYWORDS = frozenset({SEEN, FLAGGED})
# Setting one of these is the Spam move the web UI makes (Report spam / Not spam), and is kept as a keyword.
SPAM_KEYWORDS = frozenset({JUNK, NOT_JUNK})
SYSTEM_FLAGS = {"\\answered": ANSWERED, "\\draft": DRAFT, "\\flagged": FLAGGED, "\\seen": SEEN}
_KEYWORD = re.compile(r"^[\x21-\x7e]{1,255}$")
_FORBIDDEN = frozenset('()"{]%*\\')


def is_keyword(value: str) -> bool:
    return bool(_KEYWORD.match(value)) and not (_FORBIDDEN & set(value))


def keyword_of_flag(flag: str) -> str | None:
    """The keyword a stored flag means; None for flags that are no keyword (\\Recent, \\Deleted, …)."""
    lowered = flag.lower()
    if lowered in SYSTEM_FLAGS:
        return SYSTEM_FLAGS[lowered]
    if lowered.startswith("\\") or not is_keyword(lowered):
        return None
    return lowered


def flag_spellings(keyword: str) -> list[str]:
    """Every stored spelling (lower-cased) that means the keyword: its own and its IMAP system flag's."""
    system = [flag for flag, meant in SYSTEM_FLAGS.items() if meant == keyword]
    return [keyword, *system]


def keywords_of(flags: Iterable[str], *, seen: bool, starred: bool) -> set[str]:
    found = {k for k in (keyword_of_flag(f) for f in flags) if k is not None and k not in COLUMN_KEYWORDS}
    if seen:
        found.add(SEEN)
    if starred:
        found.add(FLAGGED)
    return found
