"""What the JMAP client raises; every message is written for the person who owns the account.

`retryable` tells callers what to do without knowing the subclasses: an unreachable or failing server is worth
trying again; refused credentials or a server that does not speak JMAP mail are not.
"""

from __future__ import annotations

from plmail.domain.errors import PlmailError


class JmapError(PlmailError):
    """Base of everything the JMAP client raises."""

    def __init__(self, message: str, *, status: int | None = None, kind: str | None = None) -> None:
        super().__init__(message)
        self.status = status  # the HTTP status, when the server answered at all
        self.kind = kind  # the JMAP error type (RFC 8620 §3.6), e.g. "cannotCalculateChanges"

    @property
    def retryable(self) -> bool:
        return False


class JmapAuthError(JmapError):
    """401/403: the app password or token was refused."""


class JmapNotFound(JmapError):
    """No JMAP session where it was looked for (404)."""


class NotJmapError(JmapError):
    """Something answered, but not with a JMAP session offering mail (RFC 8621's capability)."""


class NoMailError(NotJmapError):
    """A JMAP server, but without urn:ietf:params:jmap:mail (RFC 8621 §1.3.1) for this account."""


class JmapBlocked(JmapError):
    """The address is (or resolves to) this machine or the local network, which a typed URL may not reach."""


class JmapConnectionError(JmapError):
    """The server could not be reached, or answered with a server error: try again later."""

    @property
    def retryable(self) -> bool:
        return True


class JmapMethodError(JmapError):
    """A method call answered with an error response (RFC 8620 §3.6.2)."""
