"""The one shape of plmail's hand-written migrations: a forwards and a backwards SQL script.

Piccolo's diff cannot express triggers, generated columns or GIN indexes, so those migrations are SQL
scripts; this builds the `forwards()` Piccolo calls for each of them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from piccolo.apps.migrations.auto.migration_manager import MigrationManager
from piccolo.engine import engine_finder

_NO_LIMIT = 24 * 3600.0  # seconds; asyncpg takes None as "the connection's default", not "none"


async def _execute(script: str) -> None:
    # The simple protocol runs a multi-statement script with $$ bodies on the migration's transaction.
    engine = engine_finder()
    assert engine is not None
    transaction = engine.current_transaction.get()
    assert transaction is not None, "raw migrations run inside the migration's transaction"
    # As long as it takes: the pool's per-statement timeout (engine.py) is for requests, and a migration that moves
    # the data of a large mailbox runs for minutes (benchmarks/neutral_ref_migration.py).
    await transaction.connection.execute(script, timeout=_NO_LIMIT)


def sql_migration(migration_id: str, description: str, forwards_sql: str, backwards_sql: str
                  ) -> Callable[[], Awaitable[MigrationManager]]:
    """The `forwards` of a migration that runs `forwards_sql`, and `backwards_sql` to undo it."""

    async def forwards() -> MigrationManager:
        manager = MigrationManager(migration_id=migration_id, app_name="plmail", description=description)

        async def run() -> None:
            await _execute(forwards_sql)

        async def run_backwards() -> None:
            await _execute(backwards_sql)

        manager.add_raw(run)
        manager.add_raw_backwards(run_backwards)
        return manager

    return forwards
