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
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Literal, Self

import aioimaplib

from plmail.providers.imap import _syntax as syn
from plmail.providers.imap._auth import plain_payload, sign_in_failure, xoauth2_error, xoauth2_payload
from plmail.providers.imap._commands import SaslCommand, XlistCommand
from plmail.providers.imap._connection import Reply
from plmail.providers.imap._selected_mailbox import FETCH_BATCH, SelectedMailboxCommands
from plmail.providers.imap._wire import open_wire
from plmail.providers.imap.errors import (
    ImapAuthError,
    ImapCapabilityError,
    ImapConnectionError,
    ImapError,
    ImapProtocolError,
    NotAnImapServerError,
)
from plmail.providers.imap.models import AppendResult, Mailbox, MailboxEvent, MailboxState, MailboxStatus

if TYPE_CHECKING:
    from plmail.providers.imap.idle import IdleSession

__all__ = ["FETCH_BATCH", "IDLE_RENEW", "ImapClient"]

IDLE_RENEW = 29 * 60.0  # RFC 2177: servers may drop an IDLE after 30 minutes, so re-issue it before that


class ImapClient(SelectedMailboxCommands):
    """One IMAP connection: `async with ImapClient(server) as imap: await imap.login(user, password); ...`

    Its state and command runner live in `ImapConnection` (`_connection.py`), the commands on the selected
    mailbox's messages in `SelectedMailboxCommands` (`_selected_mailbox.py`)."""

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

    async def _authenticate(self, mechanism: str, payload: bytes, *, on_extra: bytes) -> Reply:
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
                return Reply(reply.result, [*reply.lines[:-1], f"{reply.text} ({detail})".encode()])
        return reply

    def _check_auth(self, reply: Reply, username: str) -> None:
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
            raise NotAnImapServerError(f"{self.server.host} is not an IMAP4rev1 server.")
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

    # -- appending and NOOP -------------------------------------------------------------------------------

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
