"""Piccolo's configuration module (PICCOLO_CONF points here).

The DSN is a placeholder until `plmail.db.engine.open_engine()` points the engine at the real
database, which may be the embedded cluster started moments before.
"""

import os

from piccolo.conf.apps import AppRegistry
from piccolo.engine.postgres import PostgresEngine


class DeferredPostgresEngine(PostgresEngine):
    """Skips Piccolo's connect-on-construction version probe: no database is running at import time."""

    async def check_version(self) -> None:
        return None

    async def prep_database(self) -> None:
        return None


DB = DeferredPostgresEngine(
    config={"dsn": os.environ.get("PLMAIL_DATABASE_URL", "postgresql:///plmail")},
    extensions=(),
)

APP_REGISTRY = AppRegistry(apps=["plmail.db.piccolo_app"])
