"""Piccolo table classes, one module per area. Raw-SQL objects live in the raw migrations."""

from plmail.db.tables.accounts import Account, Mailbox
from plmail.db.tables.calendar import (
    Calendar,
    CalendarEvent,
    CalendarEventOccurrence,
    EventProposal,
    EventSourceLink,
    EventSuppression,
)
from plmail.db.tables.gmail import GmailQuotaAccount, GmailQuotaLimit, GmailSkippedMessage
from plmail.db.tables.jmap import JmapChangeHorizon, JmapChangeLog, JmapUpload
from plmail.db.tables.labels import Label, LabelBinding
from plmail.db.tables.mail import Blob, Contact, IngestSkip, Message, MessagePart, MessageThread
from plmail.db.tables.ops import AppSetting, QueueProbe
from plmail.db.tables.rules import MailRule, ProviderChange
from plmail.db.tables.users import AppPassword, LoginThrottle, RecoveryCode, TrustedDevice, User, WebSession

TABLES = [
    User,
    AppPassword,
    LoginThrottle,
    WebSession,
    TrustedDevice,
    RecoveryCode,
    Account,
    Mailbox,
    MessageThread,
    Message,
    MessagePart,
    Blob,
    Label,
    LabelBinding,
    Contact,
    IngestSkip,
    JmapChangeLog,
    JmapChangeHorizon,
    JmapUpload,
    QueueProbe,
    AppSetting,
    MailRule,
    ProviderChange,
    Calendar,
    CalendarEvent,
    CalendarEventOccurrence,
    EventSourceLink,
    EventSuppression,
    EventProposal,
    GmailSkippedMessage,
    GmailQuotaLimit,
    GmailQuotaAccount,
]

__all__ = [
    "TABLES",
    "Account",
    "AppPassword",
    "AppSetting",
    "Blob",
    "Calendar",
    "CalendarEvent",
    "CalendarEventOccurrence",
    "Contact",
    "EventProposal",
    "EventSourceLink",
    "EventSuppression",
    "GmailQuotaAccount",
    "GmailQuotaLimit",
    "GmailSkippedMessage",
    "IngestSkip",
    "JmapChangeHorizon",
    "JmapChangeLog",
    "JmapUpload",
    "Label",
    "LabelBinding",
    "LoginThrottle",
    "MailRule",
    "Mailbox",
    "Message",
    "MessagePart",
    "MessageThread",
    "ProviderChange",
    "QueueProbe",
    "RecoveryCode",
    "TrustedDevice",
    "User",
    "WebSession",
]
