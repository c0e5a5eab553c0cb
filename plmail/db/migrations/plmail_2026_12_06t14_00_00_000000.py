"""Search finds every word a message has, stop words too (issue 35): the search vector keeps the subject and body
with the 'simple' configuration beside the English one.

The English configuration stems ("invoices" finds "invoice") but drops its stop words, so "here", "the who" or
"to be or not to be" found nothing although the words are in the mail; the queries already OR an English and a
'simple' tsquery (filter_sql.py, views.py), and now the vector has the 'simple' lexemes for them to meet. They get
the lowest weight (D), so a ranked search still puts the stemmed subject and body matches first.

The generated column is dropped and added again with the longer expression, which rewrites the message table
once and rebuilds the GIN index: a migration that takes as long as the first build of the column did (the
backfill of 2026-12-02T09:00 is of that order). Backwards restores the English-only column. Safe to run twice
(IF EXISTS, and the column is rebuilt from the row's own text).
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-06T14:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "search vector with the simple configuration beside the English one"

_REBUILD = r"""
DROP INDEX IF EXISTS idx_message_search_vector;
ALTER TABLE message DROP COLUMN IF EXISTS search_vector;
ALTER TABLE message ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', coalesce(subject, '')), 'A')
    || setweight(to_tsvector('simple', plmail_address_terms(coalesce(from_name, '') || ' ' || coalesce(from_address, ''))), 'B')
    || setweight(to_tsvector('english', left(coalesce(body_text, ''), 200000)), 'C')
    {simple}
) STORED;
CREATE INDEX idx_message_search_vector ON message USING gin (search_vector);
"""

FORWARDS_SQL = _REBUILD.replace("{simple}", """|| setweight(to_tsvector('simple', coalesce(subject, '')), 'D')
    || setweight(to_tsvector('simple', left(coalesce(body_text, ''), 200000)), 'D')""")

BACKWARDS_SQL = _REBUILD.replace("{simple}", "")

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
