"""The first page of a PDF attachment drawn as its card's preview (issue 32), drawn once and kept.

A row per PDF blob (content-addressed: the same PDF in many messages is drawn once); `image` is the PNG, or NULL
when the file could not be drawn (broken, encrypted, too large, too slow), so a hostile file is tried only once.
Rows go with their blob (ON DELETE CASCADE), so the blob sweep needs to know nothing of them.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-07T13:30:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "PDF attachment previews"

FORWARDS_SQL = r"""
CREATE TABLE IF NOT EXISTS attachment_preview (
    digest varchar(64) PRIMARY KEY REFERENCES blob (digest) ON DELETE CASCADE,
    image bytea,
    created_at timestamptz NOT NULL DEFAULT now()
);
"""

BACKWARDS_SQL = r"""
DROP TABLE IF EXISTS attachment_preview;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
