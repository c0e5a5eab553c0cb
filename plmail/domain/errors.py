"""One exception tree for everything plmail raises on purpose.

Each error carries a message written for the person running plmail; callers show it as is.
"""

from __future__ import annotations


class PlmailError(Exception):
    """Base of every error plmail raises deliberately."""


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
    """Input was rejected; the message says what to change."""


class AuthenticationError(PlmailError):
    """Email or password did not match."""


class LoginThrottledError(AuthenticationError):
    """Too many failed attempts; try again after `retry_after` seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"Too many failed sign-in attempts. Try again in {retry_after} seconds.")
        self.retry_after = retry_after


class SetupAlreadyDoneError(PlmailError):
    """The first-run setup was attempted after an admin already exists."""
