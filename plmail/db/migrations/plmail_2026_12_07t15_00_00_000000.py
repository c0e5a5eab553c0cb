"""Kept label counts refreshed once per ingest batch instead of once per statement that touched its threads (issue
36, the first import). A page of a first import inserts messages, labels them, threads them and recomputes its
threads; each of those statements fired a count trigger, and each trigger re-derived the same threads' shares:
about four refreshes of the same fifty threads per page, measured on 2,000 real messages (168 calls, 40 pages).

A transaction may now ask for the refreshes to wait (`plmail.defer_label_counts` set to 'on' with set_config, local
to the transaction): the triggers then only note their threads, and `plmail_flush_label_counts()`, which the
transaction calls before it commits, refreshes them all at once. Nothing else changes: without the setting every
trigger refreshes at once as before, and a refresh re-derives each thread from its rows and adds the difference, so
doing it later in the same transaction gives the same counts. The noted ids live in a transaction-local setting,
so a rollback (or a savepoint's) forgets them with the rows they were noted for.

Safe to run twice; backwards puts the refresh back as it was.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-07T15:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "label counts refreshed once per ingest batch"

FORWARDS_SQL = r"""
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_proc WHERE proname = 'plmail_refresh_label_counts_now') THEN
        ALTER FUNCTION plmail_refresh_label_counts(bigint[]) RENAME TO plmail_refresh_label_counts_now;
    END IF;
END
$$;

-- What every count trigger and the repair call: refresh now, or note the threads for the transaction's flush.
CREATE OR REPLACE FUNCTION plmail_refresh_label_counts(thread_ids bigint[]) RETURNS integer LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('plmail.defer_label_counts', true) = 'on' THEN
        PERFORM set_config('plmail.label_counts_pending',
                           coalesce(current_setting('plmail.label_counts_pending', true), '') || ','
                           || array_to_string(thread_ids, ','), true);
        RETURN 0;
    END IF;
    RETURN plmail_refresh_label_counts_now(thread_ids);
END $$;

-- Ends the deferral and refreshes every thread noted since it began; returns how many shares moved.
CREATE OR REPLACE FUNCTION plmail_flush_label_counts() RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    pending text := trim(both ',' from coalesce(current_setting('plmail.label_counts_pending', true), ''));
    ids bigint[];
BEGIN
    PERFORM set_config('plmail.defer_label_counts', 'off', true);
    PERFORM set_config('plmail.label_counts_pending', '', true);
    IF pending = '' THEN
        RETURN 0;
    END IF;
    SELECT array_agg(DISTINCT x ORDER BY x) INTO ids
      FROM unnest(string_to_array(pending, ',')::bigint[]) AS x WHERE x IS NOT NULL;
    RETURN plmail_refresh_label_counts_now(ids);
END $$;
"""

BACKWARDS_SQL = r"""
DROP FUNCTION IF EXISTS plmail_flush_label_counts();
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_proc WHERE proname = 'plmail_refresh_label_counts_now') THEN
        DROP FUNCTION IF EXISTS plmail_refresh_label_counts(bigint[]);
        ALTER FUNCTION plmail_refresh_label_counts_now(bigint[]) RENAME TO plmail_refresh_label_counts;
    END IF;
END
$$;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
