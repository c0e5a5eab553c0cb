"""Identities: one address once per account, at most one primary; the outbox's due and per-user lookups."""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-01T19:06:50:000000"
VERSION = "1.38.0"
DESCRIPTION = "identity and submission indexes"

FORWARDS_SQL = """
CREATE UNIQUE INDEX IF NOT EXISTS uniq_identity_account_email ON identity (account_id, lower(email));
CREATE UNIQUE INDEX IF NOT EXISTS uniq_identity_account_primary ON identity (account_id) WHERE is_primary;
CREATE INDEX IF NOT EXISTS idx_submission_due ON submission (send_at) WHERE state = 'pending';
CREATE INDEX IF NOT EXISTS idx_submission_account_created ON submission (account_id, created_at);
CREATE INDEX IF NOT EXISTS idx_submission_awaiting_copy ON submission (account_id) WHERE awaiting_copy;
CREATE INDEX IF NOT EXISTS idx_submission_message ON submission (message_id);
"""

BACKWARDS_SQL = """
DROP INDEX IF EXISTS idx_submission_message;
DROP INDEX IF EXISTS idx_submission_awaiting_copy;
DROP INDEX IF EXISTS idx_submission_account_created;
DROP INDEX IF EXISTS idx_submission_due;
DROP INDEX IF EXISTS uniq_identity_account_primary;
DROP INDEX IF EXISTS uniq_identity_account_email;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
