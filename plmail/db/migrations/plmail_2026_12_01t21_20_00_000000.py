"""Undo: the propagator's pending read skips held changes cheaply, and Undo finds an action's changes by key."""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-01T21:20:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "held provider changes index"

FORWARDS_SQL = """
CREATE INDEX IF NOT EXISTS idx_provider_change_held ON provider_change (account_id, hold_until)
    WHERE done_at IS NULL AND hold_until IS NOT NULL;
"""

BACKWARDS_SQL = """
DROP INDEX IF EXISTS idx_provider_change_held;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
