"""IMAP: the connection client, and the syncer, importer, propagator and IDLE watch built on it (submodules)."""

from plmail.providers.imap.client import FETCH_BATCH, IDLE_RENEW, ImapClient
from plmail.providers.imap.errors import (
    ImapAuthError,
    ImapCapabilityError,
    ImapConnectionError,
    ImapError,
    ImapProtocolError,
    ImapTlsError,
)
from plmail.providers.imap.idle import IdleSession
from plmail.providers.imap.models import (
    SPECIAL_USE_FLAGS,
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

__all__ = [
    "FETCH_BATCH",
    "IDLE_RENEW",
    "SPECIAL_USE_FLAGS",
    "AppendResult",
    "FetchedMessage",
    "FlagState",
    "IdleSession",
    "ImapAuthError",
    "ImapCapabilityError",
    "ImapClient",
    "ImapConnectionError",
    "ImapError",
    "ImapProtocolError",
    "ImapServer",
    "ImapTlsError",
    "Mailbox",
    "MailboxEvent",
    "MailboxState",
    "MailboxStatus",
    "MoveResult",
]
