"""Kept counts: threads and emails per (label, account, inbox tab, binned), maintained by triggers.

Triggers rather than the operations' own statements, for the reason the `binned` flag has them: the writes
that move a count are scattered (labels through several repositories, thread recomputes and merges, the
binned triggers, ON DELETE CASCADE and SET NULL), and a count kept by application code is right only on
the paths someone remembered. Each trigger gathers the threads a statement touched and re-derives those
threads' shares from scratch; the change against the stored share is added to `label_count`. Adding the
difference (never writing an absolute value) keeps two transactions touching one thread from undoing each
other's change. A periodic repair (mail/counts.py) re-derives everything and logs what drifted.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-01T21:30:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "kept label counts"

FORWARDS_SQL = r"""
CREATE TABLE label_count (
    label_id integer NOT NULL REFERENCES label (id) ON DELETE CASCADE,
    account_id integer NOT NULL REFERENCES account (id) ON DELETE CASCADE,
    category text NOT NULL,  -- the thread's inbox tab, '' for none
    binned boolean NOT NULL,
    threads integer NOT NULL DEFAULT 0,  -- threads carrying the label (thread_label)
    unread_threads integer NOT NULL DEFAULT 0,  -- of those, with an unread message
    emails integer NOT NULL DEFAULT 0,  -- messages carrying the label
    unread_emails integer NOT NULL DEFAULT 0,  -- of those, unread and not drafts (RFC 8621 section 2)
    email_threads integer NOT NULL DEFAULT 0,  -- threads with a message carrying the label
    unread_email_threads integer NOT NULL DEFAULT 0,  -- threads with an unread, non-draft message carrying it
    PRIMARY KEY (label_id, account_id, category, binned)
);
CREATE INDEX idx_label_count_account ON label_count (account_id);

-- What each thread adds to label_count, as last derived: the memory the next change is compared with.
CREATE TABLE label_count_share (
    thread_id bigint NOT NULL,
    label_id integer NOT NULL,
    account_id integer NOT NULL,
    category text NOT NULL,
    binned boolean NOT NULL,
    threads integer NOT NULL,
    unread_threads integer NOT NULL,
    emails integer NOT NULL,
    unread_emails integer NOT NULL,
    email_threads integer NOT NULL,
    unread_email_threads integer NOT NULL,
    PRIMARY KEY (thread_id, label_id, account_id, category, binned)
);

-- The threads' shares as their rows say now (threads that no longer exist have none).
CREATE FUNCTION plmail_label_count_fresh(thread_ids bigint[])
RETURNS TABLE (thread_id bigint, label_id integer, account_id integer, category text, binned boolean,
               threads integer, unread_threads integer, emails integer, unread_emails integer,
               email_threads integer, unread_email_threads integer)
