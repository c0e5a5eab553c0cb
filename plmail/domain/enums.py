"""Closed vocabularies stored in the database as their string values."""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar


class ProviderKind(str):
    """Which provider an account belongs to, as stored in `account.provider_kind`.

    Not a closed enum: the built-in kinds are named below, and a provider plugin may bring a kind of its own
    (one new folder, nothing else to edit). Values are interned, so `is` compares them as it would enum members.
    """

    __slots__ = ()
    _interned: ClassVar[dict[str, ProviderKind]] = {}
    IMAP: ClassVar[ProviderKind]
    GMAIL: ClassVar[ProviderKind]
    GRAPH: ClassVar[ProviderKind]
    LOCAL: ClassVar[ProviderKind]  # an archive account filled by `plmail import-mbox`; nothing to sync or propagate

    def __new__(cls, value: str) -> ProviderKind:
        known = cls._interned.get(value)
        if known is None:
            if not value or len(value) > 16 or not value.replace("_", "").isalnum() or value != value.lower():
                raise ValueError(f"{value!r} is not a provider kind (lower-case letters, digits, _; at most 16)")
            known = cls._interned[value] = super().__new__(cls, value)
        return known

    @property
    def value(self) -> str:
        return str.__str__(self)

    def __repr__(self) -> str:
        return f"ProviderKind({self.value!r})"


ProviderKind.IMAP = ProviderKind("imap")
ProviderKind.GMAIL = ProviderKind("gmail")
ProviderKind.GRAPH = ProviderKind("graph")
ProviderKind.LOCAL = ProviderKind("local")


class AccountStatus(StrEnum):
    OK = "ok"
    AUTH_FAILED = "auth_failed"
    RECONNECT = "reconnect"
    DISABLED = "disabled"


class LabelRole(StrEnum):
    INBOX = "inbox"
    SENT = "sent"
    DRAFTS = "drafts"
    TRASH = "trash"
    SPAM = "spam"
    ARCHIVE = "archive"
    SNOOZED = "snoozed"

    def has_provider_folder(self) -> bool:
        """Snoozed exists only in plmail; treating it as a folder would search for an id nobody set."""
        return self is not LabelRole.SNOOZED


class Category(StrEnum):
    GENERAL = "primary"
    PROMOTIONS = "promotions"
    SOCIAL = "social"
    UPDATES = "updates"
    FORUMS = "forums"


class ThreadingMethod(StrEnum):
    PROVIDER = "provider"
    REFERENCES = "references"
    SUBJECT_FALLBACK = "subject_fallback"
    NONE = "none"


class QueueName(StrEnum):
    INGEST = "ingest"
    INGEST_BACKLOG = "ingest_backlog"
    ENRICH_LIVE = "enrich_live"
    ENRICH = "enrich"
    ENRICH_BACKLOG = "enrich_backlog"
    RELEASE = "release"
    SEND = "send"  # outgoing submissions: a slow SMTP server delays nothing else


class JmapObjectType(StrEnum):
    MAILBOX = "Mailbox"
    EMAIL = "Email"
    THREAD = "Thread"
    EMAIL_SUBMISSION = "EmailSubmission"
    IDENTITY = "Identity"
    VACATION_RESPONSE = "VacationResponse"


class ChangeType(StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    DESTROYED = "destroyed"


class Locale(StrEnum):
    EN = "en"
    DE = "de"
