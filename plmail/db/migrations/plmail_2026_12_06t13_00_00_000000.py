"""The sender verdict stored with each message (issue 30): whether the receiving server authenticated the From
domain, why, and which server's header was believed (mail/sender_auth.py, domain/authentication.py SenderVerdict).
Every consumer (file into category, the thread view's warning, "Why is this here?") reads this one value; NULL for
mail stored before, judged on first use and stored then. A nullable column without a default: no table rewrite.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.columns.column_types import JSONB
from piccolo.columns.indexes import IndexMethod

ID = "2026-12-06T13:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "sender authentication verdict per message"


async def forwards() -> MigrationManager:
    manager = MigrationManager(
        migration_id=ID, app_name="plmail", description=DESCRIPTION
    )

    manager.add_column(
        table_class_name="Message",
        tablename="message",
        column_name="sender_auth",
        db_column_name="sender_auth",
        column_class_name="JSONB",
        column_class=JSONB,
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

    return manager
