"""IMAP sync indexes Piccolo cannot declare: a folder is one row per account, and lookups the syncer makes.

A unique (account, path) lets folder discovery upsert instead of read-then-insert; the partial index on
vanished messages serves the adoption and clean-up queries that run on every sync, and the skip index
serves the per-message attempt count of the first import.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.engine import engine_finder

ID = "2026-11-29T22:00:10:000000"
VERSION = "1.38.0"
DESCRIPTION = "imap sync indexes"

FORWARDS_SQL = r"""
CREATE UNIQUE INDEX uniq_mailbox_account_path ON mailbox (account_id, full_path);
CREATE INDEX idx_message_vanished ON message (account_id, vanished_at) WHERE vanished_at IS NOT NULL;
CREATE INDEX idx_ingest_skip_account_ref ON ingest_skip (account_id, source_ref);
"""

BACKWARDS_SQL = r"""
DROP INDEX IF EXISTS idx_ingest_skip_account_ref;
DROP INDEX IF EXISTS idx_message_vanished;
DROP INDEX IF EXISTS uniq_mailbox_account_path;
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
