"""JMAP states in one round trip (issue 36, JMAP at 1,000,000 messages): reading a state waits for the change log's
writers in flight (a SHARE lock, see plmail/db/repos/jmap_changes.py) and then reads the newest sequences. Done from
the application that was four round trips (BEGIN, the lock, the read, COMMIT), several times a request; this
function takes the lock and reads in one statement. Its VOLATILE body reads with a snapshot taken after the lock, so
what it sees is complete below the maximum, as before. A writer stuck longer than the lock timeout must not stall
every phone: the function then reads without waiting (and says so in the server log), as the application did.

Safe to run twice (CREATE OR REPLACE); backwards drops the function.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-07T14:40:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "JMAP states read under the change log's share lock in one statement"

FORWARDS_SQL = """
CREATE OR REPLACE FUNCTION plmail_jmap_watermarks(accounts bigint[], kinds text[])
    RETURNS TABLE (a bigint, t text, state bigint)
    LANGUAGE plpgsql VOLATILE SET lock_timeout = '2s' AS $$
BEGIN
    BEGIN
        LOCK TABLE jmap_change_log IN SHARE MODE;
    EXCEPTION WHEN lock_not_available THEN
        RAISE WARNING 'jmap_change_log stayed locked for 2s; reading without waiting';
    END;
    RETURN QUERY
    SELECT x.a, x.t, greatest(
           coalesce((SELECT max(c.sequence) FROM jmap_change_log c WHERE c.account_id = x.a AND c.object_type = x.t),
                    0),
           coalesce((SELECT h.pruned_through FROM jmap_change_horizon h
                      WHERE h.account_id = x.a AND h.object_type = x.t), 0))::bigint
      FROM unnest(accounts, kinds) AS x(a, t);
END $$;
"""

BACKWARDS_SQL = """
DROP FUNCTION IF EXISTS plmail_jmap_watermarks(bigint[], text[]);
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
