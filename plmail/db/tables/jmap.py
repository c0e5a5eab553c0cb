from piccolo.columns import BigInt, BigSerial, Boolean, ForeignKey, OnDelete, Text, Timestamptz, Varchar
from piccolo.table import Table

from plmail.db.tables.accounts import Account
from plmail.db.tables.users import User


class JmapChangeLog(Table, tablename="jmap_change_log"):
    """One row per change; the sequence is the JMAP state token for (account, object type).

    account_id is a plain number, not a foreign key: rows are written from long sync jobs, and the
    log must outlive nothing but its own pruning.
    """

    sequence = BigSerial(primary_key=True)
    account_id = BigInt()
    object_type = Varchar(length=32)
    entity_id = Varchar(length=64)
    change_type = Varchar(length=16)
    created_at = Timestamptz()


class JmapChangeHorizon(Table, tablename="jmap_change_horizon"):
    """How far pruning has eaten into the change log per (account, object type): a client state
    below it may have missed rows and gets cannotCalculateChanges; a state never goes below it."""

    id = BigSerial(primary_key=True)
    account_id = BigInt()
    object_type = Varchar(length=32)
    pruned_through = BigInt(default=0)


class JmapUpload(Table, tablename="jmap_upload"):
    """A blob a JMAP client uploaded, owned by one user and account (none: uploaded to the unified account);
    the bytes live in the blob store under their SHA-256 and the row is what makes `u-<sha256>` reachable only
    by its owner."""

    id = BigSerial(primary_key=True)
    user = ForeignKey(references=User, on_delete=OnDelete.cascade, null=False, db_column_name="user_id")
    account = ForeignKey(
        references=Account, on_delete=OnDelete.cascade, null=True, db_column_name="account_id", index=True
    )
    sha256 = Varchar(length=64)
    content_type = Varchar(length=255, default="application/octet-stream")
    size = BigInt(default=0)
    created_at = Timestamptz(index=True)


class VacationResponse(Table, tablename="vacation_response"):
    """A user's automatic reply (JMAP VacationResponse, RFC 8621 §8): one per user."""

    id = BigSerial(primary_key=True)
    user = ForeignKey(references=User, on_delete=OnDelete.cascade, null=False, db_column_name="user_id",
                      unique=True)
    is_enabled = Boolean(default=False)
    from_date = Timestamptz(null=True, default=None)
    to_date = Timestamptz(null=True, default=None)
    subject = Text(null=True, default=None)
    text_body = Text(null=True, default=None)
    html_body = Text(null=True, default=None)
    updated_at = Timestamptz()


class VacationReply(Table, tablename="vacation_reply"):
    """Who was answered automatically, and when: one reply per sender per period."""

    id = BigSerial(primary_key=True)
    user = ForeignKey(references=User, on_delete=OnDelete.cascade, null=False, db_column_name="user_id")
    sender = Varchar(length=320)
    replied_at = Timestamptz()
