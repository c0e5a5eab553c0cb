"""A proposal's title: what the card and, once accepted, the event are called."""

from __future__ import annotations

import re

MAX_TITLE = 200
_SHORT_TITLE = 80
_SUBJECT_PREFIX = re.compile(r"^(?:\s*(?:re|aw|wg|fw|fwd|antw|sv|tr)\s*(?:\[\d+\])?\s*:\s*)+", re.IGNORECASE)


def guess_title(subject: str, sentence: str) -> str:
    """The subject without reply/forward prefixes, else the start of the sentence."""
    title = " ".join(_SUBJECT_PREFIX.sub("", subject).split())
    if not title:
        title = sentence if len(sentence) <= _SHORT_TITLE else sentence[:_SHORT_TITLE].rsplit(" ", 1)[0] + "…"
    return title[:MAX_TITLE]
