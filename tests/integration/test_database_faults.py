"""A connection the database drops (a restart, a killed backend) goes back to the pool whatever the transaction
was doing: otherwise every restart shrinks the pool for good and closing it at shutdown waits forever."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from plmail.db.database import Database, database_unavailable
from plmail.db.engine import close_engine, open_engine
from tests.support.net import free_port


async def _kill(dsn: str, pid: int) -> None:
    admin = await asyncpg.connect(dsn)
    try:
        await admin.execute("SELECT pg_terminate_backend($1)", pid)
    finally:
        await admin.close()


async def test_transactions_on_dropped_connections_give_them_back(database_url: str) -> None:
    engine = await open_engine(database_url, max_size=2)
    db = Database(engine)
    try:
        for _ in range(3):  # more than the pool holds: a leak would block the next acquire
            with pytest.raises((asyncpg.PostgresError, asyncpg.InterfaceError, OSError)):  # noqa: PT012
                async with db.transaction():
                    await _kill(database_url, await db.fetchval("SELECT pg_backend_pid()"))
                    await db.fetchval("SELECT 1")  # the ROLLBACK that follows fails as well
        for _ in range(3):  # BEGIN on a connection that died while it waited in the pool
            idle = await db.fetchval("SELECT pg_backend_pid()")
            await _kill(database_url, idle)
            await asyncio.sleep(0.1)
            try:
                async with db.transaction():
                    await db.fetchval("SELECT 1")
            except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError):
                pass
        async with asyncio.timeout(5):
            async with db.transaction():
                assert await db.fetchval("SELECT 1") == 1
    finally:
        async with asyncio.timeout(10):  # waits forever for a connection that was never given back
            await close_engine()


async def test_a_dropped_connection_is_told_apart_from_a_query_that_failed(database_url: str) -> None:
    """What decides whether a failed job is tried again for free (jobs/workers.py): the database going away is
    not the job's failure; a statement timeout or a broken constraint is."""
    engine = await open_engine(database_url, max_size=2)
    db = Database(engine)
    try:
        with pytest.raises(Exception) as dropped:  # noqa: PT011, PT012 (which class asyncpg raises is the test)
            async with db.transaction():
                await _kill(database_url, await db.fetchval("SELECT pg_backend_pid()"))
                await db.fetchval("SELECT 1")
        assert database_unavailable(dropped.value), repr(dropped.value)
        with pytest.raises(asyncpg.QueryCanceledError) as timed_out:  # noqa: PT012
            async with db.transaction():
                await db.execute("SET LOCAL statement_timeout = 50")
                await db.execute("SELECT pg_sleep(1)")
        assert not database_unavailable(timed_out.value)
        with pytest.raises(asyncpg.UndefinedTableError) as wrong:
            await db.fetchval("SELECT 1 FROM no_such_table")
        assert not database_unavailable(wrong.value)
        refused = None
        try:  # a database that is not (yet) listening: the moment of a restart
            await asyncpg.connect(f"postgresql://plmail@127.0.0.1:{free_port()}/plmail", timeout=5)
        except OSError as exc:
            refused = exc
        assert refused is not None and database_unavailable(refused)
    finally:
        async with asyncio.timeout(10):
            await close_engine()
