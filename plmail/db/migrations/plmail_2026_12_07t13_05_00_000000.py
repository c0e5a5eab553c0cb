"""Provider-neutral label bindings (issue 31), step 2 of 2: Graph's folder column goes, the neutral ones are text.

Step 1 moved the folder ids into `provider_key`. Dropping a column only marks it dropped in the catalogue, and
varchar to text needs no rewrite and keeps the index.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import Text, Varchar

ID = "2026-12-07T13:05:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "provider-neutral label bindings: drop the provider column"


async def forwards() -> MigrationManager:
    manager = MigrationManager(
        migration_id=ID, app_name="plmail", description=DESCRIPTION
    )

    manager.drop_column(
        table_class_name="LabelBinding",
        tablename="label_binding",
        column_name="graph_folder_id",
        db_column_name="graph_folder_id",
        schema=None,
    )

    manager.alter_column(
        table_class_name="LabelBinding",
        tablename="label_binding",
        column_name="provider_key",
        db_column_name="provider_key",
        params={},
        old_params={"length": 255},
        column_class=Text,
        old_column_class=Varchar,
        schema=None,
    )

    manager.alter_column(
        table_class_name="LabelBinding",
        tablename="label_binding",
        column_name="provider_tag",
        db_column_name="provider_tag",
        params={},
        old_params={"length": 255},
        column_class=Text,
        old_column_class=Varchar,
        schema=None,
    )

    return manager
