"""Gmail drafts: one row per draft of an account, found again by the id of the message it holds."""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-01T19:25:10:000000"
VERSION = "1.38.0"
DESCRIPTION = "gmail_draft indexes"

FORWARDS_SQL = """
CREATE UNIQUE INDEX IF NOT EXISTS uniq_gmail_draft_account_draft ON gmail_draft (account_id, draft_id);
CREATE INDEX IF NOT EXISTS idx_gmail_draft_account_message ON gmail_draft (account_id, gmail_message_id);
"""

BACKWARDS_SQL = """
DROP INDEX IF EXISTS idx_gmail_draft_account_message;
DROP INDEX IF EXISTS uniq_gmail_draft_account_draft;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
