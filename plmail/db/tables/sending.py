from piccolo.columns import (
    JSONB,
    BigInt,
    BigSerial,
    Boolean,
    ForeignKey,
    Integer,
    OnDelete,
    Serial,
    Text,
    Timestamptz,
    Varchar,
)
from piccolo.table import Table

from plmail.db.tables.accounts import Account
from plmail.db.tables.mail import Message


class Identity(Table, tablename="identity"):
    """An address a user sends as, through one account: the account's own, an alias, or one the provider lists."""

    id = Serial(primary_key=True)
    account = ForeignKey(references=Account, on_delete=OnDelete.cascade, null=False, db_column_name="account_id",
                         index=True)
    email = Varchar(length=320)
    name = Text(default="")
    reply_to = JSONB(default="[]")  # [{"name": …, "email": …}]
    bcc = JSONB(default="[]")
    text_signature = Text(default="")
    html_signature = Text(default="")
    is_primary = Boolean(default=False)
    origin = Varchar(length=16, default="account")  # IdentityOrigin
    # Sending as it is allowed once verified: the account's own address, an address the provider reports as
    # confirmed, or an alias whose confirmation link (sent to it) was opened. NULL: not verified.
    verified_at = Timestamptz(null=True, default=None)
    verify_token_hash = Varchar(length=64, null=True, default=None, unique=True)  # SHA-256 of the link's token
    verify_sent_at = Timestamptz(null=True, default=None)
    created_at = Timestamptz()
    updated_at = Timestamptz()


class Submission(Table, tablename="submission"):
    """One message handed to the outbox: when it goes, to whom, and how far it got."""

    id = BigSerial(primary_key=True)
    account = ForeignKey(references=Account, on_delete=OnDelete.cascade, null=False, db_column_name="account_id",
                         index=True)
    message = ForeignKey(references=Message, on_delete=OnDelete.set_null, null=True, db_column_name="message_id")
    identity = ForeignKey(references=Identity, on_delete=OnDelete.set_null, null=True,
                          db_column_name="identity_id")
    envelope = JSONB(default="{}")  # {"mailFrom": {"email": …}, "rcptTo": [{"email": …}, …]}
    send_at = Timestamptz()
    state = Varchar(length=16, default="pending")  # SubmissionState
    attempts = Integer(default=0)
    last_error = Text(default="")
    delivery = JSONB(default="{}")  # recipient address -> {"smtpReply": …, "delivered": …}
    # JMAP's emailId and threadId, kept when the message itself is deleted (RFC 8621 §7: emailId is never null).
    email_id = BigInt(null=True, default=None)
    thread_id = BigInt(null=True, default=None)
    # What goes, fixed when it was submitted: the message may be deleted meanwhile (JMAP's onSuccessDestroyEmail).
    raw_path = Text(null=True, default=None)
    draft_ref = JSONB(null=True, default=None)  # where the provider keeps the draft, removed once it went
    thread_key = Text(null=True, default=None)  # the provider's conversation id of the mail it answers
    answers_message_id = BigInt(null=True, default=None)  # the message a reply or forward answers
    answer_keyword = Varchar(length=32, null=True, default=None)  # "$answered" / "$forwarded"
    awaiting_copy = Boolean(default=False)  # the provider files its own Sent copy; sync adopts it
    origin = Varchar(length=8, default="web")  # web | jmap | rsvp
    created_at = Timestamptz()
    updated_at = Timestamptz()
    sent_at = Timestamptz(null=True, default=None)
