"""A parser for the parsing process's tests (`plmail.mail.parse_worker`): the real one, except that it kills its
process on one marked message and raises on another, as a crash in a C extension or a parser bug would."""

from __future__ import annotations

import os

from plmail.domain.messages import ParsedMessage
from plmail.mail.mime import parse_mime

KILLS = b"Subject: kills the parser"
RAISES = b"Subject: trips the parser"


def parse_or_die(raw: bytes) -> ParsedMessage:
    if KILLS in raw:
        os._exit(70)  # no exception, no answer: the process is simply gone
    if RAISES in raw:
        raise ValueError("the parser tripped")
    return parse_mime(raw)


PARSER = f"{__name__}:parse_or_die"
