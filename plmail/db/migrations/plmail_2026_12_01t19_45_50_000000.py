"""Housekeeping finds ended sessions and forgotten devices by time (users/sessions.py, prune)."""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-01T19:45:50:000000"
VERSION = "1.38.0"
DESCRIPTION = "web_session and trusted_device indexes for pruning"

FORWARDS_SQL = """
CREATE INDEX IF NOT EXISTS idx_web_session_expires_at ON web_session (expires_at);
CREATE INDEX IF NOT EXISTS idx_web_session_last_seen_at ON web_session (last_seen_at);
CREATE INDEX IF NOT EXISTS idx_trusted_device_last_seen_at ON trusted_device (last_seen_at);
"""

BACKWARDS_SQL = """
DROP INDEX IF EXISTS idx_trusted_device_last_seen_at;
DROP INDEX IF EXISTS idx_web_session_last_seen_at;
DROP INDEX IF EXISTS idx_web_session_expires_at;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
