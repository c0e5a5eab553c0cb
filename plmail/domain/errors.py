"""One exception tree for everything plmail raises on purpose.

Each error carries a message written for the person running plmail; callers show it as is. Every error
says whether trying the same thing again later can help (`retryable`): a dropped connection or a busy
provider can, a wrong password or a bad setting cannot, so jobs retry the one and stop for the other
without knowing the subclasses. The tree:

    PlmailError
      ConfigurationError, EmbeddedDatabaseError (DataDirInUseError), SchemaError (SchemaTooNewError),
      CredentialError, NotFoundError, CorruptBlobError, ValidationError (FilterError, InvalidMessageError),
      ForbiddenError, ConflictError, UnanswerableError, LimitError,
      AuthenticationError (LoginThrottledError (SecondFactorLockedError), SecondFactorAttemptSpentError,
      ReauthenticationRequiredError), RateLimitedError, SetupAlreadyDoneError
      — beside each provider's client, its own subtree: ImapError (providers/imap/errors.py), GmailApiError
        and GmailQuotaDeferred (providers/gmail/), GraphError (providers/graph/errors.py); PropagationError
        (mail/propagation.py)
      OAuthError (OAuthNotConfiguredError, OAuthGrantError, OAuthDenied, OAuthStateError, OAuthUnavailableError,
      OAuthIdentityMismatch): here, as the OAuth connect pages show them without importing a provider
"""

from __future__ import annotations

from datetime import UTC, datetime


class PlmailError(Exception):
    """Base of every error plmail raises deliberately; by default, one that needs a person, not a retry."""

    @property
    def retryable(self) -> bool:
        return False


def is_retryable(exc: BaseException) -> bool:
    """plmail's own errors say whether trying again can help; anything else (a database hiccup, a reset
    connection inside a library) is passing trouble."""
    return exc.retryable if isinstance(exc, PlmailError) else True


class ConfigurationError(PlmailError):
    """A setting is missing or malformed."""


class EmbeddedDatabaseError(PlmailError):
    """The private PostgreSQL cluster could not be prepared, started or stopped."""


class DataDirInUseError(EmbeddedDatabaseError):
    """Another plmail process already owns this data directory."""


class SchemaError(PlmailError):
    """The database schema does not match this version of plmail."""


class SchemaTooNewError(SchemaError):
    """The database was migrated by a newer plmail than the one running."""


class CredentialError(PlmailError):
    """Stored credentials cannot be decrypted (wrong or replaced key file)."""


class NotFoundError(PlmailError):
    """The object does not exist, or does not belong to the asking user."""


class CorruptBlobError(PlmailError):
    """Stored bytes no longer match the SHA-256 they are named by."""


class ValidationError(PlmailError):
    """Input was rejected; the message says what to change, `field` which input is to blame (when one is)."""

    def __init__(self, message: str = "", *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class InvalidMessageError(ValidationError):
    """The bytes are not a message plmail can store (or send), and the message says why."""


class TooLargeError(ValidationError):
    """Larger than allowed; `max_size` is the limit in octets (JMAP's tooLarge carries it)."""

    def __init__(self, message: str, *, max_size: int, field: str | None = None) -> None:
        super().__init__(message, field=field)
        self.max_size = max_size


class ForbiddenError(PlmailError):
    """The object exists, but this change to it is never allowed (renaming a system label)."""


class ConflictError(PlmailError):
    """The change cannot be made in the object's present state; `reason` names which, in the words JMAP uses
    for it (mailboxHasChild, mailboxHasEmail), so every caller can say it the same way."""

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class UnanswerableError(PlmailError):
    """A read cannot be answered as asked; `reason` names why in JMAP's words (cannotCalculateChanges,
    anchorNotFound, unsupportedSort, unsupportedFilter, tooManyChanges, requestTooLarge)."""

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class LimitError(PlmailError):
    """A limit was reached; `limit` names which (maxConcurrentUpload, maxConcurrentRequests)."""

    def __init__(self, message: str, *, limit: str) -> None:
        super().__init__(message)
        self.limit = limit


class FilterError(ValidationError):
    """A message filter cannot be run; `kind` says how (unsupportedFilter or invalidArguments, as JMAP names them)."""

    def __init__(self, message: str, kind: str = "unsupportedFilter") -> None:
        super().__init__(message)
        self.kind = kind


class AuthenticationError(PlmailError):
    """Email or password did not match."""


class LoginThrottledError(AuthenticationError):
    """Too many failed attempts; try again after `retry_after` seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"Too many failed sign-in attempts. Try again in {retry_after} seconds.")
        self.retry_after = retry_after


class SecondFactorLockedError(LoginThrottledError):
    """Too many wrong second-factor codes for this user within the hour, from anywhere: no code is checked until
    `until`."""

    def __init__(self, until: datetime) -> None:
        super().__init__(max(1, int((until - datetime.now(UTC)).total_seconds() + 0.999)))
        self.until = until


class SecondFactorAttemptSpentError(AuthenticationError):
    """Too many wrong codes after one right password: the sign-in starts over with the password."""


class ReauthenticationRequiredError(AuthenticationError):
    """A change that a session alone may not make (second factor, password, app passwords): the current password
    is needed, unless this session gave it within the last few minutes."""


class RateLimitedError(PlmailError):
    """Too many requests of one kind (connection tests); try again after `retry_after` seconds."""

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        return True


class SetupAlreadyDoneError(PlmailError):
    """The first-run setup was attempted after an admin already exists."""


class OAuthError(PlmailError):
    """Something about OAuth sign-in the user or the admin has to fix; trying again does not help."""

    @property
    def retryable(self) -> bool:
        return False


class OAuthNotConfiguredError(OAuthError):
    """No client id (and secret) for the provider: the admin page or the environment must supply one."""


class OAuthGrantError(OAuthError):
    """The grant was revoked or expired: the account waits in "reconnect" for its user."""


class OAuthDenied(OAuthError):
    """The user declined on the provider's consent screen."""


class OAuthStateError(OAuthError):
    """The callback does not belong to a sign-in this browser started (forged, stale or used twice)."""


class OAuthUnavailableError(OAuthError):
    """The provider could not be reached or answered with a server error; try again later."""

    @property
    def retryable(self) -> bool:
        return True


class OAuthIdentityMismatch(OAuthError):
    """A reconnect signed in as another mailbox than the account's."""

    def __init__(self, signed_in: str, expected: str) -> None:
        super().__init__(f"You signed in as {signed_in}, but this account is {expected}. Sign in as {expected} to "
                         f"reconnect it, or add {signed_in} as a new account.")
        self.signed_in = signed_in
        self.expected = expected
