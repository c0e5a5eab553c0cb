"""The reply lookup's index without a pending list.

Every stored batch asks which stored messages refer to its Message-IDs (a child that arrived before its
parent, which a top-down import makes common). With GIN's fast update, fresh entries wait in a pending list
that every such lookup scans, so the lookup grew with each batch; written straight into the index, it stays
a few index probes.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-11-30T00:10:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "reply lookup index without a pending list"

FORWARDS_SQL = r"""
ALTER INDEX idx_message_referenced_ids SET (fastupdate = off);
"""

BACKWARDS_SQL = r"""
ALTER INDEX idx_message_referenced_ids RESET (fastupdate);
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
