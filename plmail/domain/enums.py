"""Closed vocabularies stored in the database as their string values."""

from __future__ import annotations

from enum import StrEnum


class ProviderKind(StrEnum):
    IMAP = "imap"
    GMAIL = "gmail"
    GRAPH = "graph"
    LOCAL = "local"  # an archive account filled by `plmail import-mbox`; nothing to sync or propagate


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


class JmapObjectType(StrEnum):
    MAILBOX = "Mailbox"
    EMAIL = "Email"
    THREAD = "Thread"
    EMAIL_SUBMISSION = "EmailSubmission"
    IDENTITY = "Identity"


class ChangeType(StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    DESTROYED = "destroyed"


class Locale(StrEnum):
    EN = "en"
    DE = "de"
