"""Reading mail archives: mbox files (Google Takeout, Thunderbird, mutt) and Maildir folders.

Both readers stream: a 10 GB Takeout file is never held in memory, and every message comes with the
position it was read from so an interrupted import can be reported and resumed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# Envelope lines, not any line that begins with "From ": Mozilla's "From - …" and "From sender
# <asctime date>" separate messages wherever they appear (Netscape wrote no blank line before them);
# a bare "From sender" does only after a blank line. "From Russia with love" in a body nobody
# escaped is neither.
_DATED_ENVELOPE = re.compile(
    rb"^From (?:-(?:\s.*)?|\S+\s+(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\s+\w{3}\s+\d{1,2}\s+\d{1,2}:\d{2}.*)\s*$"
)
_BARE_ENVELOPE = re.compile(rb"^From \S+\s*$")
_ESCAPED_FROM = re.compile(rb"^>+From ")
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class ArchivedMessage:
    raw: bytes
    source_ref: str  # "file@offset" or the Maildir file name
    position: int  # bytes read so far, for progress
    seen: bool | None = None  # None: the archive does not say
    starred: bool | None = None
    gmail_labels: tuple[str, ...] = ()


_HEAD_SCAN = 1024 * 1024  # as far as the parser reads a header block (mail/bounds.py)


def _flags_from_headers(raw: bytes) -> tuple[bool | None, bool | None, tuple[str, ...]]:
    end = raw.find(b"\n\n", 0, _HEAD_SCAN)
    head = raw[: end if end >= 0 else min(len(raw), _HEAD_SCAN)]
    seen: bool | None = None
    starred: bool | None = None
    labels: tuple[str, ...] = ()
    for line in head.splitlines():
        lower = line.lower()
        if lower.startswith(b"x-gmail-labels:"):
            text = line.split(b":", 1)[1].decode("utf-8", "replace")
            labels = tuple(part.strip().strip('"') for part in text.split(",") if part.strip())
            seen = "Unread" not in labels
            starred = "Starred" in labels
        elif lower.startswith(b"x-mozilla-status:"):
            try:
                status = int(line.split(b":", 1)[1].strip(), 16)
            except ValueError:
                continue
            seen, starred = bool(status & 0x0001), bool(status & 0x0004)
        elif lower.startswith(b"status:") and seen is None:
            seen = b"R" in line.split(b":", 1)[1]
    return seen, starred, labels


def read_mbox(path: Path) -> Iterator[ArchivedMessage]:
    """Split an mbox on envelope lines that follow a blank line, undoing ">From " quoting."""
    name = path.name
    with open(path, "rb") as handle:
        current: list[bytes] = []
        start = 0
        offset = 0
        previous_blank = True
        first = True
        for line in handle:
            if first:
                first = False
                if line.startswith(_BOM):
                    offset += len(_BOM)
                    line = line[len(_BOM):]
            stripped = line.rstrip(b"\r\n")
            if _DATED_ENVELOPE.match(stripped) or (previous_blank and _BARE_ENVELOPE.match(stripped)):
                if current:
                    yield _archived(current, f"{name}@{start}", offset)
                current = []
                start = offset
            else:
                current.append(line[1:] if _ESCAPED_FROM.match(line) else line)
            offset += len(line)
            previous_blank = stripped == b""
        if current:
            yield _archived(current, f"{name}@{start}", offset)


def _archived(lines: list[bytes], ref: str, position: int) -> ArchivedMessage:
    # The blank line before the next envelope belongs to the separator, not the message.
    while lines and lines[-1].strip() == b"":
        lines.pop()
    raw = b"".join(lines)
    seen, starred, labels = _flags_from_headers(raw)
    return ArchivedMessage(raw, ref, position, seen, starred, labels)


def read_maildir(path: Path) -> Iterator[ArchivedMessage]:
    """Messages in cur/ and new/; flags come from the ":2," suffix (S seen, F flagged)."""
    position = 0
    for sub in ("cur", "new"):
        folder = path / sub
        if not folder.is_dir():
            continue
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            if not entry.is_file():
                continue
            raw = Path(entry.path).read_bytes()
            position += len(raw)
            info = entry.name.split(":2,", 1)[1] if ":2," in entry.name else ""
            _, _, labels = _flags_from_headers(raw)
            seen = "S" in info if sub == "cur" else False
            yield ArchivedMessage(raw, f"{sub}/{entry.name}", position, seen, "F" in info, labels)


def is_maildir(path: Path) -> bool:
    return path.is_dir() and (path / "cur").is_dir()


def archive_size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    total = 0
    for sub in ("cur", "new"):
        folder = path / sub
        if folder.is_dir():
            total += sum(e.stat().st_size for e in os.scandir(folder) if e.is_file())
    return total
