"""What the IMAP client takes and returns: frozen, slotted, no protocol syntax left in them."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal

from plmail.domain.account_services import TlsMode

# RFC 6154 roles plus the RFC 3501 inbox; XLIST's Gmail names are mapped onto these when listing.
SPECIAL_USE_FLAGS = frozenset({"\\Inbox", "\\Sent", "\\Drafts", "\\Trash", "\\Junk", "\\Archive", "\\All", "\\Flagged"})


@dataclass(frozen=True, slots=True)
class ImapServer:
    """Where and how to connect. Credentials are not part of it: they go to `ImapClient.login`."""

    host: str
    port: int
    tls: TlsMode = TlsMode.IMPLICIT
    ca_file: Path | None = None  # trust this CA (PEM) instead of the system store, e.g. a self-hosted server's
    timeout: float = 60.0  # seconds the server may stay silent during a command before it counts as dropped
    connect_timeout: float = 15.0  # TCP connect, TLS handshake, greeting
    # Extensions to act as if the server lacked them: works around a server whose MOVE (say) is broken,
    # and lets tests walk the fallback paths against a server that has everything.
    ignore_capabilities: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Mailbox:
    """One entry of LIST: `path` is the full decoded name, `delimiter` separates its levels."""

    path: str
    delimiter: str | None
    flags: frozenset[str]

    @property
    def special_use(self) -> str | None:
        """The role flag (`\\Sent`, `\\Archive`, ...) or None; `\\Inbox` for INBOX."""
        for flag in sorted(self.flags & SPECIAL_USE_FLAGS):
            return flag
        return None

    @property
    def selectable(self) -> bool:
        lowered = {f.lower() for f in self.flags}
        return not lowered & {"\\noselect", "\\nonexistent"}

    @property
    def segments(self) -> tuple[str, ...]:
        """The hierarchy levels, outermost first: ("Archive", "2024") for "Archive/2024"."""
        if not self.delimiter:
            return (self.path,)
        return tuple(self.path.split(self.delimiter))


@dataclass(frozen=True, slots=True)
class MailboxState:
    """What SELECT/EXAMINE reported about the now selected mailbox."""

    path: str
    uidvalidity: int
    uidnext: int | None
    exists: int
    highestmodseq: int | None  # None when the server has no CONDSTORE or the mailbox has NOMODSEQ
    readonly: bool
    permanent_flags: frozenset[str]


@dataclass(frozen=True, slots=True)
class MailboxStatus:
    path: str
    messages: int
    uidnext: int | None
    uidvalidity: int | None
    unseen: int | None
    highestmodseq: int | None


@dataclass(frozen=True, slots=True)
class FetchedMessage:
    uid: int
    flags: frozenset[str]
    internaldate: datetime | None
    size: int
    raw: bytes  # the message exactly as the server holds it (BODY.PEEK[], so \Seen is not set)
    modseq: int | None = None


@dataclass(frozen=True, slots=True)
class FlagState:
    uid: int
    flags: frozenset[str]
    modseq: int | None


@dataclass(frozen=True, slots=True)
class MoveResult:
    """`uid_map` maps source UIDs to UIDs in the target (from COPYUID); empty when the server has no UIDPLUS.

    `expunged` is False only on a server without UIDPLUS whose mailbox held other \\Deleted messages: then
    the source copies stay there flagged \\Deleted, because a plain EXPUNGE would remove those others too."""

    target: str
    uidvalidity: int | None
    uid_map: dict[int, int] = field(default_factory=dict)
    method: Literal["move", "copy+expunge"] = "move"
    expunged: bool = True


@dataclass(frozen=True, slots=True)
class AppendResult:
    uidvalidity: int | None  # both None when the server has no UIDPLUS
    uid: int | None


@dataclass(frozen=True, slots=True)
class MailboxEvent:
    """An unsolicited change the server reported (during IDLE or NOOP).

    `exists`: the mailbox now has `number` messages. `expunge`: sequence number `number` is gone.
    `vanished`: these `uids` are gone (QRESYNC servers send this instead of expunge).
    `fetch`: message `number` (UID in `uids` when the server says it) changed flags to `flags`.
    `recent`: `number` messages are \\Recent."""

    kind: Literal["exists", "expunge", "vanished", "fetch", "recent"]
    number: int | None = None
    uids: tuple[int, ...] = ()
    flags: frozenset[str] | None = None
    modseq: int | None = None
