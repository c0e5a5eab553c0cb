"""Unified JMAP: uploads to the unified account are the user's own; tombstones are found by provider reference
while their deletion waits; a sender's automatic replies are found per user."""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-01T20:29:50:000000"
VERSION = "1.38.0"
DESCRIPTION = "unified uploads, tombstone and vacation reply indexes"

FORWARDS_SQL = """
CREATE UNIQUE INDEX IF NOT EXISTS uniq_jmap_upload_user_sha ON jmap_upload (user_id, sha256) WHERE account_id IS NULL;
CREATE INDEX IF NOT EXISTS idx_message_tombstone_pending ON message_tombstone (account_id, id) WHERE done_at IS NULL;
CREATE INDEX IF NOT EXISTS idx_message_tombstone_imap ON message_tombstone (account_id, mailbox_id, imap_uid)
    WHERE imap_uid IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_message_tombstone_gmail ON message_tombstone (account_id, gmail_id)
    WHERE gmail_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_message_tombstone_graph ON message_tombstone (account_id, graph_id)
    WHERE graph_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_vacation_reply_sender ON vacation_reply (user_id, lower(sender), replied_at DESC);
"""

BACKWARDS_SQL = """
DROP INDEX IF EXISTS idx_vacation_reply_sender;
DROP INDEX IF EXISTS idx_message_tombstone_graph;
DROP INDEX IF EXISTS idx_message_tombstone_gmail;
DROP INDEX IF EXISTS idx_message_tombstone_imap;
DROP INDEX IF EXISTS idx_message_tombstone_pending;
DROP INDEX IF EXISTS uniq_jmap_upload_user_sha;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
