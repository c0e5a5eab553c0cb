"""Raw SQL the table classes cannot express: search, join tables, unique and expression indexes.

Kept apart from the generated migration because Piccolo runs raw steps before add_table in the
same migration, and because the autogenerator never sees (and so never drops) these objects.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-11-29T18:40:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "search vector, join tables, unique and expression indexes"

FORWARDS_SQL = r"""
-- Adds the local part and every parent domain of each address, so from:example.org matches
-- alice@mail.example.org although the parser keeps the whole host as one token.
CREATE FUNCTION plmail_address_terms(value text) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT AS $$
DECLARE
    address text;
    local_part text;
    labels text[];
    extra text := '';
    i int;
BEGIN
    FOR address IN
        SELECT m[1] FROM regexp_matches(lower(value), '([[:alnum:]._%+-]+@[[:alnum:].-]+[[:alnum:]])', 'g') AS m
    LOOP
        local_part := split_part(address, '@', 1);
        extra := extra || ' ' || local_part || ' ' || translate(local_part, '._+-', '    ');
        labels := string_to_array(split_part(address, '@', 2), '.');
        FOR i IN 1 .. coalesce(array_length(labels, 1), 0) - 1 LOOP
            extra := extra || ' ' || array_to_string(labels[i:], '.');
        END LOOP;
    END LOOP;
    RETURN value || extra;
END
$$;

ALTER TABLE message ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', coalesce(subject, '')), 'A')
    || setweight(to_tsvector('simple', plmail_address_terms(coalesce(from_name, '') || ' ' || coalesce(from_address, ''))), 'B')
    || setweight(to_tsvector('english', left(coalesce(body_text, ''), 200000)), 'C')
) STORED;
CREATE INDEX idx_message_search_vector ON message USING gin (search_vector);

-- Provider id first, so the same index serves plain id lookups; these are what really hold when
-- batches overlap across runs or retries.
CREATE UNIQUE INDEX uniq_message_gmail_id_account ON message (gmail_id, account_id);
CREATE UNIQUE INDEX uniq_message_graph_id_account ON message (graph_id, account_id);
CREATE UNIQUE INDEX uniq_message_mailbox_imap_uid ON message (mailbox_id, imap_uid);
CREATE INDEX idx_message_account_received ON message (account_id, received_at DESC);
CREATE INDEX idx_message_rfc_message_id ON message (rfc_message_id, account_id);
CREATE INDEX idx_message_content_hash ON message (content_hash, account_id) WHERE content_hash IS NOT NULL;
-- Lets "which stored mail already replies to this Message-ID" avoid scanning the whole mailbox.
CREATE INDEX idx_message_referenced_ids ON message USING gin ((in_reply_to || thread_references));

CREATE UNIQUE INDEX uniq_message_thread_provider_key_account ON message_thread (provider_thread_key, account_id);
CREATE INDEX idx_message_thread_account_last ON message_thread (account_id, last_message_at DESC);
CREATE INDEX idx_message_thread_account_subject ON message_thread (account_id, normalized_subject);

CREATE TABLE message_label (
    message_id bigint NOT NULL REFERENCES message (id) ON DELETE CASCADE,
    label_id integer NOT NULL REFERENCES label (id) ON DELETE CASCADE,
    PRIMARY KEY (message_id, label_id)
);
CREATE INDEX idx_message_label_label ON message_label (label_id, message_id);

CREATE TABLE thread_label (
    thread_id bigint NOT NULL REFERENCES message_thread (id) ON DELETE CASCADE,
    label_id integer NOT NULL REFERENCES label (id) ON DELETE CASCADE,
    PRIMARY KEY (thread_id, label_id)
);
CREATE INDEX idx_thread_label_label ON thread_label (label_id, thread_id);

CREATE UNIQUE INDEX uniq_label_user_role ON label (user_id, role) WHERE role IS NOT NULL;
CREATE UNIQUE INDEX uniq_label_user_parent_name ON label (user_id, coalesce(parent_id, 0), name);
CREATE UNIQUE INDEX uniq_label_binding_label_account ON label_binding (label_id, account_id);
CREATE UNIQUE INDEX uniq_contact_user_email ON contact (user_id, email);
CREATE INDEX idx_jmap_change_scan ON jmap_change_log (account_id, object_type, sequence);
CREATE INDEX idx_queue_probe_queue ON queue_probe (queue, requested_at DESC);
CREATE INDEX idx_ingest_skip_account ON ingest_skip (account_id, created_at DESC);
"""

BACKWARDS_SQL = r"""
DROP INDEX IF EXISTS idx_ingest_skip_account;
DROP INDEX IF EXISTS idx_queue_probe_queue;
DROP INDEX IF EXISTS idx_jmap_change_scan;
DROP INDEX IF EXISTS uniq_contact_user_email;
DROP INDEX IF EXISTS uniq_label_binding_label_account;
DROP INDEX IF EXISTS uniq_label_user_parent_name;
DROP INDEX IF EXISTS uniq_label_user_role;
DROP TABLE IF EXISTS thread_label;
DROP TABLE IF EXISTS message_label;
DROP INDEX IF EXISTS idx_message_thread_account_subject;
DROP INDEX IF EXISTS idx_message_thread_account_last;
DROP INDEX IF EXISTS uniq_message_thread_provider_key_account;
DROP INDEX IF EXISTS idx_message_referenced_ids;
DROP INDEX IF EXISTS idx_message_content_hash;
DROP INDEX IF EXISTS idx_message_rfc_message_id;
DROP INDEX IF EXISTS idx_message_account_received;
DROP INDEX IF EXISTS uniq_message_mailbox_imap_uid;
DROP INDEX IF EXISTS uniq_message_graph_id_account;
DROP INDEX IF EXISTS uniq_message_gmail_id_account;
DROP INDEX IF EXISTS idx_message_search_vector;
ALTER TABLE message DROP COLUMN IF EXISTS search_vector;
DROP FUNCTION IF EXISTS plmail_address_terms(text);
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