LANGUAGE sql STABLE AS $$
    WITH t AS (
        SELECT t.id, t.account_id, coalesce(t.category, '') AS category, t.binned, t.unread_count > 0 AS unread
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

-- Re-derive the threads' shares and add the difference to the counts; returns how many shares moved.
CREATE FUNCTION plmail_refresh_label_counts(thread_ids bigint[]) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    moved integer;
BEGIN
    WITH fresh AS (
        SELECT * FROM plmail_label_count_fresh(thread_ids)
    ), old AS (
        SELECT * FROM label_count_share s WHERE s.thread_id = ANY(thread_ids)
    ), delta AS (
        SELECT coalesce(f.thread_id, o.thread_id) AS thread_id, coalesce(f.label_id, o.label_id) AS label_id,
               coalesce(f.account_id, o.account_id) AS account_id, coalesce(f.category, o.category) AS category,
               coalesce(f.binned, o.binned) AS binned,
               coalesce(f.threads, 0) - coalesce(o.threads, 0) AS threads,
               coalesce(f.unread_threads, 0) - coalesce(o.unread_threads, 0) AS unread_threads,
               coalesce(f.emails, 0) - coalesce(o.emails, 0) AS emails,
               coalesce(f.unread_emails, 0) - coalesce(o.unread_emails, 0) AS unread_emails,
               coalesce(f.email_threads, 0) - coalesce(o.email_threads, 0) AS email_threads,
               coalesce(f.unread_email_threads, 0) - coalesce(o.unread_email_threads, 0) AS unread_email_threads
          FROM fresh f FULL JOIN old o
            ON o.thread_id = f.thread_id AND o.label_id = f.label_id AND o.account_id = f.account_id
           AND o.category = f.category AND o.binned = f.binned
    ), changed AS (
        SELECT * FROM delta d
         WHERE (d.threads, d.unread_threads, d.emails, d.unread_emails, d.email_threads, d.unread_email_threads)
               <> (0, 0, 0, 0, 0, 0)
    ), shared AS (
        -- Both upserts lock their rows in key order, so two statements never wait on each other crosswise.
        INSERT INTO label_count_share AS s
        SELECT * FROM changed ORDER BY thread_id, label_id, account_id, category, binned
        ON CONFLICT (thread_id, label_id, account_id, category, binned) DO UPDATE
           SET threads = s.threads + EXCLUDED.threads, unread_threads = s.unread_threads + EXCLUDED.unread_threads,
               emails = s.emails + EXCLUDED.emails, unread_emails = s.unread_emails + EXCLUDED.unread_emails,
               email_threads = s.email_threads + EXCLUDED.email_threads,
               unread_email_threads = s.unread_email_threads + EXCLUDED.unread_email_threads
    ), counted AS (
        INSERT INTO label_count AS c (label_id, account_id, category, binned, threads, unread_threads, emails,
                                      unread_emails, email_threads, unread_email_threads)
        SELECT d.label_id, d.account_id, d.category, d.binned, sum(d.threads), sum(d.unread_threads),
               sum(d.emails), sum(d.unread_emails), sum(d.email_threads), sum(d.unread_email_threads)
          FROM changed d
         WHERE EXISTS (SELECT 1 FROM label l WHERE l.id = d.label_id)
           AND EXISTS (SELECT 1 FROM account a WHERE a.id = d.account_id)
         GROUP BY d.label_id, d.account_id, d.category, d.binned
         ORDER BY d.label_id, d.account_id, d.category, d.binned
        ON CONFLICT (label_id, account_id, category, binned) DO UPDATE
           SET threads = c.threads + EXCLUDED.threads, unread_threads = c.unread_threads + EXCLUDED.unread_threads,
               emails = c.emails + EXCLUDED.emails, unread_emails = c.unread_emails + EXCLUDED.unread_emails,
               email_threads = c.email_threads + EXCLUDED.email_threads,
               unread_email_threads = c.unread_email_threads + EXCLUDED.unread_email_threads
    )
    SELECT count(*) INTO moved FROM changed;
    IF moved > 0 THEN
        DELETE FROM label_count_share s
         WHERE s.thread_id = ANY(thread_ids) AND s.threads = 0 AND s.emails = 0 AND s.unread_threads = 0
           AND s.unread_emails = 0 AND s.email_threads = 0 AND s.unread_email_threads = 0;
    END IF;
    RETURN moved;
END $$;

-- The children's triggers refresh only threads that still exist: a thread that went away (alone or with its
-- account) is refreshed once, by message_thread's own delete trigger, not once per cascaded row.
CREATE FUNCTION plmail_thread_label_counted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(DISTINCT c.thread_id) INTO ids FROM changed_new c;
    ELSE
        SELECT array_agg(DISTINCT c.thread_id) INTO ids
          FROM changed_old c JOIN message_thread t ON t.id = c.thread_id;
    END IF;
    IF ids IS NOT NULL THEN
        PERFORM plmail_refresh_label_counts(ids);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER thread_label_counted_insert AFTER INSERT ON thread_label
    REFERENCING NEW TABLE AS changed_new FOR EACH STATEMENT EXECUTE FUNCTION plmail_thread_label_counted();
CREATE TRIGGER thread_label_counted_delete AFTER DELETE ON thread_label
    REFERENCING OLD TABLE AS changed_old FOR EACH STATEMENT EXECUTE FUNCTION plmail_thread_label_counted();

CREATE FUNCTION plmail_message_label_counted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(DISTINCT m.thread_id) INTO ids
          FROM changed_new c JOIN message m ON m.id = c.message_id WHERE m.thread_id IS NOT NULL;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(DISTINCT m.thread_id) INTO ids
          FROM changed_old c JOIN message m ON m.id = c.message_id WHERE m.thread_id IS NOT NULL;
    ELSE
        SELECT array_agg(DISTINCT m.thread_id) INTO ids
          FROM (SELECT message_id FROM changed_old UNION SELECT message_id FROM changed_new) c
          JOIN message m ON m.id = c.message_id WHERE m.thread_id IS NOT NULL;
    END IF;
    IF ids IS NOT NULL THEN
        PERFORM plmail_refresh_label_counts(ids);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER message_label_counted_insert AFTER INSERT ON message_label
    REFERENCING NEW TABLE AS changed_new FOR EACH STATEMENT EXECUTE FUNCTION plmail_message_label_counted();
CREATE TRIGGER message_label_counted_delete AFTER DELETE ON message_label
    REFERENCING OLD TABLE AS changed_old FOR EACH STATEMENT EXECUTE FUNCTION plmail_message_label_counted();
