from piccolo.columns import (
    JSONB,
    BigInt,
    Boolean,
    Bytea,
    ForeignKey,
    Integer,
    OnDelete,
    Serial,
    Text,
    Timestamptz,
    Varchar,
)
from piccolo.table import Table

from plmail.db.tables.users import User


class Account(Table, tablename="account"):
    id = Serial(primary_key=True)
    user = ForeignKey(references=User, on_delete=OnDelete.cascade, null=False, db_column_name="user_id", index=True)
    provider_kind = Varchar(length=16)  # ProviderKind
    name = Text(default="")
    email = Varchar(length=320, default="")
    username = Text(default="")
    credentials = Bytea(null=True, default=None)  # CredentialBox ciphertext, never plaintext
    settings = JSONB(default="{}")
    sync_state = JSONB(default="{}")  # provider cursors (history id, delta links, import pages)
    status = Varchar(length=16, default="ok")  # AccountStatus
    status_detail = Text(default="")
    is_active = Boolean(default=True)
    sort_order = Integer(default=0)
    last_synced_at = Timestamptz(null=True, default=None)
    created_at = Timestamptz()
    updated_at = Timestamptz()


class Mailbox(Table, tablename="mailbox"):
    """An IMAP folder: sync infrastructure only; it reaches its label through a LabelBinding."""

    id = Serial(primary_key=True)
    account = ForeignKey(
        references=Account, on_delete=OnDelete.cascade, null=False, db_column_name="account_id", index=True
    )
    name = Text()
    full_path = Text()
    delimiter = Varchar(length=5, null=True, default=None)
    special_use = Varchar(length=16, null=True, default=None)
    uid_validity = BigInt(null=True, default=None)
    last_seen_uid = BigInt(null=True, default=None)
    import_floor_uid = BigInt(null=True, default=None)
    highest_modseq = BigInt(null=True, default=None)
    total_messages = Integer(null=True, default=None)
    unread_messages = Integer(null=True, default=None)
    is_sync_enabled = Boolean(default=True)
    is_idle_enabled = Boolean(default=False)
    synced_at = Timestamptz(null=True, default=None)
    swept_at = Timestamptz(null=True, default=None)
    created_at = Timestamptz()
    updated_at = Timestamptz()
