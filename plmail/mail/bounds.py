"""What one message may cost to read: limits applied to the raw bytes before the stdlib parser sees them.

The stdlib parser recurses once per nested multipart (5,000 levels raise RecursionError), builds a Message per
part (20,000 attachments), and copies a header line several times over (a 50 MB line cost 680 MB). So the bytes
it reads are bounded first, in one pass over the MIME skeleton (header blocks and boundary lines; bodies are
skipped, not split into lines):

- MIME nesting deeper than MAX_DEPTH: the part that would open level 101 is read as one opaque attachment;
- more than MAX_PARTS parts: the message is read up to the boundary of part 10,001;
- a header block over MAX_HEADER_BLOCK: its further headers are left out;
- a header over MAX_HEADER_LINE: it is shortened to that length.

What was cut is said in `cuts`; the original bytes are still what plmail stores and offers for download.

Most mail cannot reach any limit, and counting shows it without the scan (a sixth of parsing time on real mail):
a header line or block cannot outgrow a message of at most 64 KB, every part starts on a line beginning with "--",
and every level of nesting needs a Content-Type header of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

MAX_DEPTH: Final = 100
MAX_PARTS: Final = 10_000
MAX_HEADER_BLOCK: Final = 1024 * 1024
MAX_HEADER_LINE: Final = 64 * 1024

CUT_DEPTH: Final = f"MIME nesting deeper than {MAX_DEPTH} levels was not read"
CUT_PARTS: Final = f"parts after the first {MAX_PARTS:,} were not read"
CUT_BLOCK: Final = "headers past the first 1 MB of a header block were left out"
CUT_LINE: Final = "a header longer than 64 KB was shortened"

# As the stdlib's feedparser decides what a header line is (email/feedparser.py, headerRE).
_HEADER_LINE = re.compile(rb"^(From |[\041-\071\073-\176]*:|[\t ])")
_CONTENT_TYPE = re.compile(rb"^content-type[ \t]*:(.*)", re.IGNORECASE | re.DOTALL)
_BOUNDARY = re.compile(rb"""boundary[ \t]*=[ \t]*(?:"([^"\r\n]*)"|([^;\s"]+))""", re.IGNORECASE)
_OPAQUE = b"Content-Type: application/octet-stream\r\n"


@dataclass(frozen=True, slots=True)
class Bounded:
    data: bytes  # what the parser reads: the original itself when nothing was cut
    cuts: tuple[str, ...]


def _kind(header: bytes) -> tuple[bytes | None, bool]:
    """(boundary, is an encapsulated message) of a Content-Type header (its lines joined)."""
    match = _CONTENT_TYPE.match(header)
    if match is None:
        return None, False
    value = match.group(1)
    mime = value.split(b";", 1)[0].strip().lower()
    if mime.startswith(b"multipart/"):
        found = _BOUNDARY.search(value)
        boundary = (found.group(1) if found.group(1) is not None else found.group(2)) if found else None
        return (boundary.rstrip() or None) if boundary is not None else None, False
    return None, mime in (b"message/rfc822", b"message/global")


class _Scan:
    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self.out: list[bytes | memoryview] = []
        self.view = memoryview(raw)
        self.copied_to = 0  # raw[:copied_to] is in `out` already (as is or rewritten)
        self.changed = False
        self.cuts: list[str] = []
        self.stack: list[bytes] = []  # open multipart boundaries, outermost first
        self.parts = 0

    def note(self, cut: str) -> None:
        self.changed = True
        if cut not in self.cuts:
            self.cuts.append(cut)

    def line_end(self, pos: int) -> int:
        end = self.raw.find(b"\n", pos)
        return len(self.raw) if end < 0 else end + 1

    def header_block(self, pos: int, depth: int) -> tuple[int, int]:
        """Read the header block at `pos` (of a part at `depth`); returns (where its body starts, the depth of the
        header block that follows at once: an encapsulated message's, or -1)."""
        kept: list[bytes | memoryview] = []
        block_bytes = 0
        header: list[bytes | memoryview] = []  # the logical header being read, its lines
        header_bytes = 0
        content_type: bytes | None = None
        boundary: bytes | None = None
        encapsulated = False
        rewritten = False
        full = False
        start = pos

        def close_header() -> None:
            nonlocal header, header_bytes, content_type, boundary, encapsulated, rewritten
            if not header:
                return
            joined = b"".join(header)
            found, message = _kind(joined)
            if _CONTENT_TYPE.match(joined):
                content_type = joined
                boundary, encapsulated = found, message
                if (found is not None or message) and depth + 1 > MAX_DEPTH:
                    self.note(CUT_DEPTH)
                    boundary, encapsulated, rewritten = None, False, True
                    header, header_bytes = [_OPAQUE], len(_OPAQUE)
            kept.extend(header)
            header, header_bytes = [], 0

        while pos < len(self.raw):
            end = self.line_end(pos)
            line = self.view[pos:end]
            if bytes(line[:3]) in (b"\n", b"\r\n"):
                close_header()
                kept.append(line)
                pos = end
                break
            head = bytes(line[:80])
            continuation = head[:1] in (b" ", b"\t")
            if not continuation and not _HEADER_LINE.match(head):
                close_header()
                break  # not a header: the body starts here (the parser notes the missing blank line)
            if not continuation:
                close_header()
            length = end - pos
            if length > MAX_HEADER_LINE or header_bytes + length > MAX_HEADER_LINE:
                self.note(CUT_LINE)
                room = max(MAX_HEADER_LINE - header_bytes, 0)
                if room > 2:
                    ending = b"\r\n" if bytes(line[-2:]) == b"\r\n" else b"\n"
                    line = memoryview(bytes(line[:room - len(ending)]) + ending)
                    length = len(line)
                else:
                    pos = end
                    continue
            if full or block_bytes + length > MAX_HEADER_BLOCK:
                full = True  # the block is cut here: no later header slips in after it
                self.note(CUT_BLOCK)
                pos = end
                continue
            block_bytes += length
            header.append(line)
            header_bytes += length
            pos = end
        else:
            close_header()
        if boundary is not None:
            self.stack.append(boundary)
        if self.changed or rewritten:
            self.out.append(self.view[self.copied_to:start])
            self.out.extend(kept)
            self.copied_to = pos
        return pos, depth + 1 if encapsulated else -1

    def run(self) -> Bounded:
        pos, follows = self.header_block(0, 0)
        while follows >= 0:  # a message/rfc822 message at the top: its own header block comes next
            pos, follows = self.header_block(pos, follows)
        raw = self.raw
        while self.stack and pos < len(raw):
            # Only lines that begin with "--" can be boundaries: jump from one to the next.
            found = raw.find(b"\n--", pos - 1) if pos > 0 else (0 if raw.startswith(b"--") else raw.find(b"\n--"))
            if found < 0:
                break
            start = found + 1 if raw[found:found + 1] == b"\n" else found
            end = self.line_end(start)
            delimiter = raw[start + 2:min(end, start + 2 + 1024)].rstrip()
            pos = end
            closing = delimiter.endswith(b"--")
            name = delimiter[:-2] if closing else delimiter
            if name not in self.stack:
                continue
            level = self.stack.index(name)
            if closing:
                del self.stack[level:]
                continue
            del self.stack[level + 1:]
            self.parts += 1
            if self.parts > MAX_PARTS:
                self.note(CUT_PARTS)
                self.out.append(self.view[self.copied_to:start])
                self.copied_to = len(raw)
                break
            depth = len(self.stack)
            pos, follows = self.header_block(pos, depth)
            while follows >= 0:
                pos, follows = self.header_block(pos, follows)
        if not self.changed:
            return Bounded(raw, ())
        self.out.append(self.view[self.copied_to:])
        return Bounded(b"".join(self.out), tuple(self.cuts))


def _within_limits(raw: bytes) -> bool:
    """Whether `raw` is too small, and has too few "--" lines and Content-Type headers, to reach a limit. A part
    is counted on each line opening with "--", and the header block at level 101 needs 100 Content-Type headers
    of the levels above it besides its own; both counts take in more than the scan would (text that merely looks
    like them), so a message they pass is one the scan would leave as it is."""
    return (len(raw) <= MAX_HEADER_LINE
            and raw.count(b"\n--") + 1 <= MAX_PARTS
            and raw.lower().count(b"content-type") <= MAX_DEPTH)


def bound_message(raw: bytes) -> Bounded:
    """The bytes of `raw` the parser may read, and what was cut from them."""
    if _within_limits(raw):
        return Bounded(raw, ())
    return _Scan(raw).run()
