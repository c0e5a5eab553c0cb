from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import Bytea
from piccolo.columns.column_types import Timestamptz
from piccolo.columns.column_types import Varchar
from piccolo.columns.defaults.timestamptz import TimestamptzNow
from piccolo.columns.indexes import IndexMethod

ID = "2026-11-30T02:12:20:609178"
VERSION = "1.38.0"
DESCRIPTION = "blobs in the database"


async def forwards() -> MigrationManager:
    manager = MigrationManager(
        migration_id=ID, app_name="plmail", description=DESCRIPTION
    )

    manager.add_table(
        class_name="Blob", tablename="blob", schema=None, columns=None
    )

    manager.add_column(
        table_class_name="Blob",
        tablename="blob",
        column_name="digest",
        db_column_name="digest",
        column_class_name="Varchar",
        column_class=Varchar,
        params={
            "length": 64,
            "default": "",
            "null": False,
            "primary_key": True,
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
        table_class_name="Blob",
        tablename="blob",
        column_name="data",
        db_column_name="data",
        column_class_name="Bytea",
        column_class=Bytea,
        params={
            "default": b"",
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
        table_class_name="Blob",
        tablename="blob",
        column_name="created_at",
        db_column_name="created_at",
        column_class_name="Timestamptz",
        column_class=Timestamptz,
        params={
            "default": TimestamptzNow(),
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

    return manager
