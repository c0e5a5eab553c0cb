"""The Graph client's exception tree; every message is written for the person who owns the account.

`retryable` tells callers what to do without knowing the subclasses: a throttled request, a busy or
unreachable service is worth trying again; a refused sign-in or a request Graph calls malformed is not.
"""

from __future__ import annotations

from plmail.domain.errors import PlmailError


class GraphError(PlmailError):
    """Base of everything the Graph client raises."""

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status  # the HTTP status, when Graph answered at all
        self.code = code  # Graph's error code, e.g. "ErrorItemNotFound", "syncStateNotFound"

    @property
    def retryable(self) -> bool:
        return False


class GraphConnectionError(GraphError):
    """Graph could not be reached, or answered with a server error: try again later."""

    @property
    def retryable(self) -> bool:
        return True


class GraphThrottled(GraphError):
    """429 (or 503) with Retry-After: the mailbox's request budget is spent. Not a failure: the work is
    rescheduled for when Graph said to come back."""

    def __init__(self, message: str, *, retry_after: float, status: int | None = 429, code: str | None = None) -> None:
        super().__init__(message, status=status, code=code)
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        return True


class GraphAuthError(GraphError):
    """Graph refused a freshly renewed access token: the grant lacks a permission or was withdrawn."""


class GraphNotFound(GraphError):
    """The message or folder is gone (deleted, or moved under a new id)."""


class GraphSyncStateGone(GraphError):
    """A delta link or skip token expired (410 syncStateNotFound): the folder must be enumerated again."""


class GraphRequestError(GraphError):
    """Graph rejected the request as such (400, 403, ...); repeating it unchanged cannot help."""
