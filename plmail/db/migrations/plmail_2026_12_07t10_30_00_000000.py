"""The provider-neutral message reference (issue 31), step 1 of 3: the neutral columns appear.

`message.provider_container` is added (the key's container within the account: an IMAP folder row's id, '' for
Gmail and Graph, whose ids are account-wide); Gmail's id column becomes `provider_key` in place, and Gmail's label
column becomes `provider_labels` (the categoriser reads it for Takeout imports too, so it is not Gmail's own).
The tombstone gets the same two columns. Step 2 (`..t10_40..`) moves the data, step 3 (`..t10_50..`) drops the
provider columns. This step only changes the catalogue: adding a column with a constant default and renaming one
rewrite no row, so the table is closed only for a moment; the long parts of steps 2 and 3 run online.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import Text
from piccolo.columns.indexes import IndexMethod

ID = "2026-12-07T10:30:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "provider-neutral message reference: the neutral columns"


async def forwards() -> MigrationManager:
    manager = MigrationManager(
        migration_id=ID, app_name="plmail", description=DESCRIPTION
    )

    manager.add_column(
        table_class_name="Message",
        tablename="message",
        column_name="provider_container",
        db_column_name="provider_container",
        column_class_name="Text",
        column_class=Text,
        params={
            "default": "",
            "null": False,
            "primary_key": False,
            "unique": False,
            "index": False,
            "index_method": IndexMethod.btree,
            "choices": None,
            "db_column_name": None,
            "secret": False,
        },
        schema=None,
    )

    manager.add_column(
        table_class_name="MessageTombstone",
        tablename="message_tombstone",
        column_name="provider_container",
        db_column_name="provider_container",
        column_class_name="Text",
        column_class=Text,
        params={
            "default": "",
            "null": False,
            "primary_key": False,
            "unique": False,
            "index": False,
            "index_method": IndexMethod.btree,
            "choices": None,
            "db_column_name": None,
            "secret": False,
        },
        schema=None,
    )

    manager.add_column(
        table_class_name="MessageTombstone",
        tablename="message_tombstone",
        column_name="provider_key",
        db_column_name="provider_key",
        column_class_name="Text",
        column_class=Text,
        params={
            "default": None,
            "null": True,
            "primary_key": False,
            "unique": False,
            "index": False,
            "index_method": IndexMethod.btree,
            "choices": None,
            "db_column_name": None,
            "secret": False,
        },
        schema=None,
    )

    # gmail_id becomes the neutral key in place: a Gmail account's rows already hold their key and are not
    # written again (a rename is a catalogue change; step 3 makes it text, which is one too).
    manager.rename_column(
        table_class_name="Message",
        tablename="message",
        old_column_name="gmail_id",
        new_column_name="provider_key",
        old_db_column_name="gmail_id",
        new_db_column_name="provider_key",
        schema=None,
    )

    manager.rename_column(
        table_class_name="Message",
        tablename="message",
        old_column_name="gmail_label_ids",
        new_column_name="provider_labels",
        old_db_column_name="gmail_label_ids",
        new_db_column_name="provider_labels",
        schema=None,
    )

    return manager
