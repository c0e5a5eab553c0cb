"""Message bodies compressed with lz4 where the server has it.

The default (pglz) took twice as long to compress a body of a few KB; a first import compresses every
body it stores, in the database process that is already the busiest part of it. Rows keep whatever
compression they were written with. A server built without lz4 keeps pglz.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.engine import engine_finder

ID = "2026-11-30T00:50:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "lz4 for message bodies"

FORWARDS_SQL = r"""
DO $$
BEGIN
    ALTER TABLE message ALTER COLUMN body_text SET COMPRESSION lz4,
                        ALTER COLUMN body_html SET COMPRESSION lz4,
                        ALTER COLUMN body_html_safe SET COMPRESSION lz4,
                        ALTER COLUMN headers SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'this PostgreSQL has no lz4; message bodies stay with pglz';
END $$;
"""

BACKWARDS_SQL = r"""
ALTER TABLE message ALTER COLUMN body_text SET COMPRESSION default,
                    ALTER COLUMN body_html SET COMPRESSION default,
                    ALTER COLUMN body_html_safe SET COMPRESSION default,
                    ALTER COLUMN headers SET COMPRESSION default;
"""


async def _execute(script: str) -> None:
    engine = engine_finder()
    assert engine is not None
    transaction = engine.current_transaction.get()
    assert transaction is not None, "raw migrations run inside the migration's transaction"
    await transaction.connection.execute(script)


async def forwards() -> MigrationManager:
    manager = MigrationManager(migration_id=ID, app_name="plmail", description=DESCRIPTION)

    async def run() -> None:
        await _execute(FORWARDS_SQL)

    async def run_backwards() -> None:
        await _execute(BACKWARDS_SQL)

    manager.add_raw(run)
    manager.add_raw_backwards(run_backwards)
    return manager
