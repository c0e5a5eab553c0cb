"""IMAP syntax both ways: reading aioimaplib's response lines, writing arguments, UID sets, mailbox names."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta, timezone

from plmail.providers.imap.errors import ImapProtocolError
from plmail.providers.imap.models import FetchedMessage, FlagState, Mailbox, MailboxEvent, MailboxStatus

# aioimaplib hands a response over as a list: one `bytes` per line (CRLF and the leading "* " removed), and
# each literal as a separate `bytearray` right after the line that announced it with {n}.
Part = bytes | bytearray
# Atoms (flags, keywords, numbers, NIL excluded) are str; quoted strings and literals are bytes; NIL is None.
Value = str | bytes | None | list["Value"]

_SPACES = re.compile(rb" +")
_TOKEN = re.compile(
    rb'(?P<open>\()|(?P<close>\))|"(?P<quoted>(?:[^"\\]|\\.)*)"|~?\{(?P<literal>\d+)\+?\}$'
    # section specs such as BODY[HEADER.FIELDS (FROM)] are one atom, spaces and parentheses included
    rb'|(?P<atom>(?:[^ ()\[\]"]|\[[^\]]*\])+)'
)
_UNESCAPE = re.compile(rb"\\(.)")
_CODE = re.compile(r"^\[([A-Za-z0-9.-]+)(?: ([^\]]*))?\]")
_COPYUID = re.compile(rb"\[COPYUID (\d+) ([0-9:,]+) ([0-9:,]+)\]", re.IGNORECASE)
_APPENDUID = re.compile(rb"\[APPENDUID (\d+) ([0-9:,]+)\]", re.IGNORECASE)
_SEQ_EVENT = re.compile(rb"^(\d+) (EXISTS|RECENT|EXPUNGE)\b", re.IGNORECASE)
_VANISHED = re.compile(rb"^VANISHED (?:\(EARLIER\) )?([0-9:,]+)", re.IGNORECASE)
_FETCH_START = re.compile(rb"^(\d+) FETCH ", re.IGNORECASE)
_SIZE_LINE = re.compile(rb"\d+ FETCH \((?:UID (\d+) RFC822\.SIZE (\d+)|RFC822\.SIZE (\d+) UID (\d+))\)\Z",
                        re.IGNORECASE)
# a flag is an atom, system flags with a leading backslash (RFC 3501 9: no atom-specials, no CTL)
_FLAG = re.compile(r'\\?[^\x00-\x20\x7f(){%*"\\\]]+')
_UID_SET = re.compile(r"^(?:\d+|\*)(?::(?:\d+|\*))?(?:,(?:\d+|\*)(?::(?:\d+|\*))?)*$")
_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)}
_INTERNALDATE = re.compile(r"^ ?(\d{1,2})-([A-Za-z]{3})-(\d{4}) (\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})$")
_XLIST_ROLES = {"\\allmail": "\\All", "\\spam": "\\Junk", "\\starred": "\\Flagged", "\\inbox": "\\Inbox"}


class _Reader:
    """Walks the parts as one token stream; a line break counts as a space. Regex-driven, since it runs over
    every fetched message."""

    def __init__(self, parts: Sequence[Part]) -> None:
        self.parts = parts
        self.index = 0
        self.pos = 0

    def _text(self) -> bytes | None:
        """The current line, after skipping spaces and used-up lines; None at the end."""
        while self.index < len(self.parts):
            part = self.parts[self.index]
            if isinstance(part, bytearray):
                # a literal reached without its {n}: only happens when a response was misread
                raise ImapProtocolError("The server sent a literal where none was announced.")
            blank = _SPACES.match(part, self.pos)
            if blank is not None:
                self.pos = blank.end()
            if self.pos < len(part):
                return part
            self.index += 1
            self.pos = 0
        return None

    def at_end(self) -> bool:
        return self._text() is None

    def at_line_start(self) -> bool:
        return self.pos == 0

    def skip_line(self) -> None:
        if self.index < len(self.parts) and self.pos > 0:
            self.index += 1
            self.pos = 0

    def value(self) -> Value:
        """One value; parenthesised lists nest without recursion."""
        stack: list[list[Value]] = []
        while True:
            text = self._text()
            if text is None:
                raise ImapProtocolError("The server's response ended too early.")
            token = _TOKEN.match(text, self.pos)
            if token is None:
                raise ImapProtocolError(f"Unexpected character {chr(text[self.pos])!r} in the server's response.")
            self.pos = token.end()
            kind = token.lastgroup
            value: Value
            if kind == "open":
                stack.append([])
                continue
            if kind == "close":
                if not stack:
                    raise ImapProtocolError("The server's response has an unmatched parenthesis.")
                value = stack.pop()
            elif kind == "quoted":
                raw = token.group("quoted")
                value = _UNESCAPE.sub(rb"\1", raw) if b"\\" in raw else raw
            elif kind == "literal":
                value = self._literal(int(token.group("literal")))
            else:
                atom = token.group("atom").decode("utf-8", "surrogateescape")
                value = None if atom.upper() == "NIL" else atom
            if not stack:
                return value
            stack[-1].append(value)

    def _literal(self, size: int) -> bytes:
        self.index += 1
        self.pos = 0
        if self.index >= len(self.parts) or not isinstance(self.parts[self.index], bytearray):
            raise ImapProtocolError("The server announced a literal and did not send it.")
        data = self.parts[self.index]
        if len(data) != size:
            raise ImapProtocolError(f"The server announced {size} bytes and sent {len(data)}.")
        self.index += 1
        return bytes(data)


# -- reading responses ----------------------------------------------------------------------------------


def capabilities(lines: Sequence[Part]) -> set[str]:
    """The words of untagged CAPABILITY lines, upper-cased."""
    caps: set[str] = set()
    for line in lines:
        if isinstance(line, bytes):
            caps.update(line.decode("ascii", "replace").upper().split())
    return caps


def enabled_extensions(lines: Sequence[Part]) -> set[str]:
    """What untagged ENABLED lines (RFC 5161) name."""
    enabled: set[str] = set()
    for line in lines:
        if isinstance(line, bytes) and line.upper().startswith(b"ENABLED"):
            enabled.update(line.decode().upper().split()[1:])
    return enabled


def status_text(lines: Sequence[Part]) -> str:
    """The tagged response's text (aioimaplib puts it last), e.g. "[APPENDUID 1 2] Append completed."."""
    if not lines or isinstance(lines[-1], bytearray):
        return ""
    return lines[-1].decode("utf-8", "replace").strip()


