from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import Varchar
from piccolo.columns.indexes import IndexMethod

ID = "2026-11-29T23:40:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "graph folder of a message"


async def forwards() -> MigrationManager:
    manager = MigrationManager(
        migration_id=ID, app_name="plmail", description=DESCRIPTION
    )

    manager.add_column(
        table_class_name="Message",
        tablename="message",
        column_name="graph_folder_id",
        db_column_name="graph_folder_id",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 512,
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

    return manager
