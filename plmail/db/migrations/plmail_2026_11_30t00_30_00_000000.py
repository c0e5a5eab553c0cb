"""A message moving threads refreshes `binned` once per statement, not once per moved row.

Thread merges move many messages at once (a first import merges threads on nearly every page); per row,
each move re-derived both threads through a freshly planned function call. The statement-level trigger
has no column list, since PostgreSQL refuses transition tables with one, so it runs on every update of
message and looks only at rows whose thread changed; a read-flag change costs a join over the changed
rows and nothing else.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-11-30T00:30:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "binned refresh once per thread-move statement"

FORWARDS_SQL = r"""
DROP TRIGGER IF EXISTS message_binned_move ON message;
CREATE FUNCTION plmail_message_binned_moved() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
BEGIN
    SELECT array_agg(DISTINCT t.id) INTO ids
      FROM moved_old o JOIN moved_new n ON n.id = o.id
     CROSS JOIN LATERAL (VALUES (o.thread_id), (n.thread_id)) AS t(id)
     WHERE o.thread_id IS DISTINCT FROM n.thread_id AND t.id IS NOT NULL;
    IF ids IS NOT NULL THEN
        PERFORM plmail_refresh_thread_binned(ids);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER message_binned_move AFTER UPDATE ON message
    REFERENCING OLD TABLE AS moved_old NEW TABLE AS moved_new
    FOR EACH STATEMENT EXECUTE FUNCTION plmail_message_binned_moved();
"""

BACKWARDS_SQL = r"""
DROP TRIGGER IF EXISTS message_binned_move ON message;
DROP FUNCTION IF EXISTS plmail_message_binned_moved();
CREATE TRIGGER message_binned_move AFTER UPDATE OF thread_id ON message
    FOR EACH ROW WHEN (OLD.thread_id IS DISTINCT FROM NEW.thread_id) EXECUTE FUNCTION plmail_message_binned();
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
