"""The one Piccolo engine of the process, pointed at the database chosen at start-up."""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("PICCOLO_CONF", "plmail.db.piccolo_conf")

import asyncpg
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
        # Mail is read from memory or SSD, where an index probe costs about a sequential read (PostgreSQL's
        # default of 4 made a search for a rare sender scan every thread rather than probe a few hundred);
        # JIT compiling pays off for analytics, not for 1-ms page queries it would lengthen by tens of ms; and
        # parallel workers walking one index each read far past the page the leader needed (at 1M messages a
        # rare sender's search read 116,000 threads instead of 8,000).
        "server_settings": {"plan_cache_mode": "force_custom_plan", "random_page_cost": "1.1", "jit": "off",
                            "max_parallel_workers_per_gather": "0"},
        "reset": _keep_session,
    }
    await engine.start_connection_pool(**pool_args)
    return engine


async def _keep_session(conn: asyncpg.Connection) -> None:
    """Returned connections skip asyncpg's RESET ALL/UNLISTEN/unlock round trip: a release happens after nearly
    every statement outside a transaction, and no code of ours leaves session state behind (session locks are
    unlocked by their holder, LISTEN lives on the queues' own connections). asyncpg still rolls back an open
    transaction and drops listeners before this is called."""


async def close_engine() -> None:
    engine = piccolo_engine()
    if engine.pool is not None:
        await engine.close_connection_pool()
