"""The Piccolo app that owns plmail's tables and migrations."""

from pathlib import Path

from piccolo.conf.apps import AppConfig

from plmail.db.tables import TABLES

APP_CONFIG = AppConfig(
    app_name="plmail",
    migrations_folder_path=str(Path(__file__).parent / "migrations"),
    table_classes=list(TABLES),
    migration_dependencies=[],
    commands=[],
)