def response_code(text: str) -> str | None:
    match = _CODE.match(text)
    return match.group(1).upper() if match else None


def parse_fetch(lines: Sequence[Part]) -> list[tuple[int, dict[str, Value]]]:
    """`n FETCH (...)` responses as (sequence number, {ITEM: value}); anything else in between is skipped."""
    out: list[tuple[int, dict[str, Value]]] = []
    reader = _Reader(lines[:-1])
    while not reader.at_end():
        text = reader._text()
        assert text is not None
        start = _FETCH_START.match(text, reader.pos) if reader.at_line_start() else None
        if start is None:
            reader.skip_line()
            continue
        reader.pos = start.end()
        items = reader.value()
        if not isinstance(items, list) or len(items) % 2:
            raise ImapProtocolError("The server sent a malformed FETCH response.")
        data: dict[str, Value] = {}
        for name, value in zip(items[::2], items[1::2], strict=True):
            if isinstance(name, str):
                data[name.upper()] = value
        out.append((int(start.group(1)), data))
        reader.skip_line()
    return out


def fetched_message(data: dict[str, Value]) -> FetchedMessage | None:
    uid, raw = data.get("UID"), data.get("BODY[]")
    if not isinstance(uid, str) or not isinstance(raw, bytes):
        return None  # an unsolicited flag update that landed in our FETCH, not one of the requested messages
    size = data.get("RFC822.SIZE")
    date = data.get("INTERNALDATE")
    return FetchedMessage(
        uid=int(uid),
        flags=_flags(data.get("FLAGS")),
        internaldate=parse_internaldate(date.decode("ascii", "replace")) if isinstance(date, bytes) else None,
        size=int(size) if isinstance(size, str) else len(raw),
        raw=raw,
        modseq=_modseq(data.get("MODSEQ")),
    )


