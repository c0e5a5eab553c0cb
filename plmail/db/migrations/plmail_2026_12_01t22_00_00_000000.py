"""Indexes that keep the sparse label view and the search operators' rare matches from reading all mail.

Run at 1,000,000 messages, building them takes about a minute (the trigram ones).

A label view with few threads in one account is gathered from the kept counts' shares by (label, account,
tab). `to:`/`cc:`/`bcc:`, `subject:`, `list:` and `filename:` match a substring, which only a trigram
index finds without reading every message (pg_trgm ships with PostgreSQL and is a trusted extension). The
recipients share one index over all three lists: the exact list is checked on the few rows it yields.
`body:` keeps its scan: a trigram index over every body would cost the import more than the operator saves.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-01T22:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "sparse view and recipient search indexes"

FORWARDS_SQL = r"""
CREATE INDEX IF NOT EXISTS idx_label_count_share_view ON label_count_share (label_id, account_id, category)
    WHERE threads > 0;

-- is:unread and is:starred, for a mailbox where few threads are: the newest such threads, without a walk.
CREATE INDEX IF NOT EXISTS idx_message_thread_unread ON message_thread (last_message_at DESC, id DESC)
    WHERE unread_count > 0 AND NOT binned;
CREATE INDEX IF NOT EXISTS idx_message_thread_starred ON message_thread (last_message_at DESC, id DESC)
    WHERE starred_at IS NOT NULL AND NOT binned;

CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE OR REPLACE FUNCTION plmail_recipients_text(to_addresses jsonb, cc_addresses jsonb, bcc_addresses jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(to_addresses::text, '') || ' ' || coalesce(cc_addresses::text, '') || ' '
           || coalesce(bcc_addresses::text, '')
$$;
CREATE OR REPLACE FUNCTION plmail_list_id(headers jsonb) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT string_agg(h.value, E'\n') FROM jsonb_each_text(headers) h WHERE lower(h.key) = 'list-id'
$$;
CREATE INDEX IF NOT EXISTS idx_message_recipients_trgm ON message
    USING gin (plmail_recipients_text(to_addresses, cc_addresses, bcc_addresses) gin_trgm_ops);
CREATE INDEX IF NOT EXISTS idx_message_subject_trgm ON message USING gin (subject gin_trgm_ops);
-- Not partial: the planner's statistics for the expression come from this index, and without them it guesses
-- that one message in ten is on any list, and walks every thread for a list no message is on.
CREATE INDEX IF NOT EXISTS idx_message_list_id_trgm ON message USING gin (plmail_list_id(headers) gin_trgm_ops);
CREATE INDEX IF NOT EXISTS idx_message_part_filename_trgm ON message_part USING gin (filename gin_trgm_ops)
    WHERE filename IS NOT NULL;
"""

BACKWARDS_SQL = r"""
DROP INDEX IF EXISTS idx_message_part_filename_trgm;
DROP INDEX IF EXISTS idx_message_list_id_trgm;
DROP INDEX IF EXISTS idx_message_subject_trgm;
DROP INDEX IF EXISTS idx_message_recipients_trgm;
DROP FUNCTION IF EXISTS plmail_list_id(jsonb);
DROP FUNCTION IF EXISTS plmail_recipients_text(jsonb, jsonb, jsonb);
DROP INDEX IF EXISTS idx_message_thread_starred;
DROP INDEX IF EXISTS idx_message_thread_unread;
DROP INDEX IF EXISTS idx_label_count_share_view;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
