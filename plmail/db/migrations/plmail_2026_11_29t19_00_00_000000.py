"""The trigger-kept `binned` flag, and indexes for rules, provider changes, snooze and label views.

`binned` is maintained by PostgreSQL, not Python: the writes that can change it are scattered (labels
through the ORM, raw SQL that rebuilds threads, ON DELETE CASCADE, a message moving threads, a reply
arriving in a binned thread), and a flag set by application code is right only on the paths someone
remembered. Every refresh derives the answer from scratch, so statement order inside a transaction
does not matter.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-11-29T19:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "binned triggers and operation indexes"

FORWARDS_SQL = r"""
CREATE FUNCTION plmail_refresh_thread_binned(thread_ids bigint[]) RETURNS void
LANGUAGE sql AS $$
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
$$;

-- message_label: once per statement, and only for threads whose Trash rows changed; filing, reading
-- and labelling cost nothing.
CREATE FUNCTION plmail_message_label_binned() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(DISTINCT m.thread_id) INTO ids
          FROM changed_new c JOIN label l ON l.id = c.label_id AND l.role = 'trash'
          JOIN message m ON m.id = c.message_id WHERE m.thread_id IS NOT NULL;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(DISTINCT m.thread_id) INTO ids
          FROM changed_old c JOIN label l ON l.id = c.label_id AND l.role = 'trash'
          JOIN message m ON m.id = c.message_id WHERE m.thread_id IS NOT NULL;
    ELSE
        SELECT array_agg(DISTINCT m.thread_id) INTO ids
          FROM (SELECT * FROM changed_old UNION ALL SELECT * FROM changed_new) c
          JOIN label l ON l.id = c.label_id AND l.role = 'trash'
          JOIN message m ON m.id = c.message_id WHERE m.thread_id IS NOT NULL;
    END IF;
    IF ids IS NOT NULL THEN
        PERFORM plmail_refresh_thread_binned(ids);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER message_label_binned_insert AFTER INSERT ON message_label
    REFERENCING NEW TABLE AS changed_new FOR EACH STATEMENT EXECUTE FUNCTION plmail_message_label_binned();
CREATE TRIGGER message_label_binned_delete AFTER DELETE ON message_label
    REFERENCING OLD TABLE AS changed_old FOR EACH STATEMENT EXECUTE FUNCTION plmail_message_label_binned();
CREATE TRIGGER message_label_binned_update AFTER UPDATE ON message_label
    REFERENCING OLD TABLE AS changed_old NEW TABLE AS changed_new
    FOR EACH STATEMENT EXECUTE FUNCTION plmail_message_label_binned();

CREATE FUNCTION plmail_thread_label_binned() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(DISTINCT c.thread_id) INTO ids
          FROM changed_new c JOIN label l ON l.id = c.label_id AND l.role = 'trash';
    ELSE
        SELECT array_agg(DISTINCT c.thread_id) INTO ids
          FROM changed_old c JOIN label l ON l.id = c.label_id AND l.role = 'trash';
    END IF;
    IF ids IS NOT NULL THEN
        PERFORM plmail_refresh_thread_binned(ids);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER thread_label_binned_insert AFTER INSERT ON thread_label
    REFERENCING NEW TABLE AS changed_new FOR EACH STATEMENT EXECUTE FUNCTION plmail_thread_label_binned();
CREATE TRIGGER thread_label_binned_delete AFTER DELETE ON thread_label
    REFERENCING OLD TABLE AS changed_old FOR EACH STATEMENT EXECUTE FUNCTION plmail_thread_label_binned();

-- message: per row. An insert can only take a binned thread out of the bin, so only then; a delete or a
-- move re-derives the thread the message left (and, for a move, the one it joined).
CREATE FUNCTION plmail_message_binned() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF EXISTS (SELECT 1 FROM message_thread WHERE id = NEW.thread_id AND binned) THEN
            PERFORM plmail_refresh_thread_binned(ARRAY[NEW.thread_id]);
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM plmail_refresh_thread_binned(ARRAY[OLD.thread_id]);
    ELSE
        PERFORM plmail_refresh_thread_binned(ARRAY[OLD.thread_id, NEW.thread_id]);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER message_binned_insert AFTER INSERT ON message
    FOR EACH ROW WHEN (NEW.thread_id IS NOT NULL) EXECUTE FUNCTION plmail_message_binned();
CREATE TRIGGER message_binned_delete AFTER DELETE ON message
    FOR EACH ROW WHEN (OLD.thread_id IS NOT NULL) EXECUTE FUNCTION plmail_message_binned();
CREATE TRIGGER message_binned_move AFTER UPDATE OF thread_id ON message
    FOR EACH ROW WHEN (OLD.thread_id IS DISTINCT FROM NEW.thread_id) EXECUTE FUNCTION plmail_message_binned();

CREATE INDEX idx_provider_change_pending ON provider_change (account_id, id) WHERE done_at IS NULL;
CREATE INDEX idx_mail_rule_user_order ON mail_rule (user_id, sort_order, id);
CREATE INDEX idx_message_thread_snoozed ON message_thread (snoozed_until) WHERE snoozed_until IS NOT NULL;
CREATE INDEX idx_message_thread_listing ON message_thread (last_message_at DESC, id DESC) WHERE NOT binned;
"""

BACKWARDS_SQL = r"""
DROP INDEX IF EXISTS idx_message_thread_listing;
DROP INDEX IF EXISTS idx_message_thread_snoozed;
DROP INDEX IF EXISTS idx_mail_rule_user_order;
DROP INDEX IF EXISTS idx_provider_change_pending;
DROP TRIGGER IF EXISTS message_binned_move ON message;
DROP TRIGGER IF EXISTS message_binned_delete ON message;
DROP TRIGGER IF EXISTS message_binned_insert ON message;
DROP FUNCTION IF EXISTS plmail_message_binned();
DROP TRIGGER IF EXISTS thread_label_binned_delete ON thread_label;
DROP TRIGGER IF EXISTS thread_label_binned_insert ON thread_label;
DROP FUNCTION IF EXISTS plmail_thread_label_binned();
DROP TRIGGER IF EXISTS message_label_binned_update ON message_label;
DROP TRIGGER IF EXISTS message_label_binned_delete ON message_label;
DROP TRIGGER IF EXISTS message_label_binned_insert ON message_label;
DROP FUNCTION IF EXISTS plmail_message_label_binned();
DROP FUNCTION IF EXISTS plmail_refresh_thread_binned(bigint[]);
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
