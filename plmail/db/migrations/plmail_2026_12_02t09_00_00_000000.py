"""Address terms: every word of a message's sender and recipients, in arrival order, per user.

The search box's `from:`, `to:`, `cc:` and `bcc:` match whole words of a name or address (as `from:` always did
through the search vector's sender weight). Neither the search vector's GIN index nor the recipients' trigram
index yields its matches newest first, so a frequent sender's search sorted every match: 28 ms at 1,000,000
messages against 1.4 ms at 100,000, `to:` 123 ms. A btree on (user, field, term, arrival) walks one term's
matches newest first and stops after a page, whatever the mailbox's size.

The terms are the lexemes the search vector keeps for the sender (plmail_address_terms: name, address, local part
and its pieces, every parent domain; 'simple' lowercases them in the database's locale), field 'f', 't', 'c' or
'b'. A statement trigger with a transition table fills them in the insert's own transaction, one set-based INSERT
per INSERT statement: every path that stores a message (ingest, drafts, the SQL fills of tests and benchmarks)
gets its terms without knowing about them, and a faster import (COPY, larger batches) keeps them for free. A
statement trigger on delete takes a message's rows with it (a message destroyed, an account removed: the cascade's
deletes fire it too), and a changed address re-derives them.

What it costs: about ten rows a message in the benchmarks' fill (one recipient; more with more), the table and
its two indexes half the message table's size again (1.2 GB at 1,000,000 messages), and 10-15 % of
benchmarks/ingest.py's throughput in rounds on the loaded 2-core machine (SpamAssassin corpus 272 -> 240 msg/s,
10,000 generated 256 -> 228 msg/s, two interleaved pairs).

Existing mail is backfilled (again: safe to run twice) in batches of 20,000 messages before the indexes are
built (cheaper than keeping them up during the backfill); at 1,000,000 messages `plmail serve` was up after 99 s,
at 100,000 after 28 s.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-02T09:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "address terms for from:/to:/cc:/bcc: in arrival order"

FORWARDS_SQL = r"""
CREATE OR REPLACE FUNCTION plmail_address_list_text(addresses jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT string_agg(coalesce(e ->> 'name', '') || ' ' || coalesce(e ->> 'address', ''), ' ')
      FROM jsonb_array_elements(CASE jsonb_typeof(addresses) WHEN 'array' THEN addresses ELSE '[]'::jsonb END) e
     WHERE jsonb_typeof(e) = 'object'
$$;

-- The same lexemes as the search vector's sender weight, so from: means what it meant before.
CREATE OR REPLACE FUNCTION plmail_address_words(value text) RETURNS SETOF text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT v.lexeme FROM unnest(to_tsvector('simple', plmail_address_terms(coalesce(value, '')))) v
$$;

CREATE OR REPLACE FUNCTION plmail_message_address_terms(from_name text, from_address text, to_addresses jsonb,
                                                        cc_addresses jsonb, bcc_addresses jsonb)
RETURNS TABLE (field "char", term text) LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT 'f'::"char", w FROM plmail_address_words(coalesce(from_name, '') || ' ' || coalesce(from_address, '')) w
    UNION ALL SELECT 't'::"char", w FROM plmail_address_words(plmail_address_list_text(to_addresses)) w
     WHERE to_addresses <> '[]'
    -- Most mail has no Cc and no Bcc: an empty list costs no parse.
    UNION ALL SELECT 'c'::"char", w FROM plmail_address_words(plmail_address_list_text(cc_addresses)) w
     WHERE cc_addresses <> '[]'
    UNION ALL SELECT 'b'::"char", w FROM plmail_address_words(plmail_address_list_text(bcc_addresses)) w
     WHERE bcc_addresses <> '[]'
$$;

-- What a search word must find: the lexemes the same parser makes of it (a word may give several).
CREATE OR REPLACE FUNCTION plmail_query_address_terms(words text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(array_agg(DISTINCT v.lexeme), '{}')
      FROM unnest(words) w, unnest(to_tsvector('simple', w)) v
$$;

-- No foreign key: its check would run once per term row on the import's hot path; the delete trigger below
-- removes a deleted message's terms in the same statement's transaction, one DELETE per statement. The terms
-- compare bytewise (COLLATE "C"): only equality is ever asked of them.
CREATE TABLE IF NOT EXISTS message_address_term (
    message_id bigint NOT NULL,
    user_id integer NOT NULL,
    field "char" NOT NULL,
    term text COLLATE "C" NOT NULL,
    arrived_at timestamptz NOT NULL
);

-- Rebuilt from the messages, so running this twice leaves the same rows.
TRUNCATE message_address_term;
DO $$
DECLARE
    low bigint;
    high bigint;
BEGIN
    SELECT min(id), max(id) INTO low, high FROM message;
    WHILE low <= high LOOP
        INSERT INTO message_address_term (message_id, user_id, field, term, arrived_at)
        SELECT n.id, a.user_id, x.field, x.term, coalesce(n.received_at, n.sent_at, n.created_at)
          FROM message n JOIN account a ON a.id = n.account_id,
               plmail_message_address_terms(n.from_name, n.from_address, n.to_addresses, n.cc_addresses,
                                            n.bcc_addresses) x
         WHERE n.id >= low AND n.id < low + 20000;
        low := low + 20000;
    END LOOP;
END $$;

-- The walk: one term's messages of one user, newest first (the order the views sort by).
CREATE INDEX IF NOT EXISTS idx_message_address_term_walk
    ON message_address_term (user_id, field, term, arrived_at DESC, message_id DESC);
-- The other words of a search, checked per message, and the cascade from a deleted message.
CREATE INDEX IF NOT EXISTS idx_message_address_term_message ON message_address_term (message_id);

CREATE OR REPLACE FUNCTION plmail_message_terms_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO message_address_term (message_id, user_id, field, term, arrived_at)
    SELECT n.id, a.user_id, x.field, x.term, coalesce(n.received_at, n.sent_at, n.created_at)
      FROM added n JOIN account a ON a.id = n.account_id,
           plmail_message_address_terms(n.from_name, n.from_address, n.to_addresses, n.cc_addresses,
                                        n.bcc_addresses) x;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION plmail_message_terms_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM message_address_term WHERE message_id = NEW.id;
    INSERT INTO message_address_term (message_id, user_id, field, term, arrived_at)
    SELECT NEW.id, a.user_id, x.field, x.term, coalesce(NEW.received_at, NEW.sent_at, NEW.created_at)
      FROM account a,
           plmail_message_address_terms(NEW.from_name, NEW.from_address, NEW.to_addresses, NEW.cc_addresses,
                                        NEW.bcc_addresses) x
     WHERE a.id = NEW.account_id;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION plmail_message_terms_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM message_address_term x USING removed r WHERE x.message_id = r.id;
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS message_address_terms_removed ON message;
CREATE TRIGGER message_address_terms_removed AFTER DELETE ON message REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION plmail_message_terms_removed();
DROP TRIGGER IF EXISTS message_address_terms_added ON message;
CREATE TRIGGER message_address_terms_added AFTER INSERT ON message REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION plmail_message_terms_added();
-- Per row, and only when an address or the arrival changed: flags and reads never pay for it.
DROP TRIGGER IF EXISTS message_address_terms_changed ON message;
CREATE TRIGGER message_address_terms_changed
    AFTER UPDATE OF from_name, from_address, to_addresses, cc_addresses, bcc_addresses, received_at, sent_at,
                    account_id ON message
    FOR EACH ROW
    WHEN (OLD.from_name IS DISTINCT FROM NEW.from_name OR OLD.from_address IS DISTINCT FROM NEW.from_address
          OR OLD.to_addresses IS DISTINCT FROM NEW.to_addresses OR OLD.cc_addresses IS DISTINCT FROM NEW.cc_addresses
          OR OLD.bcc_addresses IS DISTINCT FROM NEW.bcc_addresses OR OLD.received_at IS DISTINCT FROM NEW.received_at
          OR OLD.sent_at IS DISTINCT FROM NEW.sent_at OR OLD.account_id IS DISTINCT FROM NEW.account_id)
    EXECUTE FUNCTION plmail_message_terms_changed();

ANALYZE message_address_term;
"""

BACKWARDS_SQL = r"""
DROP TRIGGER IF EXISTS message_address_terms_changed ON message;
DROP TRIGGER IF EXISTS message_address_terms_removed ON message;
DROP TRIGGER IF EXISTS message_address_terms_added ON message;
DROP FUNCTION IF EXISTS plmail_message_terms_removed();
DROP FUNCTION IF EXISTS plmail_message_terms_changed();
DROP FUNCTION IF EXISTS plmail_message_terms_added();
DROP TABLE IF EXISTS message_address_term;
DROP FUNCTION IF EXISTS plmail_query_address_terms(text[]);
DROP FUNCTION IF EXISTS plmail_message_address_terms(text, text, jsonb, jsonb, jsonb);
DROP FUNCTION IF EXISTS plmail_address_words(text);
DROP FUNCTION IF EXISTS plmail_address_list_text(jsonb);
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
