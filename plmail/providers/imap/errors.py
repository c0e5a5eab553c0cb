"""The IMAP client's exception tree; every message is written for the person who owns the account.

`retryable` tells the caller what to do without knowing the subclasses: try again later (a dropped
connection, a timeout, a server that is busy) or stop and tell the user (wrong password, untrusted
certificate, a server that lacks something plmail needs).
"""

from __future__ import annotations

from plmail.domain.errors import PlmailError


class ImapError(PlmailError):
    """Base of everything the IMAP client raises. `said` is what the server answered, kept apart from plmail's
    own words: a connection test a user runs shows only those (`summarised`), never the server's bytes."""

    def __init__(self, message: str, *, code: str | None = None, said: str | None = None) -> None:
        super().__init__(f"{message} (the server said: {said})" if said else message)
        self.summary = message
        self.code = code  # the server's response code (RFC 5530), e.g. "AUTHENTICATIONFAILED", "NONEXISTENT"
        self.said = said

    def summarised(self) -> ImapError:
        """The same error in plmail's words alone (and the RFC 5530 code, one of a fixed set of tokens)."""
        code = f" [{self.code}]" if self.code and self.code.isalpha() and len(self.code) <= 32 else ""
        return type(self)(self.summary + code, code=self.code)

    @property
    def retryable(self) -> bool:
        return False


class ImapAuthError(ImapError):
    """The server refused the credentials: the account is marked and retrying stops until they change."""


class ImapConnectionError(ImapError):
    """The connection could not be made, dropped, or went silent past the timeout; try again later.

    A connection that raised this is closed: reconnect, never reuse it."""

    @property
    def retryable(self) -> bool:
        return True


class ImapTlsError(ImapError):
    """TLS could not be set up: untrusted or mismatched certificate, failed handshake, no STARTTLS."""


class ImapProtocolError(ImapError):
    """The server rejected a command (NO/BAD) or sent something the client cannot read."""

    @property
    def retryable(self) -> bool:
        # RFC 5530: the server is busy or the mailbox is in use elsewhere; the same command may work later
        return self.code in {"UNAVAILABLE", "INUSE", "LIMIT"}


class NotAnImapServerError(ImapProtocolError):
    """Something answered, but not an IMAP server (its greeting or capabilities say otherwise)."""


class ImapCapabilityError(ImapError):
    """The server lacks an extension the requested operation needs (IDLE, CONDSTORE, UIDPLUS, ...)."""
