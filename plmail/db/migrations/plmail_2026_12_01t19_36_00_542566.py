from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import Varchar

ID = "2026-12-01T19:36:00:542566"
VERSION = "1.38.0"
DESCRIPTION = "provider_change.kind holds keyword:<name>"


async def forwards() -> MigrationManager:
    manager = MigrationManager(
        migration_id=ID, app_name="plmail", description=DESCRIPTION
    )

    manager.alter_column(
        table_class_name="ProviderChange",
        tablename="provider_change",
        column_name="kind",
        db_column_name="kind",
        params={"length": 64},
        old_params={"length": 16},
        column_class=Varchar,
        old_column_class=Varchar,
        schema=None,
    )

    return manager
