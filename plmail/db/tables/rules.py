from piccolo.columns import JSONB, BigSerial, Boolean, ForeignKey, Integer, OnDelete, Serial, Text, Timestamptz, Varchar
from piccolo.table import Table

from plmail.db.tables.accounts import Account
from plmail.db.tables.mail import Message
from plmail.db.tables.users import User


class MailRule(Table, tablename="mail_rule"):
    """A user's filter: a condition tree and actions, run on each new batch after threading."""

    id = Serial(primary_key=True)
    user = ForeignKey(references=User, on_delete=OnDelete.cascade, null=False, db_column_name="user_id", index=True)
    account = ForeignKey(references=Account, on_delete=OnDelete.cascade, null=True, db_column_name="account_id")
    name = Text(default="")
    conditions = JSONB(default="{}")
    actions = JSONB(default="[]")
    is_enabled = Boolean(default=True)
    sort_order = Integer(default=0)
    stop_processing = Boolean(default=False)
    run_state = Varchar(length=16, default="idle")  # idle | queued | running | completed | failed
    run_processed = Integer(default=0)
    run_matched = Integer(default=0)
    run_error = Text(default="")
    run_started_at = Timestamptz(null=True, default=None)
    run_finished_at = Timestamptz(null=True, default=None)
    created_at = Timestamptz()
    updated_at = Timestamptz()


class ProviderChange(Table, tablename="provider_change"):
    """A change made in plmail that the provider still has to be told about.

    Written in the same transaction as the change itself, with the folder the message was in before
    it, so the propagation job can move it at the provider even after the local labels have moved.
    """

    id = BigSerial(primary_key=True)
    account = ForeignKey(references=Account, on_delete=OnDelete.cascade, null=False, db_column_name="account_id")
    message = ForeignKey(references=Message, on_delete=OnDelete.cascade, null=False, db_column_name="message_id")
    kind = Varchar(length=300)  # labels | seen | starred | keyword:<name>
    added = JSONB(default="[]")  # label ids
    removed = JSONB(default="[]")
    flag_value = Boolean(null=True, default=None)
    source_mailbox_id = Integer(null=True, default=None)
    attempts = Integer(default=0)
    last_error = Text(default="")
    created_at = Timestamptz()
    done_at = Timestamptz(null=True, default=None)
    # An action the user can still undo: propagation waits until then, and Undo deletes what is still waiting.
    hold_until = Timestamptz(null=True, default=None)
    undo_key = Varchar(length=40, null=True, default=None, index=True)
