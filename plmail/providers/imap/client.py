"""An IMAP client shaped for plmail's syncer, importer and propagator, on top of aioimaplib.

One `ImapClient` is one connection. Every command runs under the connection's lock, because aioimaplib keys
pending commands by name and cannot pipeline two of the same kind; composite operations (MOVE's fallback)
hold it throughout. The selected mailbox is connection state: `fetch_raw`, `store_flags`, `move` and the
searches act on whatever `select` opened last.

A command fails with `ImapConnectionError` when the server stays silent for `ImapServer.timeout` seconds or
the link drops; the connection is then closed and the caller reconnects. Cancelling a command closes the
connection too, since the position in the response stream is lost.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Self

import aioimaplib

from plmail.providers.imap import _syntax as syn
from plmail.providers.imap._auth import plain_payload, sign_in_failure, xoauth2_error, xoauth2_payload
from plmail.providers.imap._commands import SaslCommand, XlistCommand
from plmail.providers.imap._wire import Wire, open_wire
from plmail.providers.imap.errors import (
    ImapAuthError,
    ImapCapabilityError,
    ImapConnectionError,
    ImapError,
    ImapProtocolError,
)
from plmail.providers.imap.models import (
    AppendResult,
    FetchedMessage,
    FlagState,
    ImapServer,
    Mailbox,
    MailboxEvent,
    MailboxState,
    MailboxStatus,
    MoveResult,
)

if TYPE_CHECKING:
    from plmail.providers.imap.idle import IdleSession

FETCH_BATCH = 50  # messages per UID FETCH of bodies: the seed's batch size, and a bounded response in memory
_SET_BATCH = 500  # UIDs per STORE/MOVE/COPY command, keeping command lines short on sparse sets
IDLE_RENEW = 29 * 60.0  # RFC 2177: servers may drop an IDLE after 30 minutes, so re-issue it before that


@dataclass(frozen=True, slots=True)
class _Reply:
    result: str  # OK, NO, BAD
    lines: list[syn.Part]

    @property
    def text(self) -> str:
        return syn.status_text(self.lines)

    @property
    def code(self) -> str | None:
        return syn.response_code(self.text)


class ImapClient:
    """One IMAP connection: `async with ImapClient(server) as imap: await imap.login(user, password); ...`"""

    def __init__(self, server: ImapServer) -> None:
        self.server = server
        self._wire: Wire | None = None
        self._lock = asyncio.Lock()
        self._caps: frozenset[str] = frozenset()
        self._enabled: frozenset[str] = frozenset()
        self._selected: MailboxState | None = None
        self._authenticated = False
        self._idling = False

    # -- connection ------------------------------------------------------------------------------------

    async def connect(self) -> None:
        """Open the connection (TLS as configured) and read the capabilities; then call a login method."""
        if self._wire is not None:
            raise ImapProtocolError("This client is already connected; use a new ImapClient per connection.")
        self._wire, preauth = await open_wire(self.server)
        try:
            async with self._lock:
                await self._refresh_capabilities()
                if preauth:
                    self._authenticated = True
                    await self._enable_extensions()
        except BaseException:
            await self._drop()  # `async with` never reaches __aexit__ when __aenter__ fails
            raise

    async def __aenter__(self) -> Self:
        await self.connect()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    @property
    def capabilities(self) -> frozenset[str]:
        """Upper-cased, without the ones `ImapServer.ignore_capabilities` hides."""
        return self._caps

    def has(self, capability: str) -> bool:
        return capability.upper() in self._caps

    @property
    def condstore(self) -> bool:
        """MODSEQ values are available (CONDSTORE or QRESYNC enabled)."""
        return bool(self._enabled & {"CONDSTORE", "QRESYNC"})

    @property
    def selected(self) -> MailboxState | None:
        return self._selected

    @property
    def tls_version(self) -> str | None:
        """The negotiated protocol ("TLSv1.3") when encrypted, None on a plain connection."""
        wire = self._wire
        if wire is None or wire.transport is None:
            return None
        ssl_object = wire.transport.get_extra_info("ssl_object")
        return None if ssl_object is None else str(ssl_object.version())

    @property
    def is_open(self) -> bool:
        return self._wire is not None and not self._wire.closed

    async def logout(self) -> None:
        """Say goodbye politely, then close. Raises if the server does not answer."""
        async with self._guard():
            try:
                await self._command(self._cmd("LOGOUT"), "logging out")
            finally:
                await self._drop()

    async def close(self) -> None:
        """Log out if the connection is idle and healthy, then close it; never raises."""
        wire = self._wire
        if wire is None:
            return
        if not wire.closed and not self._lock.locked() and not self._idling:
            try:
                async with self._lock:
                    async with asyncio.timeout(min(self.server.timeout, 2.0)):
                        await self._command(self._cmd("LOGOUT"), "logging out")
            except (ImapError, TimeoutError):
                pass
        await self._drop()

    # -- authentication ----------------------------------------------------------------------------------

    async def login(
        self, username: str, password: str, *, mechanism: Literal["auto", "plain", "login"] = "auto"
    ) -> None:
        """Authenticate with a password: AUTHENTICATE PLAIN when offered ("auto"), else LOGIN.

        Raises ImapAuthError when the server refuses the credentials (do not retry), ImapConnectionError
        when it is only temporarily unable to check them."""
        async with self._guard():
            self._require_unauthenticated()
            if "LOGINDISABLED" in self._caps:
                raise ImapAuthError(
                    f"{self.server.host} does not accept passwords on an unencrypted connection. "
                    "Choose STARTTLS or implicit TLS."
                )
            use_plain = mechanism == "plain" or (mechanism == "auto" and "AUTH=PLAIN" in self._caps)
            if use_plain:
                reply = await self._authenticate("PLAIN", plain_payload(username, password), on_extra=b"*")
            else:
                if not (username.isascii() and password.isascii()):
                    raise ImapCapabilityError(
                        "This password has characters LOGIN cannot carry, and the server offers no AUTH=PLAIN."
                    )
                command = self._cmd("LOGIN", syn.quote(username), syn.quote(password))
                reply = await self._command(command, "logging in", scrub=syn.quote(password))
            self._check_auth(reply, username)
            await self._authenticated_now()

    async def login_oauth2(self, username: str, access_token: str) -> None:
        """SASL XOAUTH2 (Gmail, Outlook) with an OAuth access token."""
        async with self._guard():
            self._require_unauthenticated()
            if "AUTH=XOAUTH2" not in self._caps:
                raise ImapCapabilityError(f"{self.server.host} does not offer OAuth sign-in (AUTH=XOAUTH2).")
            reply = await self._authenticate("XOAUTH2", xoauth2_payload(username, access_token), on_extra=b"")
            self._check_auth(reply, username)
            await self._authenticated_now()

    async def _authenticate(self, mechanism: str, payload: bytes, *, on_extra: bytes) -> _Reply:
        wire = self._live_wire()
        assert wire.transport is not None
        inline = "SASL-IR" in self._caps  # RFC 4959: the first response rides on the command line
        command = SaslCommand(
            self._imap.new_tag(), mechanism,
            initial=payload if inline else None, responses=[] if inline else [payload],
            on_extra=on_extra, transport=wire.transport, loop=wire.loop,
        )
        reply = await self._command(command, "signing in", scrub=base64.b64encode(payload).decode())
        if reply.result != "OK" and mechanism == "XOAUTH2" and command.challenges:
            detail = xoauth2_error(command.challenges[-1])
            if detail:
                return _Reply(reply.result, [*reply.lines[:-1], f"{reply.text} ({detail})".encode()])
        return reply

    def _check_auth(self, reply: _Reply, username: str) -> None:
        error = sign_in_failure(self.server.host, username, reply.result, reply.code, reply.text)
        if error is None:
            return
        if isinstance(error, ImapConnectionError):
            self._live_wire().fail(error)
        raise error

    async def _authenticated_now(self) -> None:
        self._imap.state = aioimaplib.AUTH
        self._authenticated = True
        await self._refresh_capabilities()  # they change after sign-in (RFC 3501 6.2)
        await self._enable_extensions()

    async def _enable_extensions(self) -> None:
        # ENABLE is legal only before SELECT (RFC 5161); QRESYNC implies CONDSTORE.
        wanted = "QRESYNC" if "QRESYNC" in self._caps else "CONDSTORE" if "CONDSTORE" in self._caps else None
        if wanted is None:
            return
        if "ENABLE" not in self._caps:
            self._enabled = frozenset({"CONDSTORE"}) if wanted == "CONDSTORE" else frozenset()
            return  # a CONDSTORE server without ENABLE turns it on with the first MODSEQ fetch
        reply = await self._command(self._cmd("ENABLE", wanted), "enabling extensions")
        enabled = set(syn.enabled_extensions(reply.lines[:-1]))
        if "QRESYNC" in enabled:
            enabled.add("CONDSTORE")
        self._enabled = frozenset(enabled)

    async def _refresh_capabilities(self) -> None:
        reply = self._ok(await self._command(self._cmd("CAPABILITY"), "reading capabilities"), "CAPABILITY")
        caps = syn.capabilities(reply.lines[:-1])
        if "IMAP4REV1" not in caps and "IMAP4REV2" not in caps:
            raise ImapProtocolError(f"{self.server.host} is not an IMAP4rev1 server.")
        self._caps = frozenset(caps - {c.upper() for c in self.server.ignore_capabilities})
        # aioimaplib checks some of these itself (IDLE, MOVE, UIDPLUS): let it see the same set
        self._imap.capabilities = set(self._caps)

    # -- mailboxes ---------------------------------------------------------------------------------------

    async def list_mailboxes(self) -> list[Mailbox]:
        """Every mailbox with its hierarchy delimiter and flags, special-use roles included.

        RFC 6154 via LIST ... RETURN (SPECIAL-USE) when offered, Gmail's old XLIST otherwise, else a plain
        LIST (roles then only as far as the server volunteers them; INBOX always gets \\Inbox)."""
        async with self._guard():
            self._require_auth()
            wire = self._live_wire()
            if "SPECIAL-USE" in self._caps and "LIST-EXTENDED" in self._caps:
                command = self._cmd("LIST", '""', '"*"', "RETURN", "(SPECIAL-USE)")
                xlist = False
            elif "XLIST" in self._caps:
                command = XlistCommand(self._imap.new_tag(), '""', '"*"', loop=wire.loop)
                xlist = True
            else:
                command = self._cmd("LIST", '""', '"*"')
                xlist = False
            reply = self._ok(await self._command(command, "listing folders"), "listing folders")
            return syn.parse_list(reply.lines, xlist=xlist)

    async def select(self, path: str, *, readonly: bool = False) -> MailboxState:
        """Open a mailbox (EXAMINE when `readonly`). A failure leaves no mailbox selected (RFC 3501 6.3.1)."""
        async with self._guard():
            return await self._select(path, readonly)

    async def _select(self, path: str, readonly: bool) -> MailboxState:
        self._require_auth()
        name = "EXAMINE" if readonly else "SELECT"
        reply = await self._command(self._cmd(name, syn.mailbox_arg(path)), f"opening {path!r}")
        if reply.result != "OK":
            self._imap.state = aioimaplib.AUTH
            self._selected = None
            raise ImapProtocolError(f"Cannot open the folder {path!r}: {reply.text}", code=reply.code)
        self._imap.state = aioimaplib.SELECTED
        values = syn.select_values(reply.lines)
        if "UIDVALIDITY" not in values:
            raise ImapProtocolError(f"{self.server.host} did not report a UIDVALIDITY for {path!r}.")
        state = MailboxState(
            path=path,
            uidvalidity=int(values["UIDVALIDITY"]),  # type: ignore[call-overload]
            uidnext=values.get("UIDNEXT"),  # type: ignore[arg-type]
            exists=int(values.get("EXISTS", 0)),  # type: ignore[call-overload]
            highestmodseq=values.get("HIGHESTMODSEQ"),  # type: ignore[arg-type]
            readonly=readonly or bool(values.get("READ-ONLY")),
            permanent_flags=values.get("PERMANENTFLAGS", frozenset()),  # type: ignore[arg-type]
        )
        self._selected = state
        return state

    async def status(self, path: str) -> MailboxStatus:
        """Counters of a mailbox without selecting it. RFC 3501 advises against STATUS on the selected mailbox;
        use `select` (or `noop`) for that one."""
        async with self._guard():
            self._require_auth()
            items = "(MESSAGES UIDNEXT UIDVALIDITY UNSEEN" + (" HIGHESTMODSEQ)" if self.condstore else ")")
            reply = await self._command(self._cmd("STATUS", syn.mailbox_arg(path), items), f"checking {path!r}")
            return syn.parse_status(self._ok(reply, f"checking {path!r}").lines, path)

    async def create_mailbox(self, path: str, *, exist_ok: bool = False) -> None:
        async with self._guard():
            self._require_auth()
            reply = await self._command(self._cmd("CREATE", syn.mailbox_arg(path)), f"creating {path!r}")
            if reply.result == "OK":
                return
            if exist_ok and (reply.code == "ALREADYEXISTS" or "exist" in reply.text.lower()):
                return
            raise ImapProtocolError(f"Cannot create the folder {path!r}: {reply.text}", code=reply.code)

    # -- searching and fetching -------------------------------------------------------------------------

    async def uid_search(self, criteria: str = "ALL") -> list[int]:
        """UIDs in the selected mailbox matching raw IMAP search criteria, ascending."""
        async with self._guard():
            return await self._uid_search(criteria)

    async def _uid_search(self, criteria: str) -> list[int]:
        self._require_selected()
        # aioimaplib would send CHARSET utf-8 always; ASCII criteria need none, and some servers reject it
        args: list[str] = [] if criteria.isascii() else ["CHARSET", "UTF-8"]
        esearch = "ESEARCH" in self._caps
        if esearch:
            args = ["RETURN", "(ALL)", *args]  # RFC 4731: one compact line such as "1:5000" instead of every UID
        command = aioimaplib.Command(
            "SEARCH", self._imap.new_tag(), *args, criteria, prefix="UID",
            untagged_resp_name="ESEARCH" if esearch else "SEARCH", loop=self._live_wire().loop,
        )
        reply = self._ok(await self._command(command, "searching"), "searching")
        return syn.parse_search(reply.lines, esearch=esearch)

    async def uids_below(self, floor: int, *, low: int = 1) -> list[int]:
        """UIDs from `low` up to just below `floor` (the importer's window: existing history under the floor)."""
        low = max(low, 1)
        if floor <= low:
            return []
        return await self.uid_search(f"UID {low}:{floor - 1}")

    async def uids_above(self, last: int) -> list[int]:
        """UIDs strictly above `last` (new mail since the last sync)."""
        uids = await self.uid_search(f"UID {last + 1}:*")
        # "n:*" always matches the highest UID, even when it is below n (RFC 3501 6.4.8)
        return [u for u in uids if u > last]

    async def fetch_raw(self, uids: Iterable[int]) -> list[FetchedMessage]:
        """Full messages, byte for byte, in UID order, fetched FETCH_BATCH at a time without setting \\Seen.

        UIDs that no longer exist are simply missing from the result."""
        wanted = sorted(set(uids))
        if not wanted:
            return []
        items = "(UID FLAGS INTERNALDATE RFC822.SIZE BODY.PEEK[]" + (" MODSEQ)" if self.condstore else ")")
        out: list[FetchedMessage] = []
        async with self._guard():
            self._require_selected()
            wanted_set = set(wanted)
            for batch in syn.chunks(wanted, FETCH_BATCH):
                command = aioimaplib.FetchCommand(
                    self._imap.new_tag(), syn.uid_set(batch), items, prefix="UID", loop=self._live_wire().loop
                )
                reply = self._ok(await self._command(command, "fetching messages"), "fetching messages")
                for _, data in syn.parse_fetch(reply.lines):
                    message = syn.fetched_message(data)
                    if message is not None and message.uid in wanted_set:
                        out.append(message)
        out.sort(key=lambda m: m.uid)
        return out

    async def fetch_flags(
        self, uids: Iterable[int] | str = "1:*", *, changedsince: int | None = None
    ) -> list[FlagState]:
        """Flags (and MODSEQ with CONDSTORE) of the given UIDs or UID set text; with `changedsince`, only of
        messages whose MODSEQ is above it (RFC 7162 CHANGEDSINCE)."""
        if changedsince is not None and not self.condstore:
            raise ImapCapabilityError(f"{self.server.host} has no CONDSTORE, so changes cannot be asked for by MODSEQ.")
        if isinstance(uids, str):
            sets = [syn.check_uid_set(uids)]
        else:
            ordered = sorted(set(uids))
            sets = [syn.uid_set(batch) for batch in syn.chunks(ordered, _SET_BATCH)]
        items = "(UID FLAGS MODSEQ)" if self.condstore else "(UID FLAGS)"
        modifier = [f"(CHANGEDSINCE {changedsince})"] if changedsince is not None else []
        found: dict[int, FlagState] = {}
        async with self._guard():
            self._require_selected()
            for uid_text in sets:
                # a plain Command: FetchCommand re-scans all lines per line (quadratic on thousands of FLAGS lines),
                # and flag responses carry no literals that would need its parenthesis tracking
                command = aioimaplib.Command(
                    "FETCH", self._imap.new_tag(), uid_text, items, *modifier, prefix="UID",
                    loop=self._live_wire().loop,
                )
                reply = self._ok(await self._command(command, "fetching flags"), "fetching flags")
                for _, data in syn.parse_fetch(reply.lines):
                    state = syn.flag_state(data)
                    if state is not None:
                        found[state.uid] = state
        return [found[u] for u in sorted(found)]

    # -- changing -----------------------------------------------------------------------------------------

    async def store_flags(
        self, uids: Iterable[int], *, add: Iterable[str] = (), remove: Iterable[str] = ()
    ) -> None:
        """Add and/or remove flags (`\\Seen`, `\\Flagged`, keywords) on messages of the selected mailbox."""
        ordered = sorted(set(uids))
        requested = (("+FLAGS.SILENT", list(add)), ("-FLAGS.SILENT", list(remove)))
        changes = [(op, syn.flag_list(flags)) for op, flags in requested if flags]
        if not ordered or not changes:
            return
        async with self._guard():
            self._require_selected(writable=True)
            await self._store(ordered, changes)

    async def _store(self, uids: list[int], changes: list[tuple[str, str]]) -> None:
        for op, flags in changes:
            for batch in syn.chunks(uids, _SET_BATCH):
                command = aioimaplib.Command(
                    "STORE", self._imap.new_tag(), syn.uid_set(batch), op, flags, prefix="UID",
                    untagged_resp_name="FETCH", loop=self._live_wire().loop,
                )
                self._ok(await self._command(command, "changing flags"), "changing flags")

    async def move(self, uids: Iterable[int], target: str) -> MoveResult:
        """Move messages from the selected mailbox to `target`.

        MOVE (RFC 6851) when offered; else COPY, \\Deleted and UID EXPUNGE of exactly these messages (UIDPLUS).
        Without UIDPLUS a plain EXPUNGE runs only if no other message is marked \\Deleted; otherwise the
        originals stay flagged \\Deleted and `expunged` is False. A missing target fails with code TRYCREATE."""
        ordered = sorted(set(uids))
        if not ordered:
            return MoveResult(target=target, uidvalidity=None)
        async with self._guard():
            self._require_selected(writable=True)
            mailbox = syn.mailbox_arg(target)
            uidvalidity: int | None = None
            uid_map: dict[int, int] = {}
            if "MOVE" in self._caps:
                for batch in syn.chunks(ordered, _SET_BATCH):
                    command = self._cmd("MOVE", syn.uid_set(batch), mailbox, prefix="UID")
                    reply = self._ok(await self._command(command, f"moving to {target!r}"), f"moving to {target!r}")
                    # COPYUID comes untagged after UID MOVE (RFC 6851 4.3), aioimaplib does not parse it
                    validity, mapping = syn.parse_copyuid(reply.lines)
                    uidvalidity = validity or uidvalidity
                    uid_map.update(mapping)
                return MoveResult(target=target, uidvalidity=uidvalidity, uid_map=uid_map)
            for batch in syn.chunks(ordered, _SET_BATCH):
                command = self._cmd("COPY", syn.uid_set(batch), mailbox, prefix="UID")
                reply = self._ok(await self._command(command, f"copying to {target!r}"), f"copying to {target!r}")
                # ... and in the tagged OK after UID COPY (RFC 4315)
                validity, mapping = syn.parse_copyuid(reply.lines)
                uidvalidity = validity or uidvalidity
                uid_map.update(mapping)
            await self._store(ordered, [("+FLAGS.SILENT", "(\\Deleted)")])
            expunged = await self._expunge(ordered)
            return MoveResult(
                target=target, uidvalidity=uidvalidity, uid_map=uid_map, method="copy+expunge", expunged=expunged
            )

    async def expunge(self, uids: Iterable[int] | None = None) -> bool:
        """Remove \\Deleted messages: only `uids` when given (UID EXPUNGE; without UIDPLUS only when no other
        message is \\Deleted, see `move`), else all of them. Returns whether the expunge ran."""
        async with self._guard():
            self._require_selected(writable=True)
            return await self._expunge(sorted(set(uids)) if uids is not None else None)

    async def _expunge(self, uids: list[int] | None) -> bool:
        loop = self._live_wire().loop
        if uids is None:
            command = aioimaplib.Command("EXPUNGE", self._imap.new_tag(), loop=loop)
            self._ok(await self._command(command, "expunging"), "expunging")
            return True
        if not uids:
            return True
        if "UIDPLUS" in self._caps:
            for batch in syn.chunks(uids, _SET_BATCH):
                command = aioimaplib.Command(
                    "EXPUNGE", self._imap.new_tag(), syn.uid_set(batch), prefix="UID", loop=loop
                )
                self._ok(await self._command(command, "expunging"), "expunging")
            return True
        # A plain EXPUNGE removes every \Deleted message, also those another client only marked.
        if not set(await self._uid_search("DELETED")) <= set(uids):
            return False
        command = aioimaplib.Command("EXPUNGE", self._imap.new_tag(), loop=loop)
        self._ok(await self._command(command, "expunging"), "expunging")
        return True

    async def append(
        self, mailbox: str, raw: bytes, *, flags: Iterable[str] = (), date: datetime | None = None
    ) -> AppendResult:
        """Store a message in `mailbox`; `date` (timezone-aware) becomes its INTERNALDATE."""
        if date is not None and date.tzinfo is None:
            raise ValueError("the INTERNALDATE of an appended message must be timezone-aware")
        flag_items = list(flags)
        flag_text = syn.flag_list(flag_items) if flag_items else None
        async with self._guard():
            self._require_auth()
            coro = self._imap.append(raw, syn.mailbox_arg(mailbox), flag_text, date)
            reply = self._ok(await self._command(coro, f"saving to {mailbox!r}"), f"saving to {mailbox!r}")
            uidvalidity, uid = syn.parse_appenduid(reply.text)
            return AppendResult(uidvalidity=uidvalidity, uid=uid)

    async def noop(self) -> list[MailboxEvent]:
        """Keep the connection alive and collect what changed in the selected mailbox meanwhile."""
        async with self._guard():
            # aioimaplib routes untagged responses nobody asked for to a pending NOOP
            reply = self._ok(await self._command(self._cmd("NOOP"), "checking the connection"), "NOOP")
            return syn.parse_events(reply.lines[:-1])

    # -- IDLE ---------------------------------------------------------------------------------------------

    def idle(self, mailbox: str, *, timeout: float | None = None, renew_after: float = IDLE_RENEW) -> IdleSession:
        """Wait for changes in `mailbox` (opened read-only if it is not the selected one).

            async with client.idle("INBOX", timeout=600) as changes:
                async for event in changes:
                    if event.kind == "exists":
                        break

        The iteration ends after `timeout` seconds (None: never); IDLE is renewed every `renew_after` seconds.
        Leaving the block sends DONE. The connection is busy meanwhile: other commands raise."""
        from plmail.providers.imap.idle import IdleSession  # the session drives this client; import at use

        return IdleSession(self, mailbox, timeout=timeout, renew_after=min(renew_after, IDLE_RENEW))

    # -- internals ----------------------------------------------------------------------------------------

    @property
    def _imap(self) -> Any:
        return self._live_wire().imap

    def _live_wire(self) -> Wire:
        wire = self._wire
        if wire is None:
            raise ImapConnectionError("Not connected; call connect() first.")
        if wire.closed:
            raise self._dropped(wire, "working")
        return wire

    def _dropped(self, wire: Wire, what: str) -> ImapError:
        failure = wire.failure
        if failure is not None:
            return type(failure)(str(failure), code=failure.code)  # a fresh instance each time it is raised
        bye = wire.imap.bye
        reason = f" (the server said: {bye.rstrip('.')})" if bye else ""
        return ImapConnectionError(f"The connection to {self.server.host} dropped while {what}{reason}.")

    def _guard(self) -> asyncio.Lock:
        if self._idling:
            raise ImapProtocolError("The connection is in IDLE; leave the idle block before sending commands.")
        return self._lock

    def _cmd(self, name: str, *args: str, prefix: str | None = None) -> Any:
        return aioimaplib.Command(name, self._imap.new_tag(), *args, prefix=prefix, loop=self._live_wire().loop)

    def _require_unauthenticated(self) -> None:
        self._live_wire()
        if self._authenticated:
            raise ImapProtocolError("Already signed in on this connection.")

    def _require_auth(self) -> None:
        self._live_wire()
        if not self._authenticated:
            raise ImapProtocolError("Not signed in; call login() first.")

    def _require_selected(self, *, writable: bool = False) -> None:
        self._require_auth()
        if self._selected is None:
            raise ImapProtocolError("No folder is open; call select() first.")
        if writable and self._selected.readonly:
            raise ImapProtocolError(f"The folder {self._selected.path!r} is open read-only.")

    def _ok(self, reply: _Reply, what: str) -> _Reply:
        if reply.result != "OK":
            raise ImapProtocolError(f"{what} failed: {reply.text or reply.result}", code=reply.code)
        return reply

    async def _command(self, command: Any, what: str, *, scrub: str | None = None) -> _Reply:
        """Run one aioimaplib command (or an awaitable that runs one) under the silence timeout.

        The caller holds the lock."""
        wire = self._live_wire()
        loop = wire.loop
        timeout = self.server.timeout
        if asyncio.iscoroutine(command):
            task: asyncio.Future[Any] = asyncio.ensure_future(command)
        else:
            task = asyncio.ensure_future(self._imap.execute(command, scrub=scrub))
        wire.last_activity = loop.time()
        try:
            while not task.done():
                if wire.lost.done():
                    raise self._dropped(wire, what)
                remaining = wire.last_activity + timeout - loop.time()
                if remaining <= 0:
                    error = ImapConnectionError(
                        f"{self.server.host} stopped answering for {timeout:g} s while {what}; "
                        "the connection was closed."
                    )
                    wire.fail(error)
                    raise error
                await asyncio.wait((task, wire.lost), timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not task.done():
                task.cancel()
                # the response is still on its way; nothing later on this stream could be matched up
                wire.fail(ImapConnectionError(f"The connection was closed because {what} was interrupted."))
        try:
            response = task.result()
        except aioimaplib.AioImapException as exc:
            raise ImapProtocolError(f"{what} failed: {exc}") from exc
        return _Reply(result=str(response.result), lines=list(response.lines))

    async def _drop(self) -> None:
        wire, self._wire = self._wire, None
        self._selected = None
        self._authenticated = False
        self._caps = self._enabled = frozenset()
        if wire is None or wire.transport is None:
            return
        if not wire.lost.done():
            wire.transport.close()
            try:
                async with asyncio.timeout(1.0):
                    await asyncio.shield(wire.lost)
            except TimeoutError:
                wire.transport.abort()
