"""The message row without its generated search vector (issue 36): migration 13:45 moved it to `message_search`.

Dropping a column rewrites nothing, so the exclusive lock is a moment's. Safe to run twice (IF EXISTS). Backwards
adds the generated column and its GIN index again, which rewrites the table once.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-07T13:50:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "the message row without its generated search vector"

FORWARDS_SQL = r"""
DROP INDEX IF EXISTS idx_message_search_vector;
ALTER TABLE message DROP COLUMN IF EXISTS search_vector;
"""

BACKWARDS_SQL = r"""
ALTER TABLE message ADD COLUMN IF NOT EXISTS search_vector tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', coalesce(subject, '')), 'A')
    || setweight(to_tsvector('simple', plmail_address_terms(coalesce(from_name, '') || ' ' || coalesce(from_address, ''))), 'B')
    || setweight(to_tsvector('english', left(coalesce(body_text, ''), 200000)), 'C')
    || setweight(to_tsvector('simple', coalesce(subject, '')), 'D')
    || setweight(to_tsvector('simple', left(coalesce(body_text, ''), 200000)), 'D')
) STORED;
CREATE INDEX IF NOT EXISTS idx_message_search_vector ON message USING gin (search_vector);
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
