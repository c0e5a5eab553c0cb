"""A connection the database drops (a restart, a killed backend) goes back to the pool whatever the transaction
was doing: otherwise every restart shrinks the pool for good and closing it at shutdown waits forever."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from plmail.db.database import Database
from plmail.db.engine import close_engine, open_engine


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