def parse_sizes(lines: Sequence[Part]) -> dict[int, int]:
    """UID -> RFC822.SIZE from the reply to `UID FETCH set (UID RFC822.SIZE)`. The import lists a window on every
    page, so plain lines are read by one pattern; a reply with anything else in it (an unsolicited flag update,
    a literal) is read by the full parser, which skips what is not a size."""
    found: dict[int, int] = {}
    for line in lines[:-1]:
        match = _SIZE_LINE.match(line) if isinstance(line, bytes) else None
        if match is None:
            return _parse_sizes_fully(lines)
        uid, size, size_first, uid_second = match.groups()
        found[int(uid or uid_second)] = int(size or size_first)
    return found


def _parse_sizes_fully(lines: Sequence[Part]) -> dict[int, int]:
    found: dict[int, int] = {}
    for _, data in parse_fetch(lines):
        uid, size = data.get("UID"), data.get("RFC822.SIZE")
        if isinstance(uid, str) and isinstance(size, str):
            found[int(uid)] = int(size)
    return found


def flag_state(data: dict[str, Value]) -> FlagState | None:
    uid = data.get("UID")
    if not isinstance(uid, str) or "FLAGS" not in data:
        return None
    return FlagState(uid=int(uid), flags=_flags(data["FLAGS"]), modseq=_modseq(data.get("MODSEQ")))


def _flags(value: Value) -> frozenset[str]:
    if not isinstance(value, list):
        return frozenset()
    return frozenset(v for v in value if isinstance(v, str))


def _modseq(value: Value) -> int | None:
    if isinstance(value, list) and value and isinstance(value[0], str):
        return int(value[0])
    return None


def parse_internaldate(text: str) -> datetime | None:
    match = _INTERNALDATE.match(text)
    if match is None or match.group(2).title() not in _MONTHS:
        return None
    day, mon, year, hh, mm, ss, sign, zh, zm = match.groups()
    offset = timedelta(hours=int(zh), minutes=int(zm)) * (-1 if sign == "-" else 1)
    return datetime(int(year), _MONTHS[mon.title()], int(day), int(hh), int(mm), int(ss), tzinfo=timezone(offset))


def parse_list(lines: Sequence[Part], *, xlist: bool = False) -> list[Mailbox]:
    """LIST (or XLIST) lines, each `(flags) delimiter name [extended data]`."""
    out: list[Mailbox] = []
    reader = _Reader(lines[:-1])
    while not reader.at_end():
        flags = reader.value()
        delimiter = reader.value()
        name = reader.value()
        if not isinstance(flags, list) or not isinstance(name, bytes | str):
            raise ImapProtocolError("The server sent a malformed LIST response.")
        reader.skip_line()  # extended data (CHILDINFO, ...) is not asked for and not needed
        raw_name = name if isinstance(name, bytes) else name.encode()
        path = decode_mailbox(raw_name)
        flag_set = {f for f in flags if isinstance(f, str)}
        if xlist:
            flag_set = {_XLIST_ROLES.get(f.lower(), f) for f in flag_set}
        flag_set = {_canonical_flag(f) for f in flag_set}
        if path.upper() == "INBOX":
            path = "INBOX"  # the one case-insensitive name (RFC 3501 5.1)
            flag_set.add("\\Inbox")
        out.append(Mailbox(
            path=path,
            delimiter=delimiter.decode() if isinstance(delimiter, bytes) else None,
            flags=frozenset(flag_set),
        ))
    return out


def _canonical_flag(flag: str) -> str:
    """Special-use flags in RFC 6154 spelling, whatever case the server chose."""
    for known in ("\\Inbox", "\\Sent", "\\Drafts", "\\Trash", "\\Junk", "\\Archive", "\\All", "\\Flagged"):
        if flag.lower() == known.lower():
            return known
    return flag


