"""The reply lookup's index without a pending list.

Every stored batch asks which stored messages refer to its Message-IDs (a child that arrived before its
parent, which a top-down import makes common). With GIN's fast update, fresh entries wait in a pending list
that every such lookup scans, so the lookup grew with each batch; written straight into the index, it stays
a few index probes.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.engine import engine_finder

ID = "2026-11-30T00:10:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "reply lookup index without a pending list"

FORWARDS_SQL = r"""
ALTER INDEX idx_message_referenced_ids SET (fastupdate = off);
"""

BACKWARDS_SQL = r"""
ALTER INDEX idx_message_referenced_ids RESET (fastupdate);
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
