"""The list's invitation chip (issue 32): calendar parts indexed alone, so asking whether a conversation's newest
message carries one costs a probe of a small index instead of reading every part of the message."""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-07T12:30:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "calendar parts indexed for the list's invitation chip"

FORWARDS_SQL = r"""
CREATE INDEX IF NOT EXISTS idx_message_part_calendar ON message_part (message_id) WHERE is_calendar;
"""

BACKWARDS_SQL = r"""
DROP INDEX IF EXISTS idx_message_part_calendar;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
