"""Message bodies compressed with lz4 where the server has it.

The default (pglz) took twice as long to compress a body of a few KB; a first import compresses every
body it stores, in the database process that is already the busiest part of it. Rows keep whatever
compression they were written with. A server built without lz4 keeps pglz.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-11-30T00:50:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "lz4 for message bodies"

FORWARDS_SQL = r"""
DO $$
BEGIN
    ALTER TABLE message ALTER COLUMN body_text SET COMPRESSION lz4,
                        ALTER COLUMN body_html SET COMPRESSION lz4,
                        ALTER COLUMN body_html_safe SET COMPRESSION lz4,
                        ALTER COLUMN headers SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'this PostgreSQL has no lz4; message bodies stay with pglz';
END $$;
"""

BACKWARDS_SQL = r"""
ALTER TABLE message ALTER COLUMN body_text SET COMPRESSION default,
                    ALTER COLUMN body_html SET COMPRESSION default,
                    ALTER COLUMN body_html_safe SET COMPRESSION default,
                    ALTER COLUMN headers SET COMPRESSION default;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