CREATE TRIGGER message_label_counted_update AFTER UPDATE ON message_label
    REFERENCING OLD TABLE AS changed_old NEW TABLE AS changed_new
    FOR EACH STATEMENT EXECUTE FUNCTION plmail_message_label_counted();

-- A new message carries no label yet, so inserts move nothing; an update moves counts only when the message
-- changes thread, read state or draft state.
CREATE FUNCTION plmail_message_counted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
BEGIN
    IF TG_OP = 'DELETE' THEN
        SELECT array_agg(DISTINCT t.id) INTO ids
          FROM removed_old r JOIN message_thread t ON t.id = r.thread_id;
    ELSE
        SELECT array_agg(DISTINCT t.id) INTO ids
          FROM changed_old o JOIN changed_new n ON n.id = o.id
         CROSS JOIN LATERAL (VALUES (o.thread_id), (n.thread_id)) AS x(thread_id)
          JOIN message_thread t ON t.id = x.thread_id
         WHERE o.thread_id IS DISTINCT FROM n.thread_id
            OR (o.seen_at IS NULL) <> (n.seen_at IS NULL)
            OR (o.flags ? '\Draft' OR o.flags ? '$draft') <> (n.flags ? '\Draft' OR n.flags ? '$draft');
    END IF;
    IF ids IS NOT NULL THEN
        PERFORM plmail_refresh_label_counts(ids);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER message_counted_update AFTER UPDATE ON message
    REFERENCING OLD TABLE AS changed_old NEW TABLE AS changed_new
    FOR EACH STATEMENT EXECUTE FUNCTION plmail_message_counted();
CREATE TRIGGER message_counted_delete AFTER DELETE ON message
    REFERENCING OLD TABLE AS removed_old FOR EACH STATEMENT EXECUTE FUNCTION plmail_message_counted();

CREATE FUNCTION plmail_thread_counted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
BEGIN
    IF TG_OP = 'DELETE' THEN
        SELECT array_agg(r.id) INTO ids FROM removed_old r;
    ELSE
        SELECT array_agg(n.id) INTO ids
          FROM changed_old o JOIN changed_new n ON n.id = o.id
         WHERE (o.unread_count > 0) <> (n.unread_count > 0) OR o.binned <> n.binned
            OR o.category IS DISTINCT FROM n.category OR o.account_id <> n.account_id;
    END IF;
    IF ids IS NOT NULL THEN
        PERFORM plmail_refresh_label_counts(ids);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER message_thread_counted_update AFTER UPDATE ON message_thread
    REFERENCING OLD TABLE AS changed_old NEW TABLE AS changed_new
    FOR EACH STATEMENT EXECUTE FUNCTION plmail_thread_counted();
CREATE TRIGGER message_thread_counted_delete AFTER DELETE ON message_thread
    REFERENCING OLD TABLE AS removed_old FOR EACH STATEMENT EXECUTE FUNCTION plmail_thread_counted();

-- The mail already stored gets its counts now.
INSERT INTO label_count_share
SELECT * FROM plmail_label_count_fresh(ARRAY(SELECT id FROM message_thread));
INSERT INTO label_count (label_id, account_id, category, binned, threads, unread_threads, emails, unread_emails,
                         email_threads, unread_email_threads)
SELECT label_id, account_id, category, binned, sum(threads), sum(unread_threads), sum(emails), sum(unread_emails),
       sum(email_threads), sum(unread_email_threads)
  FROM label_count_share GROUP BY label_id, account_id, category, binned;
"""

BACKWARDS_SQL = r"""
DROP TRIGGER IF EXISTS message_thread_counted_delete ON message_thread;
DROP TRIGGER IF EXISTS message_thread_counted_update ON message_thread;
DROP FUNCTION IF EXISTS plmail_thread_counted();
DROP TRIGGER IF EXISTS message_counted_delete ON message;
DROP TRIGGER IF EXISTS message_counted_update ON message;
DROP FUNCTION IF EXISTS plmail_message_counted();
DROP TRIGGER IF EXISTS message_label_counted_update ON message_label;
DROP TRIGGER IF EXISTS message_label_counted_delete ON message_label;
DROP TRIGGER IF EXISTS message_label_counted_insert ON message_label;
DROP FUNCTION IF EXISTS plmail_message_label_counted();
DROP TRIGGER IF EXISTS thread_label_counted_delete ON thread_label;
DROP TRIGGER IF EXISTS thread_label_counted_insert ON thread_label;
DROP FUNCTION IF EXISTS plmail_thread_label_counted();
DROP FUNCTION IF EXISTS plmail_refresh_label_counts(bigint[]);
DROP FUNCTION IF EXISTS plmail_label_count_fresh(bigint[]);
DROP TABLE IF EXISTS label_count_share;
DROP TABLE IF EXISTS label_count;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
