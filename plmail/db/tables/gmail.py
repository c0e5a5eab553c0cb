"""Gmail's own bookkeeping: messages seen and not stored, and the shared quota pacer's state."""

from piccolo.columns import (
    JSONB,
    BigSerial,
    ForeignKey,
    Integer,
    OnDelete,
    Real,
    Serial,
    Text,
    Timestamptz,
    Varchar,
)
from piccolo.table import Table

from plmail.db.tables.accounts import Account


class GmailSkippedMessage(Table, tablename="gmail_skipped_message"):
    """A Gmail message that was looked at and not stored (a chat, a listed id answering 404, mail a sibling
    account owns), with its labels and address headers; the listing treats it as stored."""

    id = BigSerial(primary_key=True)
    account = ForeignKey(references=Account, on_delete=OnDelete.cascade, null=False, db_column_name="account_id")
    gmail_id = Varchar(length=255)
    gmail_thread_id = Varchar(length=255, null=True, default=None)
    reason = Varchar(length=32)  # chat | gone | gmailify
    label_ids = JSONB(null=True, default=None)
    from_address = Text(null=True, default=None)
    to_addresses = JSONB(default="[]")
    cc_addresses = JSONB(default="[]")
    delivered_to = JSONB(default="[]")
    subject = Text(null=True, default=None)
    detail = Text(default="")
    created_at = Timestamptz()


class GmailQuotaLimit(Table, tablename="gmail_quota_limit"):
    """The per-user units-per-minute limit Google named in a rejection, per OAuth client (project)."""

    id = Serial(primary_key=True)
    client_id = Varchar(length=255, unique=True)
    limit_units = Integer()
    learned_at = Timestamptz()


class GmailQuotaAccount(Table, tablename="gmail_quota_account"):
    """What one Gmail account has spent (as the pacer's next free moment) and when it was last rejected,
    shared by every worker."""

    id = Serial(primary_key=True)
    account = ForeignKey(references=Account, on_delete=OnDelete.cascade, null=False, db_column_name="account_id",
                         unique=True)
    next_at = Timestamptz(null=True, default=None)
    blocked_until = Timestamptz(null=True, default=None)
    rejected_at = Timestamptz(null=True, default=None)
    rejections = Integer(default=0)
    slow_factor = Real(default=1.0)
    slow_until = Timestamptz(null=True, default=None)
    updated_at = Timestamptz()


class GmailDraft(Table, tablename="gmail_draft"):
    """A Gmail draft's own id beside the id of the message it holds now: Gmail updates and deletes a draft by
    the draft id, and plmail's stored draft knows only its message's."""

    id = BigSerial(primary_key=True)
    account = ForeignKey(references=Account, on_delete=OnDelete.cascade, null=False, db_column_name="account_id")
    draft_id = Varchar(length=255)
    gmail_message_id = Varchar(length=255)
    updated_at = Timestamptz()
