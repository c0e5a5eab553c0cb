"""A small typed facade over the engine for repositories that write SQL by hand.

Inside `transaction()` every query, Piccolo's or ours, runs on the transaction's connection, so a
row inserted earlier in the transaction is visible to the lookups that follow it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any

import asyncpg
import psycopg
from piccolo.engine.postgres import PostgresEngine, PostgresTransaction

# What a database that went away looks like (a restart, a dropped connection): from asyncpg (the app's queries)
# and psycopg (saq's queues). A statement timeout (QueryCanceledError) is not among them: that is the query's own.
_UNAVAILABLE: tuple[type[BaseException], ...] = (
    asyncpg.PostgresConnectionError, asyncpg.exceptions.AdminShutdownError, asyncpg.exceptions.CrashShutdownError,
    asyncpg.exceptions.CannotConnectNowError, asyncpg.InterfaceError, asyncpg.exceptions.InternalClientError,
    psycopg.OperationalError, ConnectionError,
)


def database_unavailable(error: BaseException | None) -> bool:
    """Whether an error (or what caused it) says the database was away, rather than that the work failed."""
    seen = 0
    while error is not None and seen < 5:
        if isinstance(error, _UNAVAILABLE):
            return True
        error = error.__cause__ or error.__context__
        seen += 1
    return False


class ReleasingTransaction(PostgresTransaction):
    """Piccolo's transaction, except that its connection goes back to the pool whatever fails.

    Piccolo's own gives its connection back only after a BEGIN and a COMMIT/ROLLBACK that worked; when the
    database restarts, BEGIN or ROLLBACK fails on the dead connection and the pool keeps it as "in use" for good:
    the pool shrinks with every restart, and closing it at shutdown waits forever.
    """

    async def __aenter__(self) -> PostgresTransaction:
        if self._parent is not None:
            return self._parent
        self.connection = await self.get_connection()  # type: ignore[no-untyped-call]
        try:
            self.transaction = self.connection.transaction()
            await self.begin()  # type: ignore[no-untyped-call]
        except BaseException:
            await self._give_back()
            raise
        self.context = self.engine.current_transaction.set(self)
        return self

    async def __aexit__(self, exception_type: type[BaseException] | None, exception: BaseException | None,
                        traceback: TracebackType | None) -> bool:
        if self._parent:
            return exception is None
        try:
            if exception:
                if not self._rolled_back:
                    await self.rollback()  # type: ignore[no-untyped-call]
            elif not self._committed and not self._rolled_back:
                await self.commit()  # type: ignore[no-untyped-call]
        finally:
            await self._give_back()
            self.engine.current_transaction.reset(self.context)
        return exception is None

    async def _give_back(self) -> None:
        # A dead connection is dropped by the pool on release; an error while releasing must not hide the first.
        with contextlib.suppress(asyncpg.PostgresError, asyncpg.InterfaceError, OSError):
            if self.engine.pool:
                await self.engine.pool.release(self.connection)
            else:
                await self.connection.close()


# A common table expression for a lone write (outside any transaction) whose loss in a crash costs only doing it
# again: its implicit transaction commits without waiting for the WAL to reach the disk (`synchronous_commit` off
# for that transaction alone). Written as `WITH unflushed AS (UNFLUSHED_COMMIT) UPDATE ... FROM unflushed ...`;
# inside a caller's transaction it must not be used, as it would make that whole transaction unflushed.
UNFLUSHED_COMMIT = "SELECT set_config('synchronous_commit', 'off', true)"


class Database:
    def __init__(self, engine: PostgresEngine) -> None:
        self.engine = engine

    def transaction(self) -> PostgresTransaction:
        return ReleasingTransaction(engine=self.engine)

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
