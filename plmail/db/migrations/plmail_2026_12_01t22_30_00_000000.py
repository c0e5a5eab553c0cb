"""Kept counts follow the tab a thread shows in: the user's "file into category" before the built-in category.

The counts' `category` key was the thread's own category, so a conversation a rule filed into Updates was
counted under General while the page listed it under Updates. Both the share derivation and the thread
trigger now use the tab (`coalesce(user_category, category)`, `db/repos/threads.py:thread_tab`), and every
count is derived again. Safe to run twice: functions are replaced, counts rebuilt from the rows.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-01T22:30:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "kept counts by the thread's tab"

FORWARDS_SQL = r"""
CREATE OR REPLACE FUNCTION plmail_label_count_fresh(thread_ids bigint[])
RETURNS TABLE (thread_id bigint, label_id integer, account_id integer, category text, binned boolean,
               threads integer, unread_threads integer, emails integer, unread_emails integer,
               email_threads integer, unread_email_threads integer)
LANGUAGE sql STABLE AS $$
    WITH t AS (
        SELECT t.id, t.account_id, coalesce(t.user_category, t.category, '') AS category, t.binned,
               t.unread_count > 0 AS unread
          FROM message_thread t WHERE t.id = ANY(thread_ids)
    ), tl AS (
        SELECT tl.thread_id, tl.label_id FROM thread_label tl WHERE tl.thread_id = ANY(thread_ids)
    ), ml AS (
        SELECT m.thread_id, ml.label_id, count(*)::int AS emails,
               count(*) FILTER (WHERE m.seen_at IS NULL AND NOT (m.flags ? '\Draft' OR m.flags ? '$draft'))::int
                   AS unread_emails
          FROM message m JOIN message_label ml ON ml.message_id = m.id
         WHERE m.thread_id = ANY(thread_ids)
         GROUP BY m.thread_id, ml.label_id
    )
    SELECT t.id, coalesce(tl.label_id, ml.label_id), t.account_id, t.category, t.binned,
           (tl.label_id IS NOT NULL)::int, (tl.label_id IS NOT NULL AND t.unread)::int,
           coalesce(ml.emails, 0), coalesce(ml.unread_emails, 0),
           (coalesce(ml.emails, 0) > 0)::int, (coalesce(ml.unread_emails, 0) > 0)::int
      FROM tl FULL JOIN ml ON ml.thread_id = tl.thread_id AND ml.label_id = tl.label_id
      JOIN t ON t.id = coalesce(tl.thread_id, ml.thread_id)
$$;

CREATE OR REPLACE FUNCTION plmail_thread_counted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
BEGIN
    IF TG_OP = 'DELETE' THEN
        SELECT array_agg(r.id) INTO ids FROM removed_old r;
    ELSE
        SELECT array_agg(n.id) INTO ids
          FROM changed_old o JOIN changed_new n ON n.id = o.id
         WHERE (o.unread_count > 0) <> (n.unread_count > 0) OR o.binned <> n.binned
            OR coalesce(o.user_category, o.category) IS DISTINCT FROM coalesce(n.user_category, n.category)
            OR o.account_id <> n.account_id;
    END IF;
    IF ids IS NOT NULL THEN
        PERFORM plmail_refresh_label_counts(ids);
    END IF;
    RETURN NULL;
END $$;

-- Without statistics on the tab expression the planner guesses one thread in 200 per tab and sorts the whole
-- mailbox instead of walking the newest threads: the inbox's Primary tab would read every thread.
CREATE STATISTICS IF NOT EXISTS message_thread_tab_stats ON (coalesce(user_category, category)) FROM message_thread;
ANALYZE message_thread;

LOCK TABLE label_count, label_count_share IN EXCLUSIVE MODE;
DELETE FROM label_count_share;
DELETE FROM label_count;
INSERT INTO label_count_share
SELECT * FROM plmail_label_count_fresh(ARRAY(SELECT id FROM message_thread));
INSERT INTO label_count (label_id, account_id, category, binned, threads, unread_threads, emails, unread_emails,
                         email_threads, unread_email_threads)
SELECT label_id, account_id, category, binned, sum(threads), sum(unread_threads), sum(emails), sum(unread_emails),
       sum(email_threads), sum(unread_email_threads)
  FROM label_count_share GROUP BY label_id, account_id, category, binned;
"""

# Going back keeps the tab-keyed functions: the earlier migration's backwards step drops them with the tables.
BACKWARDS_SQL = r"""
DROP STATISTICS IF EXISTS message_thread_tab_stats;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
