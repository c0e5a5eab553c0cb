"""Fewer index entries per stored message.

`idx_message_account_received` is covered by `idx_message_account_received_id` (same leading columns, and
every query orders or filters in a way that index serves). The provider-id unique indexes of Gmail and
Graph held a NULL entry for every IMAP message (and each other's); partial, they hold only their own
provider's mail, and every lookup through them names an id, so the planner still uses them. ON CONFLICT
DO NOTHING without a target keeps treating them as arbiters.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-11-30T00:40:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "fewer index entries per message"

FORWARDS_SQL = r"""
DROP INDEX IF EXISTS idx_message_account_received;
DROP INDEX IF EXISTS uniq_message_gmail_id_account;
CREATE UNIQUE INDEX uniq_message_gmail_id_account ON message (gmail_id, account_id) WHERE gmail_id IS NOT NULL;
DROP INDEX IF EXISTS uniq_message_graph_id_account;
CREATE UNIQUE INDEX uniq_message_graph_id_account ON message (graph_id, account_id) WHERE graph_id IS NOT NULL;
"""

BACKWARDS_SQL = r"""
DROP INDEX IF EXISTS uniq_message_graph_id_account;
CREATE UNIQUE INDEX uniq_message_graph_id_account ON message (graph_id, account_id);
DROP INDEX IF EXISTS uniq_message_gmail_id_account;
CREATE UNIQUE INDEX uniq_message_gmail_id_account ON message (gmail_id, account_id);
CREATE INDEX idx_message_account_received ON message (account_id, received_at DESC);
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
