"""Piccolo table classes, one module per area. Raw-SQL objects live in the raw migrations."""

from plmail.db.tables.accounts import Account, Mailbox
from plmail.db.tables.jmap import JmapChangeLog
from plmail.db.tables.labels import Label, LabelBinding
from plmail.db.tables.mail import Contact, IngestSkip, Message, MessagePart, MessageThread
from plmail.db.tables.ops import QueueProbe
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
    Label,
    LabelBinding,
    Contact,
    IngestSkip,
    JmapChangeLog,
    QueueProbe,
]

__all__ = [
    "TABLES",
    "Account",
    "AppPassword",
    "Contact",
    "IngestSkip",
    "JmapChangeLog",
    "Label",
    "LabelBinding",
    "LoginThrottle",
    "Mailbox",
    "Message",
    "MessagePart",
    "MessageThread",
    "QueueProbe",
    "User",
]
