"""A short-lived connection pool for the operations commands, which must not run migrations or start queues."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from plmail.db.database import Database
from plmail.db.engine import close_engine, open_engine


@asynccontextmanager
async def short_lived_database(dsn: str) -> AsyncIterator[Database]:
    engine = await open_engine(dsn, max_size=2)
    try:
        yield Database(engine)
    finally:
        await close_engine()
