"""Message bodies, headers, the search vector, the MIME tree and stored originals compressed with LZ4 instead of
PostgreSQL's own pglz (issue 36, the first import): a row of a first import is larger than PostgreSQL keeps
uncompressed, so each is compressed as it is written; measured on the import benchmark's messages, pglz cost about
0.1 ms of the database's CPU per message more than LZ4 (a tenth of a row's insert without its indexes), and LZ4
reads back faster too. Only values written from now on use it; older ones stay as they are and read as before.

A server built without LZ4 says so (feature_not_supported) and keeps pglz. Changing a column's compression changes
no stored data, so it is instant, safe to run twice, and backwards puts pglz back for new values.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-07T13:40:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "LZ4 compression for message bodies, search vector and stored originals"

_SET = r"""
DO $$
DECLARE
    col record;
BEGIN
    -- Each column that exists: the search vector moved from message to message_search (migrations 13:45, 13:50).
    FOR col IN SELECT table_name, column_name FROM information_schema.columns
                WHERE table_schema = current_schema() AND (table_name, column_name) IN (
                    ('message', 'body_text'), ('message', 'body_html'), ('message', 'body_html_safe'),
                    ('message', 'headers'), ('message', 'search_vector'), ('message', 'mime_tree'),
                    ('message_search', 'search_vector'), ('blob', 'data'))
    LOOP
        EXECUTE format('ALTER TABLE %I ALTER COLUMN %I SET COMPRESSION {method}', col.table_name, col.column_name);
    END LOOP;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'this PostgreSQL has no LZ4; message columns keep pglz';
END
$$;
"""

FORWARDS_SQL = _SET.replace("{method}", "lz4")

BACKWARDS_SQL = _SET.replace("{method}", "pglz")

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
