"""IMAP sync indexes Piccolo cannot declare: a folder is one row per account, and lookups the syncer makes.

A unique (account, path) lets folder discovery upsert instead of read-then-insert; the partial index on
vanished messages serves the adoption and clean-up queries that run on every sync, and the skip index
serves the per-message attempt count of the first import.
"""

from plmail.db.raw_migrations import sql_migration

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

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
