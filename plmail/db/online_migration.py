"""Steps a migration runs outside `plmail migrate`'s one transaction, so a large table stays open while they run.

PostgreSQL holds every lock until its transaction ends: a million-row backfill or an index build inside the one
migration transaction closes the table to writes (after any ALTER TABLE, to reads too) for the whole migration. A
migration module lists such work in `ONLINE`; `migrate.py` commits the migration's transactional part, then runs
these steps one by one, still under its advisory lock. Every step is idempotent, so a run that stopped half-way (a
crash, a restart) leaves a state the next `plmail migrate` completes.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass

import asyncpg

log = logging.getLogger(__name__)

_NO_LIMIT = 24 * 3600.0  # seconds: the pool's per-statement timeout is for requests, not for an index build


@dataclass(frozen=True, slots=True)
class Backfill:
    """Rows changed a key range at a time, each range in its own committed transaction.

    `statement` takes the range as `$1 <= key < $2` and must touch only rows still to do (so a range done twice
    changes nothing). A writer waits at most for one range: the range grows or shrinks to take about `seconds`.
    With `while_column` (table, column) the backfill runs only while that (old) column exists.
    """

    table: str
    statement: str
    while_column: tuple[str, str] | None = None
    key: str = "id"
    seconds: float = 0.25
    first_batch: int = 1_000


@dataclass(frozen=True, slots=True)
class ConcurrentIndex:
    """An index built with CREATE INDEX CONCURRENTLY: writes go on while it is built.

    An interrupted build leaves an INVALID index behind; it is dropped (concurrently) and built again.
    `definition` is what follows the index's name: "ON table (columns) [WHERE ...]".
    """

    name: str
    definition: str
    unique: bool = False


@dataclass(frozen=True, slots=True)
class Vacuum:
    """VACUUM (ANALYZE) after a backfill: it takes no lock that readers or writers wait for.

    A backfill leaves a dead row version behind every row it changed; left to autovacuum, its worker may hold the
    table when the next migration's ALTER TABLE asks for its exclusive lock, which then waits deadlock_timeout (1 s)
    for the worker to be cancelled, with every reader queued behind it.
    """

    table: str


@dataclass(frozen=True, slots=True)
class NotNull:
    """SET NOT NULL without reading the table under an exclusive lock.

    A CHECK (column IS NOT NULL) is added NOT VALID (a moment's lock), validated under a lock readers and writers
    pass (SHARE UPDATE EXCLUSIVE), then SET NOT NULL, which PostgreSQL 12+ proves from the validated check without
    a scan; the check goes after.
    """

    table: str
    column: str


OnlineStep = Backfill | ConcurrentIndex | Vacuum | NotNull


async def run_online_steps(conn: asyncpg.Connection, migration_id: str, steps: tuple[OnlineStep, ...]) -> None:
    """Run `steps` in order on `conn`, which must not be inside a transaction."""
    for step in steps:
        began = time.perf_counter()
        if isinstance(step, Backfill):
            rows = await _backfill(conn, step)
            what = f"backfill of {step.table}: {rows} row(s)"
        elif isinstance(step, NotNull):
            await _not_null(conn, step)
            what = f"NOT NULL on {step.table}.{step.column}"
        elif isinstance(step, Vacuum):
            await conn.execute(f"VACUUM (ANALYZE) {_ident(step.table)}", timeout=_NO_LIMIT)
            what = f"vacuum of {step.table}"
        else:
            await _concurrent_index(conn, step)
            what = f"index {step.name}"
        log.debug("migration %s: %s in %.1f s", migration_id, what, time.perf_counter() - began)


def _ident(name: str) -> str:
    """A table or column name from a migration module, checked before it goes into SQL text."""
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
        raise ValueError(f"not a plain SQL name: {name!r}")
    return name


async def _backfill(conn: asyncpg.Connection, step: Backfill) -> int:
    if step.while_column is not None and not await conn.fetchval(
            "SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND table_name = $1 AND column_name = $2)", *step.while_column):
        return 0
    key, table = _ident(step.key), _ident(step.table)
    bounds = await conn.fetchrow(f"SELECT min({key}) AS low, max({key}) AS high FROM {table}")  # noqa: S608
    if bounds is None or bounds["low"] is None:
        return 0
    start, high, batch, changed = int(bounds["low"]), int(bounds["high"]), step.first_batch, 0
    while start <= high:
        began = time.perf_counter()
        status = await conn.execute(step.statement, start, start + batch, timeout=_NO_LIMIT)
        took = time.perf_counter() - began
        changed += _row_count(status)
        start += batch
        # The next range as long as this one took `seconds`, at most doubled or halved at once: a writer that wants
        # a row of the range waits for the range's transaction, so its length is the lock window.
        batch = max(100, min(100_000, int(batch * min(2.0, max(0.5, step.seconds / max(took, 1e-3))))))
        if start > high:  # rows written while the backfill ran, by a process that still knows the old shape
            high = int(await conn.fetchval(f"SELECT coalesce(max({key}), 0) FROM {table}"))  # noqa: S608
    return changed


def _row_count(status: str) -> int:
    # "UPDATE 42", "INSERT 0 42": the count is the last word.
    last = status.rsplit(" ", 1)[-1]
    return int(last) if last.isdigit() else 0


async def _concurrent_index(conn: asyncpg.Connection, step: ConcurrentIndex) -> None:
    valid = await conn.fetchval(
        "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace", step.name)
    if valid:
        return
    if valid is not None:  # a build that was interrupted: the index exists but is not used and must go
        await conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {_ident(step.name)}", timeout=_NO_LIMIT)
    unique = "UNIQUE " if step.unique else ""
    await conn.execute("SET maintenance_work_mem = '256MB'")  # the build in one sort; reset: the pool keeps sessions
    try:
        await conn.execute(f"CREATE {unique}INDEX CONCURRENTLY IF NOT EXISTS {_ident(step.name)} {step.definition}",
                           timeout=_NO_LIMIT)
    finally:
        await conn.execute("RESET maintenance_work_mem")


async def _not_null(conn: asyncpg.Connection, step: NotNull) -> None:
    table, column = _ident(step.table), _ident(step.column)
    check = _ident(f"{table}_{column}_not_null"[:63])
    has_check = "SELECT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = $1::regclass AND conname = $2)"
    not_null = await conn.fetchval(
        "SELECT attnotnull FROM pg_attribute WHERE attrelid = $1::regclass AND attname = $2", table, column)
    if not not_null:
        if not await conn.fetchval(has_check, table, check):
            await conn.execute(f"ALTER TABLE {table} ADD CONSTRAINT {check} CHECK ({column} IS NOT NULL) NOT VALID")
        await conn.execute(f"ALTER TABLE {table} VALIDATE CONSTRAINT {check}", timeout=_NO_LIMIT)
        await conn.execute(f"ALTER TABLE {table} ALTER COLUMN {column} SET NOT NULL")
    if await conn.fetchval(has_check, table, check):  # also the one a run that stopped after SET NOT NULL left
        await conn.execute(f"ALTER TABLE {table} DROP CONSTRAINT {check}")
