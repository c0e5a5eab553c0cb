"""A small typed facade over the engine for repositories that write SQL by hand.

Inside `transaction()` every query, Piccolo's or ours, runs on the transaction's connection, so a
row inserted earlier in the transaction is visible to the lookups that follow it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
from piccolo.engine.postgres import PostgresEngine, PostgresTransaction


class Database:
    def __init__(self, engine: PostgresEngine) -> None:
        self.engine = engine

    def transaction(self) -> PostgresTransaction:
        return self.engine.transaction()

    @asynccontextmanager
    async def savepoint(self) -> AsyncIterator[None]:
        """A nested transaction on the current one: a failure inside rolls back only what it did."""
        current = self.engine.current_transaction.get()
        if current is None:
            raise RuntimeError("savepoint() needs an open transaction")
        async with current.connection.transaction():
            yield

    def in_transaction(self) -> bool:
        return self.engine.current_transaction.get() is not None

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[asyncpg.Connection]:
        current = self.engine.current_transaction.get()
        if current is not None:
            yield current.connection
            return
        if self.engine.pool is None:
            raise RuntimeError("database pool is not open")
        async with self.engine.pool.acquire() as conn:
            yield conn

    async def fetch(self, sql: str, *args: Any) -> list[asyncpg.Record]:
        async with self.connection() as conn:
            rows: list[asyncpg.Record] = await conn.fetch(sql, *args)
            return rows

    async def fetchrow(self, sql: str, *args: Any) -> asyncpg.Record | None:
        async with self.connection() as conn:
            row: asyncpg.Record | None = await conn.fetchrow(sql, *args)
            return row

    async def fetchval(self, sql: str, *args: Any) -> Any:
        async with self.connection() as conn:
            return await conn.fetchval(sql, *args)

    async def execute(self, sql: str, *args: Any) -> str:
        async with self.connection() as conn:
            status: str = await conn.execute(sql, *args)
            return status

    async def executemany(self, sql: str, args: Sequence[Sequence[Any]]) -> None:
        async with self.connection() as conn:
            await conn.executemany(sql, args)