def parse_status(lines: Sequence[Part], path: str) -> MailboxStatus:
    reader = _Reader(lines[:-1])
    values: dict[str, int] = {}
    while not reader.at_end():
        reader.value()  # the mailbox name, echoed
        items = reader.value()
        if not isinstance(items, list):
            raise ImapProtocolError("The server sent a malformed STATUS response.")
        for key, val in zip(items[::2], items[1::2], strict=False):
            if isinstance(key, str) and isinstance(val, str) and val.isdigit():
                values[key.upper()] = int(val)
        reader.skip_line()
    if "MESSAGES" not in values:
        raise ImapProtocolError(f"The server sent no STATUS for {path!r}.")
    return MailboxStatus(
        path=path,
        messages=values["MESSAGES"],
        uidnext=values.get("UIDNEXT"),
        uidvalidity=values.get("UIDVALIDITY"),
        unseen=values.get("UNSEEN"),
        highestmodseq=values.get("HIGHESTMODSEQ"),
    )


def parse_search(lines: Sequence[Part], *, esearch: bool) -> list[int]:
    uids: list[int] = []
    for line in lines[:-1]:
        if isinstance(line, bytearray):
            continue
        if esearch:
            # `(TAG "A1") UID ALL 1:3,7`; no ALL when nothing matched
            match = re.search(rb"\bALL ([0-9:,]+)", line)
            if match:
                uids.extend(expand_uid_set(match.group(1).decode()))
        else:
            # `1 2 3`, with CONDSTORE possibly followed by `(MODSEQ n)`
            uids.extend(int(tok) for tok in line.split(b"(")[0].split() if tok.isdigit())
    return sorted(set(uids))


def parse_events(lines: Iterable[Part]) -> list[MailboxEvent]:
    """Unsolicited untagged responses (IDLE, NOOP) as events; other lines (OK [HIGHESTMODSEQ], FLAGS) are skipped."""
    events: list[MailboxEvent] = []
    for line in lines:
        if isinstance(line, bytearray):
            continue
        if (match := _SEQ_EVENT.match(line)) is not None:
            kind = match.group(2).decode().lower()
            events.append(MailboxEvent(kind=kind, number=int(match.group(1))))  # type: ignore[arg-type]
        elif (match := _VANISHED.match(line)) is not None:
            events.append(MailboxEvent(kind="vanished", uids=tuple(expand_uid_set(match.group(1).decode()))))
        elif _FETCH_START.match(line) is not None:
            for number, data in parse_fetch([line, b""]):
                uid = data.get("UID")
                events.append(MailboxEvent(
                    kind="fetch",
                    number=number,
                    uids=(int(uid),) if isinstance(uid, str) else (),
                    flags=_flags(data["FLAGS"]) if "FLAGS" in data else None,
                    modseq=_modseq(data.get("MODSEQ")),
                ))
    return events


def parse_copyuid(lines: Sequence[Part]) -> tuple[int | None, dict[int, int]]:
    """COPYUID from wherever it came: untagged after UID MOVE, in the tagged OK after UID COPY."""
    uidvalidity: int | None = None
    mapping: dict[int, int] = {}
    for line in lines:
        if isinstance(line, bytearray):
            continue
        for match in _COPYUID.finditer(line):
            uidvalidity = int(match.group(1))
            sources = expand_uid_set(match.group(2).decode())
            targets = expand_uid_set(match.group(3).decode())
            if len(sources) != len(targets):
                raise ImapProtocolError("The server's COPYUID lists different numbers of source and target UIDs.")
            mapping.update(zip(sources, targets, strict=True))
    return uidvalidity, mapping


def parse_appenduid(text: str) -> tuple[int | None, int | None]:
    match = _APPENDUID.search(text.encode())
    if match is None:
        return None, None
    uids = expand_uid_set(match.group(2).decode())
    return int(match.group(1)), uids[-1]


