"""Deleted mail refreshes its threads' `binned` flag once per statement, not once per message.

Removing an account deletes its mail through foreign keys; with a per-row trigger every message re-derived
its thread on its own, so removal grew with the mailbox (seconds per 10,000 messages). The statement-level
trigger gathers the threads the deleted rows left and re-derives each once. Moves keep the per-row trigger:
PostgreSQL gives no transition tables to a trigger limited to one column, and a statement-level trigger on
every update of message would copy every read-flag change.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-11-30T00:20:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "binned refresh once per delete statement"

FORWARDS_SQL = r"""
DROP TRIGGER IF EXISTS message_binned_delete ON message;
CREATE FUNCTION plmail_message_binned_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
BEGIN
    SELECT array_agg(DISTINCT thread_id) INTO ids FROM removed WHERE thread_id IS NOT NULL;
    IF ids IS NOT NULL THEN
        PERFORM plmail_refresh_thread_binned(ids);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER message_binned_delete AFTER DELETE ON message
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION plmail_message_binned_deleted();
"""

BACKWARDS_SQL = r"""
DROP TRIGGER IF EXISTS message_binned_delete ON message;
DROP FUNCTION IF EXISTS plmail_message_binned_deleted();
CREATE TRIGGER message_binned_delete AFTER DELETE ON message
    FOR EACH ROW WHEN (OLD.thread_id IS NOT NULL) EXECUTE FUNCTION plmail_message_binned();
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
