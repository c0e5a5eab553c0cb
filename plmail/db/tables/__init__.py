"""Piccolo table classes, one module per area. Raw-SQL objects live in the raw migrations."""

from plmail.db.tables.accounts import Account, Mailbox
from plmail.db.tables.calendar import (
    Calendar,
    CalendarChange,
    CalendarEvent,
    CalendarEventOccurrence,
    CalendarSubscription,
    EventProposal,
    EventSourceLink,
    EventSuppression,
)
from plmail.db.tables.gmail import GmailDraft, GmailQuotaAccount, GmailQuotaLimit, GmailSkippedMessage
from plmail.db.tables.jmap import JmapChangeHorizon, JmapChangeLog, JmapUpload
from plmail.db.tables.labels import Label, LabelBinding
from plmail.db.tables.mail import Blob, Contact, IngestSkip, Message, MessagePart, MessageThread
from plmail.db.tables.ops import AppSetting, QueueProbe
from plmail.db.tables.rules import MailRule, ProviderChange
from plmail.db.tables.sending import Identity, Submission
from plmail.db.tables.users import AppPassword, LoginThrottle, User

TABLES = [
    User,
    AppPassword,
    LoginThrottle,
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
    CalendarSubscription,
    CalendarChange,
    GmailSkippedMessage,
    GmailQuotaLimit,
    GmailDraft,
    GmailQuotaAccount,
    Identity,
    Submission,
]

__all__ = [
    "TABLES",
    "Account",
    "AppPassword",
    "AppSetting",
    "Blob",
    "Calendar",
    "CalendarChange",
    "CalendarEvent",
    "CalendarEventOccurrence",
    "CalendarSubscription",
    "Contact",
    "EventProposal",
    "EventSourceLink",
    "EventSuppression",
    "GmailDraft",
    "GmailQuotaAccount",
    "GmailQuotaLimit",
    "GmailSkippedMessage",
    "Identity",
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
    "Submission",
    "User",
]
