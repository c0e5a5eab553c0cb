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
from plmail.db.tables.jmap import JmapChangeHorizon, JmapChangeLog, JmapUpload, VacationReply, VacationResponse
from plmail.db.tables.labels import Label, LabelBinding
from plmail.db.tables.mail import (
    Blob,
    Contact,
    IngestSkip,
    Message,
    MessagePart,
    MessageThread,
    MessageTombstone,
)
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
    GmailSkippedMessage,
    GmailQuotaLimit,
    GmailQuotaAccount,
    Identity,
    Submission,
    MessageTombstone,
    VacationResponse,
    VacationReply,
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
    "MessageTombstone",
    "ProviderChange",
    "QueueProbe",
    "Submission",
    "User",
    "VacationReply",
    "VacationResponse",
]
