"""`plmail_refresh_thread_binned` in PL/pgSQL, so its UPDATE is planned once per connection.

As a SQL-language function it was planned again on every call, and the triggers call it for every
statement that moves or bins mail: a first import merges threads on nearly every page, and the planning
cost more than the update. The body is unchanged.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-11-30T03:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "binned refresh planned once per connection"

_BODY = r"""
    UPDATE message_thread t
       SET binned = d.binned
      FROM (
            SELECT t2.id,
                   EXISTS (SELECT 1 FROM message m WHERE m.thread_id = t2.id)
                   AND NOT EXISTS (
                       SELECT 1 FROM message m
                        WHERE m.thread_id = t2.id
                          AND NOT EXISTS (SELECT 1 FROM message_label ml JOIN label l ON l.id = ml.label_id
                                           WHERE ml.message_id = m.id AND l.role = 'trash')) AS binned
              FROM message_thread t2
             WHERE t2.id = ANY(thread_ids)
           ) d
     WHERE t.id = d.id AND t.binned IS DISTINCT FROM d.binned;
"""

FORWARDS_SQL = f"""
CREATE OR REPLACE FUNCTION plmail_refresh_thread_binned(thread_ids bigint[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
{_BODY}
END $$;
"""

BACKWARDS_SQL = f"""
DROP FUNCTION plmail_refresh_thread_binned(bigint[]);
CREATE FUNCTION plmail_refresh_thread_binned(thread_ids bigint[]) RETURNS void
LANGUAGE sql AS $$
{_BODY}
$$;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
