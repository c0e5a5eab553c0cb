"""Gmail skipped-message constraints Piccolo cannot declare: one note per (Gmail id, account), and a closed
set of reasons.

Raw DDL lives in its own migration after the tables' auto migration, because a migration runs its raw
steps before its ``add_table`` steps. The Gmail id leads the unique index so the listing's "is this id
noted?" lookups use it too; it is what holds when two batches note the same id at once.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-11-29T23:30:10:000000"
VERSION = "1.38.0"
DESCRIPTION = "gmail skipped message indexes and constraints"

FORWARDS_SQL = r"""
CREATE UNIQUE INDEX uniq_gmail_skipped_message_gmail_id_account ON gmail_skipped_message (gmail_id, account_id);
CREATE INDEX idx_gmail_skipped_message_account ON gmail_skipped_message (account_id, reason);
ALTER TABLE gmail_skipped_message
    ADD CONSTRAINT gmail_skipped_message_reason_check CHECK (reason IN ('chat', 'gone', 'gmailify'));
ALTER TABLE gmail_quota_account
    ADD CONSTRAINT gmail_quota_account_slow_factor_check CHECK (slow_factor > 0 AND slow_factor <= 1);
"""

BACKWARDS_SQL = r"""
ALTER TABLE gmail_quota_account DROP CONSTRAINT IF EXISTS gmail_quota_account_slow_factor_check;
ALTER TABLE gmail_skipped_message DROP CONSTRAINT IF EXISTS gmail_skipped_message_reason_check;
DROP INDEX IF EXISTS idx_gmail_skipped_message_account;
DROP INDEX IF EXISTS uniq_gmail_skipped_message_gmail_id_account;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
