"""The provider-neutral message reference (issue 31), step 3 of 3: the provider columns go.

Step 2 moved what they held into the neutral columns and the providers' side tables. Dropping a column only
marks it dropped in the catalogue (no rewrite), so this is short even on a large mailbox; the indexes of the
neutral reference are then built concurrently, online (`plmail/db/online_migration.py`), after the key's change
to text: a type change rebuilds the partial and expression indexes on its column under an exclusive lock.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import Text, Varchar

from plmail.db.online_migration import ConcurrentIndex, OnlineStep

ID = "2026-12-07T10:50:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "provider-neutral message reference: drop the provider columns"


async def forwards() -> MigrationManager:
    manager = MigrationManager(
        migration_id=ID, app_name="plmail", description=DESCRIPTION
    )

    manager.drop_column(
        table_class_name="Message",
        tablename="message",
        column_name="graph_folder_id",
        db_column_name="graph_folder_id",
        schema=None,
    )

    manager.drop_column(
        table_class_name="Message",
        tablename="message",
        column_name="graph_id",
        db_column_name="graph_id",
        schema=None,
    )

    manager.drop_column(
        table_class_name="Message",
        tablename="message",
        column_name="imap_uid",
        db_column_name="imap_uid",
        schema=None,
    )

    manager.drop_column(
        table_class_name="MessageTombstone",
        tablename="message_tombstone",
        column_name="gmail_id",
        db_column_name="gmail_id",
        schema=None,
    )

    manager.drop_column(
        table_class_name="MessageTombstone",
        tablename="message_tombstone",
        column_name="graph_id",
        db_column_name="graph_id",
        schema=None,
    )

    manager.drop_column(
        table_class_name="MessageTombstone",
        tablename="message_tombstone",
        column_name="imap_uid",
        db_column_name="imap_uid",
        schema=None,
    )

    manager.drop_column(
        table_class_name="MessageTombstone",
        tablename="message_tombstone",
        column_name="mailbox_id",
        db_column_name="mailbox_id",
        schema=None,
    )

    # Piccolo's diff applies alterations before renames, so the key becomes text here, after step 1 renamed it:
    # varchar to text needs no rewrite, and no index is on the key yet (step 2 dropped Gmail's).
    manager.alter_column(
        table_class_name="Message",
        tablename="message",
        column_name="provider_key",
        db_column_name="provider_key",
        params={},
        old_params={"length": 255},
        column_class=Text,
        old_column_class=Varchar,
        schema=None,
    )

    return manager


ONLINE: tuple[OnlineStep, ...] = (
    ConcurrentIndex("uniq_message_provider_ref",
                    "ON message (provider_container, provider_key, account_id) WHERE provider_key IS NOT NULL",
                    unique=True),
    ConcurrentIndex("idx_message_key_number",
                    "ON message (provider_container, plmail_key_number(provider_key)) WHERE provider_container <> ''"),
    ConcurrentIndex("idx_message_tombstone_ref",
                    "ON message_tombstone (account_id, provider_container, provider_key) WHERE provider_key IS NOT NULL"),
)
