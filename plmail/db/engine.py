"""The one Piccolo engine of the process, pointed at the database chosen at start-up."""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("PICCOLO_CONF", "plmail.db.piccolo_conf")

from piccolo.engine import engine_finder
from piccolo.engine.postgres import PostgresEngine


def piccolo_engine() -> PostgresEngine:
    engine = engine_finder()
    if not isinstance(engine, PostgresEngine):
        raise RuntimeError("plmail needs Piccolo's PostgresEngine; check PICCOLO_CONF")
    return engine


async def open_engine(dsn: str, *, max_size: int = 20) -> PostgresEngine:
    """Point the engine at `dsn` and open its connection pool (closing an earlier one)."""
    engine = piccolo_engine()
    if engine.pool is not None:
        await engine.close_connection_pool()
    engine.config = {"dsn": dsn}
    pool_args: dict[str, Any] = {
        "min_size": 1,
        "max_size": max_size,
        "command_timeout": 300,
        # asyncpg prepares every statement; a generic plan cannot see how common a searched word or a
        # label is, and picks a sort over every thread where a walk down the index would stop at 50.
        "server_settings": {"plan_cache_mode": "force_custom_plan"},
    }
    await engine.start_connection_pool(**pool_args)
    return engine


async def close_engine() -> None:
    engine = piccolo_engine()
    if engine.pool is not None:
        await engine.close_connection_pool()
