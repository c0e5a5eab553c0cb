from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import Text
from piccolo.columns.column_types import Varchar
from piccolo.columns.indexes import IndexMethod

ID = "2026-12-01T19:45:40:000000"
VERSION = "1.38.0"
DESCRIPTION = "what was not read of a hostile message; part paths as deep as 100 levels"


async def forwards() -> MigrationManager:
    manager = MigrationManager(
        migration_id=ID, app_name="plmail", description=DESCRIPTION
    )

    manager.add_column(
        table_class_name="Message",
        tablename="message",
        column_name="parse_note",
        db_column_name="parse_note",
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

    manager.alter_column(
        table_class_name="MessagePart",
        tablename="message_part",
        column_name="part_path",
        db_column_name="part_path",
        params={},
        old_params={},
        column_class=Text,
        old_column_class=Varchar,
        schema=None,
    )

    return manager
