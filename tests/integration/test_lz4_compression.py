"""Migration 2026-12-07T13:40 (issue 36, the first import): message bodies, headers, the search vector, the MIME
tree and stored originals are compressed with LZ4, which costs the database less CPU per written row than pglz."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from plmail.db.database import Database
from plmail.db.engine import close_engine, open_engine
from plmail.db.migrations import plmail_2026_12_07t13_40_00_000000 as lz4_migration

_COMPRESSED = [("message", "body_text"), ("message", "body_html"), ("message", "body_html_safe"),
               ("message", "headers"), ("message_search", "search_vector"), ("message", "mime_tree"), ("blob", "data")]


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    engine = await open_engine(database_url, max_size=2)
    try:
        yield Database(engine)
    finally:
        await close_engine()


async def _compression(db: Database) -> dict[tuple[str, str], str]:
    rows = await db.fetch(
        """SELECT c.relname, a.attname, a.attcompression::text AS method FROM pg_attribute a
             JOIN pg_class c ON c.oid = a.attrelid WHERE c.relname = ANY($1::text[]) AND a.attname = ANY($2::text[])""",
        sorted({t for t, _ in _COMPRESSED}), sorted({c for _, c in _COMPRESSED}))
    return {(r["relname"], r["attname"]): r["method"] for r in rows if (r["relname"], r["attname"]) in _COMPRESSED}


async def test_bodies_and_originals_are_compressed_with_lz4_and_backwards_restores_pglz(db: Database) -> None:
    """'l' and 'p' are PostgreSQL's letters for LZ4 and pglz in pg_attribute."""
    async with db.connection() as conn:
        try:
            async with conn.transaction():
                await conn.execute("SET LOCAL default_toast_compression = lz4")
        except Exception:  # a server built without LZ4 keeps pglz, which the migration allows for
            pytest.skip("this PostgreSQL has no LZ4")
    assert await _compression(db) == {column: "l" for column in _COMPRESSED}
    async with db.connection() as conn:
        await conn.execute(lz4_migration.BACKWARDS_SQL)
        assert await _compression(db) == {column: "p" for column in _COMPRESSED}
        await conn.execute(lz4_migration.FORWARDS_SQL)
        await conn.execute(lz4_migration.FORWARDS_SQL)  # twice is the same as once
    assert await _compression(db) == {column: "l" for column in _COMPRESSED}
    # A value written now is stored compressed with LZ4 and reads back whole.
    body = ("invoice meeting budget " * 400).encode()
    await db.execute("INSERT INTO blob (digest, data, created_at) VALUES ('lz4-check', $1, now())", body)
    assert await db.fetchval("SELECT pg_column_compression(data) FROM blob WHERE digest = 'lz4-check'") == "lz4"
    assert await db.fetchval("SELECT data FROM blob WHERE digest = 'lz4-check'") == body
