"""Blob bytes compressed with lz4 where the server has it.

Raw messages are mostly text and shrink to about half; lz4 gives up quickly on bytes that do not
compress (images, archives), where pglz spends its time for nothing. A server without lz4 keeps pglz.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-11-30T02:20:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "lz4 for blobs"

FORWARDS_SQL = r"""
DO $$
BEGIN
    ALTER TABLE blob ALTER COLUMN data SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'this PostgreSQL has no lz4; blobs stay with pglz';
END $$;
"""

BACKWARDS_SQL = r"""
ALTER TABLE blob ALTER COLUMN data SET COMPRESSION default;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