def select_values(lines: Sequence[Part]) -> dict[str, object]:
    """The interesting untagged SELECT/EXAMINE data as plain values."""
    values: dict[str, object] = {}
    for line in lines:
        if isinstance(line, bytearray):
            continue
        text = line.decode("utf-8", "replace")
        if m := re.match(r"^(\d+) EXISTS", text, re.IGNORECASE):
            values["EXISTS"] = int(m.group(1))
        elif m := re.search(r"\[(UIDVALIDITY|UIDNEXT|HIGHESTMODSEQ) (\d+)\]", text, re.IGNORECASE):
            values[m.group(1).upper()] = int(m.group(2))
        elif m := re.search(r"\[PERMANENTFLAGS \(([^)]*)\)\]", text, re.IGNORECASE):
            values["PERMANENTFLAGS"] = frozenset(m.group(1).split())
        elif re.search(r"\[READ-ONLY\]", text, re.IGNORECASE):
            values["READ-ONLY"] = True
    return values


# -- writing arguments ----------------------------------------------------------------------------------


def quote(text: str) -> str:
    """A quoted string (RFC 3501 9); CR, LF and NUL cannot be carried in one."""
    if any(c in text for c in "\r\n\0"):
        raise ValueError("CR, LF and NUL cannot be sent in an IMAP string")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def mailbox_arg(path: str) -> str:
    return quote(encode_mailbox(path))


def flag_list(flags: Iterable[str]) -> str:
    items = sorted(set(flags))
    for flag in items:
        if not flag.isascii() or not _FLAG.fullmatch(flag):
            raise ValueError(f"not a valid IMAP flag or keyword: {flag!r}")
    return "(" + " ".join(items) + ")"


def uid_set(uids: Iterable[int]) -> str:
    """Compact UID set: [1, 2, 3, 7] -> "1:3,7"."""
    ordered = sorted(set(uids))
    if not ordered:
        raise ValueError("an empty UID set cannot be sent")
    if ordered[0] < 1:
        raise ValueError("UIDs start at 1")
    ranges: list[str] = []
    start = prev = ordered[0]
    for uid in ordered[1:]:
        if uid == prev + 1:
            prev = uid
            continue
        ranges.append(f"{start}:{prev}" if prev > start else str(start))
        start = prev = uid
    ranges.append(f"{start}:{prev}" if prev > start else str(start))
    return ",".join(ranges)


def check_uid_set(text: str) -> str:
    if not _UID_SET.match(text):
        raise ValueError(f"not an IMAP UID set: {text!r}")
    return text


def expand_uid_set(text: str) -> list[int]:
    """"3:1,7" -> [3, 2, 1, 7]: order kept as listed, which is what COPYUID's pairing relies on."""
    out: list[int] = []
    for piece in text.split(","):
        if ":" in piece:
            a, b = (int(x) for x in piece.split(":"))
            out.extend(range(a, b + 1) if a <= b else range(a, b - 1, -1))
        elif piece:
            out.append(int(piece))
    return out


def chunks(items: Sequence[int], size: int) -> Iterable[Sequence[int]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


# -- modified UTF-7 mailbox names (RFC 3501 5.1.3) ------------------------------------------------------


def encode_mailbox(name: str) -> str:
    out: list[str] = []
    pending: list[str] = []

    def flush() -> None:
        if pending:
            data = "".join(pending).encode("utf-16-be")
            out.append("&" + base64.b64encode(data).decode().rstrip("=").replace("/", ",") + "-")
            pending.clear()

    for char in name:
        if 0x20 <= ord(char) <= 0x7E:
            flush()
            out.append("&-" if char == "&" else char)
        else:
            pending.append(char)
    flush()
    return "".join(out)


def decode_mailbox(raw: bytes) -> str:
    text = raw.decode("utf-8", "surrogateescape")  # UTF8=ACCEPT servers may send UTF-8 as is
    if "&" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] != "&":
            out.append(text[i])
            i += 1
            continue
        end = text.find("-", i)
        if end < 0:
            out.append(text[i:])
            break
        chunk = text[i + 1 : end]
        if not chunk:
            out.append("&")
        else:
            padded = chunk.replace(",", "/") + "=" * (-len(chunk) % 4)
            try:
                out.append(base64.b64decode(padded).decode("utf-16-be"))
            except (ValueError, UnicodeDecodeError):
                out.append(text[i : end + 1])  # not valid modified UTF-7: keep the bytes as the server sent them
        i = end + 1
    return "".join(out)
