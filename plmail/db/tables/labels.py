from typing import Any

from piccolo.columns import Boolean, ForeignKey, Integer, OnDelete, Serial, Text, Timestamptz, Varchar
from piccolo.table import Table

from plmail.db.tables.accounts import Account, Mailbox
from plmail.db.tables.users import User


class Label(Table, tablename="label"):
    """Owned by the user, not by an account: two accounts' "Receipts" folders are one label."""

    id = Serial(primary_key=True)
    user = ForeignKey(references=User, on_delete=OnDelete.cascade, null=False, db_column_name="user_id", index=True)
    parent: ForeignKey[Any] = ForeignKey(
        references="self", on_delete=OnDelete.cascade, null=True, db_column_name="parent_id"
    )
    name = Text()
    role = Varchar(length=16, null=True, default=None)  # LabelRole; None for the user's own labels
    color = Varchar(length=16, null=True, default=None)
    is_visible = Boolean(default=True)
    sort_order = Integer(null=True, default=None)
    created_at = Timestamptz()
    updated_at = Timestamptz()


class LabelBinding(Table, tablename="label_binding"):
    """Where a label is materialised at one account's provider; its id is the JMAP Mailbox id."""

    id = Serial(primary_key=True)
    label = ForeignKey(references=Label, on_delete=OnDelete.cascade, null=False, db_column_name="label_id")
    account = ForeignKey(
        references=Account, on_delete=OnDelete.cascade, null=False, db_column_name="account_id", index=True
    )
    mailbox = ForeignKey(
        references=Mailbox, on_delete=OnDelete.set_null, null=True, db_column_name="mailbox_id", unique=True
    )
    # The provider's own id for the label where it keeps the label as a label or folder of its own (IMAP's
    # folders are `mailbox` rows instead); the provider looks its labels up by it.
    provider_key = Text(null=True, default=None, index=True)
    # The name the provider tags messages with where it keeps the label only as a name on them, not as a place.
    provider_tag = Text(null=True, default=None)
    created_at = Timestamptz()
    updated_at = Timestamptz()
