"""Migrations: apply to an empty database, re-run as a no-op, no drift, refuse a newer schema, and finish online steps
that a failed run left half done."""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from piccolo.apps.migrations.commands.base import BaseMigrationManager
from piccolo.apps.migrations.tables import Migration

from plmail.db.database import Database
from plmail.db.engine import close_engine, open_engine
from plmail.db.migrate import (
    APP_NAME,
    MIGRATIONS_DIR,
    ONLINE_PENDING,
    check_schema,
    known_migration_ids,
    migrate,
)
from plmail.db.online_migration import Backfill, ConcurrentIndex, NotNull, run_online_steps
from plmail.domain.errors import SchemaError, SchemaTooNewError
from tests.support.pg import PgTestCluster

ROOT = Path(__file__).resolve().parents[2]
NEUTRAL_LABEL_BINDING = "2026-12-07T13:00:00:000000"


@pytest.fixture
async def empty_db(pg: PgTestCluster) -> AsyncIterator[tuple[str, Database]]:
    dsn = pg.create_database("t_empty_migrations")
    engine = await open_engine(dsn, max_size=3)
    try:
        yield dsn, Database(engine)
    finally:
        await close_engine()
        pg.drop_database("t_empty_migrations")


async def test_migrations_apply_to_an_empty_database_and_rerun_is_a_noop(empty_db: tuple[str, Database]) -> None:
    _, db = empty_db
    with pytest.raises(SchemaError, match=f"needs {len(known_migration_ids())} migration"):
        await check_schema(db)
    first = await migrate(db)
    assert first.applied == tuple(known_migration_ids())
    assert first.already_applied == 0
    tables = {r["tablename"] for r in await db.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
    assert tables >= {"app_user", "account", "mailbox", "message", "message_part", "message_thread", "label",
                      "label_binding", "message_label", "thread_label", "contact", "app_password", "jmap_change_log"}
    second = await migrate(db)
    assert second.applied == ()
    assert second.already_applied == len(first.applied)
    await check_schema(db)


async def test_the_search_vector_has_its_own_table_with_a_gin_index_and_finds_address_parts(
        services_db: Database) -> None:
    """Migrations 13:45 and 13:50 (issue 36): the vector left the message row for message_search, written by the
    insert's trigger, or queued in message_search_pending when the insert asked for later."""
    db = services_db
    assert await db.fetchval(
        "SELECT count(*) FROM information_schema.columns WHERE table_name = 'message' AND column_name = 'search_vector'"
    ) == 0
    index = await db.fetchval("SELECT indexdef FROM pg_indexes WHERE indexname = 'idx_message_search'")
    assert "ON public.message_search USING gin (search_vector)" in index
    for name, columns in [("uniq_message_provider_ref", "(provider_container, provider_key, account_id)"),
                          ("uniq_message_thread_provider_key_account", "(provider_thread_key, account_id)")]:
        definition = await db.fetchval("SELECT indexdef FROM pg_indexes WHERE indexname = $1", name)
        assert definition.startswith("CREATE UNIQUE INDEX") and columns in definition, name

    user_id = await db.fetchval(
        "INSERT INTO app_user (email, password_hash, created_at, updated_at) VALUES ('u@x.test', 'h', now(), now()) "
        "RETURNING id")
    account_id = await db.fetchval(
        "INSERT INTO account (user_id, provider_kind, created_at, updated_at) VALUES ($1, 'local', now(), now()) "
        "RETURNING id", user_id)
    message_id = await db.fetchval(
        """INSERT INTO message (account_id, subject, from_name, from_address, body_text, created_at, updated_at)
           VALUES ($1, 'Quarterly invoices', 'Alice Smith', 'alice.smith@mail.example.org',
                   'Please find the attached numbers.', now(), now()) RETURNING id""", account_id)

    async def hits(config: str, query: str) -> int:
        return int(await db.fetchval(
            f"SELECT count(*) FROM message_search WHERE search_vector @@ websearch_to_tsquery('{config}', $1)", query))

    assert await hits("simple", "example.org") == 1  # a parent domain of the sender's host
    assert await hits("simple", "mail.example.org") == 1
    assert await hits("simple", "alice.smith@mail.example.org") == 1
    assert await hits("simple", "smith") == 1
    assert await hits("english", "invoice") == 1  # stemmed subject
    assert await hits("english", "number") == 1  # stemmed body
    assert await hits("simple", "the") == 1  # an English stop word, kept by 'simple'
    assert await hits("simple", "other.org") == 0
    async with db.transaction():  # one connection, so the planner setting applies to the EXPLAIN
        await db.execute("SET LOCAL enable_seqscan = off")
        plan = "\n".join(r[0] for r in await db.fetch(
            "EXPLAIN SELECT message_id FROM message_search "
            "WHERE search_vector @@ websearch_to_tsquery('simple', 'example.org')"))
    assert "idx_message_search" in plan

    # An insert that asks for later leaves no vector and a row in the queue; deleting the message empties both.
    async with db.transaction():
        await db.execute("SELECT set_config('plmail.search_later', 'on', true)")
        later = await db.fetchval(
            "INSERT INTO message (account_id, subject, body_text, created_at, updated_at) "
            "VALUES ($1, 'Later', 'indexed afterwards', now(), now()) RETURNING id", account_id)
    assert await db.fetchval("SELECT count(*) FROM message_search WHERE message_id = $1", later) == 0
    assert await db.fetchval("SELECT count(*) FROM message_search_pending WHERE message_id = $1", later) == 1
    await db.execute("DELETE FROM message WHERE id = ANY($1::bigint[])", [message_id, later])
    assert await db.fetchval("SELECT count(*) FROM message_search") == 0
    assert await db.fetchval("SELECT count(*) FROM message_search_pending") == 0


async def test_stored_search_vectors_are_copied_online_to_their_own_table_and_the_copy_runs_twice_safely(
        database_url: str) -> None:
    """Migrations 13:45 and 13:50 on a database that has mail: the vectors the old column holds are copied (not
    computed again) a key range at a time, the GIN index is built concurrently, and the old column goes."""
    vector_table = importlib.import_module("plmail.db.migrations.plmail_2026_12_07t13_45_00_000000")
    old_column = importlib.import_module("plmail.db.migrations.plmail_2026_12_07t13_50_00_000000")
    conn = await asyncpg.connect(database_url)
    try:
        async with conn.transaction():  # back to the shape before: the generated column, no vector table
            await conn.execute(old_column.BACKWARDS_SQL)
            await conn.execute(vector_table.BACKWARDS_SQL)
        user_id = await conn.fetchval("INSERT INTO app_user (email, password_hash, created_at, updated_at) "
                                      "VALUES ('u@x.test', 'h', now(), now()) RETURNING id")
        account_id = await conn.fetchval("INSERT INTO account (user_id, provider_kind, created_at, updated_at) "
                                         "VALUES ($1, 'local', now(), now()) RETURNING id", user_id)
        await conn.execute(
            """INSERT INTO message (account_id, subject, from_address, body_text, created_at, updated_at)
               SELECT $1, 'Invoice ' || g, 'billing' || g || '@shop.example', 'Paid on day ' || g, now(), now()
                 FROM generate_series(1, 2500) AS g""", account_id)
        old = {r["id"]: r["search_vector"] for r in await conn.fetch("SELECT id, search_vector FROM message")}
        async with conn.transaction():
            await conn.execute(vector_table.FORWARDS_SQL)
        for _ in range(2):  # a second run copies nothing again
            await run_online_steps(conn, vector_table.ID, vector_table.ONLINE)
            copied = {r["message_id"]: r["search_vector"]
                      for r in await conn.fetch("SELECT message_id, search_vector FROM message_search")}
            assert copied == old
        assert await conn.fetchval("SELECT indisvalid FROM pg_index WHERE indexrelid = 'idx_message_search'::regclass")
        async with conn.transaction():
            await conn.execute(old_column.FORWARDS_SQL)
        assert await conn.fetchval("SELECT count(*) FROM information_schema.columns "
                                   "WHERE table_name = 'message' AND column_name = 'search_vector'") == 0
        # The vector copied is the one the new function computes: a message written now reads the same.
        fresh = await conn.fetchval(
            "SELECT plmail_search_vector('Invoice 7', NULL, 'billing7@shop.example', 'Paid on day 7')")
        seventh = await conn.fetchval("SELECT s.search_vector FROM message_search s JOIN message m "
                                      "ON m.id = s.message_id WHERE m.subject = 'Invoice 7'")
        assert fresh == seventh
        # After the copy the old column is gone, so a third run of the backfill has nothing to copy from.
        await run_online_steps(conn, vector_table.ID, vector_table.ONLINE)
        assert await conn.fetchval("SELECT count(*) FROM message_search") == 2500
    finally:
        await conn.close()


@pytest.fixture
async def services_db(database_url: str) -> AsyncIterator[Database]:
    engine = await open_engine(database_url, max_size=2)
    try:
        yield Database(engine)
    finally:
        await close_engine()


def test_autogenerator_sees_no_drift(tmp_path: Path) -> None:
    """The raw-SQL objects (generated column, GIN index) are invisible to Piccolo's diff, so no
    later `--auto` migration tries to add or drop them."""
    before = set(MIGRATIONS_DIR.glob("*.py"))
    env = {**os.environ, "PICCOLO_CONF": "plmail.db.piccolo_conf"}
    result = subprocess.run(
        [sys.executable, "-m", "piccolo.main", "migrations", "new", "plmail", "--auto"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    created = set(MIGRATIONS_DIR.glob("*.py")) - before
    for path in created:  # never leave a stray migration behind, even when the assertion fails
        path.unlink()
    assert result.returncode == 0, result.stderr
    assert "No changes detected" in result.stdout + result.stderr
    assert not created


async def test_a_newer_schema_is_refused_with_a_clear_error(services_db: Database, database_url: str,
                                                            tmp_path: Path) -> None:
    await services_db.execute(
        "INSERT INTO migration (name, app_name, ran_on) VALUES ('2999-01-01T00:00:00:000000', 'plmail', now())")
    with pytest.raises(SchemaTooNewError, match="newer than this plmail"):
        await migrate(services_db)
    with pytest.raises(SchemaTooNewError):
        await check_schema(services_db)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
    env.update({"PLMAIL_DATABASE_URL": database_url, "PLMAIL_DATA_DIR": str(tmp_path / "data")})
    cli = subprocess.run([sys.executable, "-m", "plmail.cli", "migrate"], env=env, capture_output=True, text=True,
                         timeout=120)
    assert cli.returncode == 2
    assert "plmail: error: The database schema is newer than this plmail" in cli.stderr
    assert "Traceback" not in cli.stderr


async def _migrate_before(db: Database, first_left_out: str) -> None:
    """`plmail migrate` as it was before `first_left_out`: every older migration, recorded as applied."""
    from piccolo.apps.migrations.commands.base import BaseMigrationManager
    from piccolo.apps.migrations.tables import Migration

    finder = BaseMigrationManager()
    modules = finder.get_migration_modules(str(MIGRATIONS_DIR))
    async with db.transaction():
        await Migration.create_table(if_not_exists=True).run()  # type: ignore[no-untyped-call]
        for migration_id in sorted(finder.get_migration_ids(modules)):
            if migration_id >= first_left_out:
                break
            manager = await modules[migration_id].forwards()
            with contextlib.redirect_stdout(io.StringIO()):
                await manager.run()
            await Migration.insert(Migration(name=migration_id, app_name=APP_NAME)).run()


async def _bindings(db: Database) -> list[tuple[object, ...]]:
    return [tuple(r) for r in await db.fetch("SELECT * FROM label_binding ORDER BY id")]


async def test_label_bindings_move_to_provider_neutral_columns_and_the_move_runs_twice_safely(
        empty_db: tuple[str, Database]) -> None:
    """Issue 31: the core schema names no provider; a binding's place at the provider moves, nothing is lost."""
    _, db = empty_db
    await _migrate_before(db, NEUTRAL_LABEL_BINDING)
    user = await db.fetchval("INSERT INTO app_user (email, password_hash, created_at, updated_at) "
                             "VALUES ('u@x.test', 'h', now(), now()) RETURNING id")
    account = {kind: await db.fetchval(
        "INSERT INTO account (user_id, provider_kind, created_at, updated_at) VALUES ($1, $2, now(), now()) "
        "RETURNING id", user, kind) for kind in ("imap", "gmail", "graph")}
    label = {name: await db.fetchval(
        "INSERT INTO label (user_id, name, is_visible, created_at, updated_at) VALUES ($1, $2, true, now(), now()) "
        "RETURNING id", user, name) for name in ("Receipts", "Red", "Projects")}
    folder = await db.fetchval(
        "INSERT INTO mailbox (account_id, name, created_at, updated_at) VALUES ($1, 'Receipts', now(), now()) "
        "RETURNING id", account["imap"])
    long_folder_id = "AAMkAGI2TG93AAA=" + "x" * 300  # Graph's ids may pass the Gmail column's 255 characters
    old_shape = [  # (label, account, IMAP folder, Gmail label id, Graph folder id, Graph category)
        (label["Receipts"], account["imap"], folder, None, None, None),
        (label["Receipts"], account["gmail"], None, "Label_7", None, None),
        (label["Projects"], account["gmail"], None, None, None, None),  # bound, nowhere at the provider
        (label["Receipts"], account["graph"], None, None, long_folder_id, None),
        (label["Red"], account["graph"], None, None, None, "Red"),
        (label["Projects"], account["graph"], None, None, "AAMkProjects=", "Projects"),  # folder and category
    ]
    for row in old_shape:
        await db.execute(
            "INSERT INTO label_binding (label_id, account_id, mailbox_id, gmail_label_id, graph_folder_id, "
            "graph_category_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, now(), now())", *row)

    data_step = importlib.import_module("plmail.db.migrations.plmail_2026_12_07t13_00_00_000000")
    async with db.transaction():
        await db.execute(data_step.FORWARDS_SQL)
    once = await _bindings(db)
    async with db.transaction():
        await db.execute(data_step.FORWARDS_SQL)
    assert await _bindings(db) == once

    report = await migrate(db)
    assert report.applied[0] == NEUTRAL_LABEL_BINDING
    await check_schema(db)
    columns = {r["column_name"]: r["data_type"] for r in await db.fetch(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'label_binding'")}
    assert columns["provider_key"] == "text" and columns["provider_tag"] == "text"
    assert not [c for c in columns if c.startswith(("gmail", "graph", "imap"))], columns
    moved = [tuple(r) for r in await db.fetch(
        "SELECT label_id, account_id, mailbox_id, provider_key, provider_tag FROM label_binding ORDER BY id")]
    assert moved == [
        (label["Receipts"], account["imap"], folder, None, None),
        (label["Receipts"], account["gmail"], None, "Label_7", None),
        (label["Projects"], account["gmail"], None, None, None),
        (label["Receipts"], account["graph"], None, long_folder_id, None),
        (label["Red"], account["graph"], None, None, "Red"),
        (label["Projects"], account["graph"], None, "AAMkProjects=", "Projects"),
    ]
    after = await _bindings(db)
    async with db.transaction():  # the data step once more, now on the new shape: nothing to do
        await db.execute(data_step.FORWARDS_SQL)
    assert await _bindings(db) == after

    # Looking a binding up by the provider's key is indexed, as the Gmail and Graph columns were.
    index = await db.fetchval("SELECT indexdef FROM pg_indexes WHERE indexname = 'label_binding_provider_key'")
    assert index is not None and "(provider_key)" in index
    async with db.transaction():
        await db.execute("SET LOCAL enable_seqscan = off")
        plan = "\n".join(r[0] for r in await db.fetch(
            "EXPLAIN SELECT label_id FROM label_binding WHERE account_id = 1 AND provider_key = 'Label_7'"))
    assert "label_binding_provider_key" in plan, plan


async def test_an_interrupted_backfill_commits_its_ranges_and_a_second_run_completes_it(
        empty_db: tuple[str, Database]) -> None:
    dsn, _ = empty_db
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute("CREATE TABLE online_sample (id bigserial PRIMARY KEY, divisor int NOT NULL, share int)")
        await conn.execute("INSERT INTO online_sample (divisor) SELECT CASE WHEN g = 4000 THEN 0 ELSE 2 END "
                           "FROM generate_series(1, 5000) AS g")
        step = Backfill("online_sample", "UPDATE online_sample SET share = 100 / divisor "
                                         "WHERE id >= $1 AND id < $2 AND share IS NULL")
        # Row 4000 makes its range fail, as a crash would stop it: the ranges before it stay committed.
        with pytest.raises(asyncpg.DivisionByZeroError):
            await run_online_steps(conn, "sample", (step,))
        done = await conn.fetchval("SELECT count(*) FROM online_sample WHERE share IS NOT NULL")
        assert 1000 <= done < 4000
        assert await conn.fetchval("SELECT count(*) FROM online_sample WHERE id >= 4000 AND share IS NOT NULL") == 0
        await conn.execute("UPDATE online_sample SET divisor = 4 WHERE id = 4000")
        await run_online_steps(conn, "sample", (step,))
        assert await conn.fetchval("SELECT count(*) FROM online_sample WHERE share IS NULL") == 0
        assert await conn.fetchval("SELECT share FROM online_sample WHERE id = 4000") == 25
        assert await conn.fetchval("SELECT share FROM online_sample WHERE id = 3999") == 50

        # The filled column becomes NOT NULL through a validated check, which goes again afterwards. A row still
        # empty stops it at the validation, leaving the unvalidated check; the run after the row is filled finishes.
        await conn.execute("UPDATE online_sample SET share = NULL WHERE id = 10")
        with pytest.raises(asyncpg.CheckViolationError):
            await run_online_steps(conn, "sample", (NotNull("online_sample", "share"),))
        await conn.execute("UPDATE online_sample SET share = 50 WHERE id = 10")
        for _ in range(2):  # a second run finds it done
            await run_online_steps(conn, "sample", (NotNull("online_sample", "share"),))
            assert await conn.fetchval("SELECT attnotnull FROM pg_attribute "
                                       "WHERE attrelid = 'online_sample'::regclass AND attname = 'share'") is True
            assert await conn.fetchval("SELECT count(*) FROM pg_constraint "
                                       "WHERE conrelid = 'online_sample'::regclass AND contype = 'c'") == 0
        with pytest.raises(asyncpg.NotNullViolationError):
            await conn.execute("INSERT INTO online_sample (divisor) VALUES (1)")

        # A unique index build that failed leaves an INVALID index, which PostgreSQL never uses: it is built again.
        with pytest.raises(asyncpg.UniqueViolationError):
            await conn.execute("CREATE UNIQUE INDEX CONCURRENTLY uniq_online_sample_share ON online_sample (share)")
        assert await conn.fetchval("SELECT indisvalid FROM pg_index "
                                   "WHERE indexrelid = 'uniq_online_sample_share'::regclass") is False
        await conn.execute("UPDATE online_sample SET share = id")
        index = ConcurrentIndex("uniq_online_sample_share", "ON online_sample (share)", unique=True)
        await run_online_steps(conn, "sample", (index,))
        assert await conn.fetchval("SELECT indisvalid FROM pg_index "
                                   "WHERE indexrelid = 'uniq_online_sample_share'::regclass") is True
        with pytest.raises(asyncpg.UniqueViolationError):
            await conn.execute("INSERT INTO online_sample (divisor, share) VALUES (1, 1)")
    finally:
        await conn.close()


async def test_a_migrate_that_failed_during_the_neutral_reference_backfill_is_completed_by_the_next(
        empty_db: tuple[str, Database]) -> None:
    """Issue 31: the neutral reference's data moves in committed ranges; a run stopped half-way leaves the migration
    marked unfinished (the schema check says so), and the next `plmail migrate` completes it before anything else."""
    _, db = empty_db
    finder = BaseMigrationManager()
    modules = finder.get_migration_modules(str(MIGRATIONS_DIR))
    async with db.transaction():  # the database as it was before the neutral reference
        await Migration.create_table(if_not_exists=True).run()  # type: ignore[no-untyped-call]
        for migration_id in sorted(finder.get_migration_ids(modules)):
            if migration_id >= "2026-12-07T10:30:00:000000":
                break
            with contextlib.redirect_stdout(io.StringIO()):  # Piccolo prints progress
                await (await modules[migration_id].forwards()).run()
            await Migration.insert(Migration(name=migration_id, app_name=APP_NAME)).run()
    user_id = await db.fetchval("INSERT INTO app_user (email, password_hash, created_at, updated_at) "
                                "VALUES ('old@x.test', 'h', now(), now()) RETURNING id")
    imap = await db.fetchval("INSERT INTO account (user_id, provider_kind, created_at, updated_at) "
                             "VALUES ($1, 'imap', now(), now()) RETURNING id", user_id)
    graph = await db.fetchval("INSERT INTO account (user_id, provider_kind, created_at, updated_at) "
                              "VALUES ($1, 'graph', now(), now()) RETURNING id", user_id)
    inbox = await db.fetchval("INSERT INTO mailbox (account_id, full_path, uid_validity, created_at, updated_at) "
                              "VALUES ($1, 'INBOX', 7, now(), now()) RETURNING id", imap)
    await db.execute(
        "INSERT INTO message (account_id, subject, created_at, updated_at, mailbox_id, imap_uid, graph_id, "
        "graph_folder_id) SELECT CASE WHEN g % 2 = 0 THEN $1::int ELSE $2::int END, 'Mail ' || g, now(), now(), "
        "CASE WHEN g % 2 = 0 THEN $3::bigint END, CASE WHEN g % 2 = 0 THEN 100 + g END, "
        "CASE WHEN g % 2 = 1 THEN 'AAMk' || g END, CASE WHEN g % 2 = 1 THEN 'AAMkInbox=' END "
        "FROM generate_series(1, 3000) AS g", imap, graph, inbox)
    poisoned = int(await db.fetchval("SELECT min(id) + 2500 FROM message"))
    # A row the database refuses to change stops the backfill there, as a crash or a restart would.
    await db.execute(f"""
        CREATE FUNCTION test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'stopped at message %', OLD.id; END $$;
        CREATE TRIGGER test_refuse BEFORE UPDATE ON message FOR EACH ROW WHEN (OLD.id = {poisoned})
            EXECUTE FUNCTION test_refuse();""")
    with pytest.raises(asyncpg.RaiseError, match="stopped at message"):
        await migrate(db)
    moved = await db.fetchval("SELECT count(*) FROM message WHERE provider_key IS NOT NULL")
    assert 0 < moved < 3000
    assert await db.fetchval("SELECT count(*) FROM message WHERE id >= $1 AND provider_key IS NOT NULL",
                             poisoned) == 0
    unfinished = await db.fetch("SELECT name FROM migration WHERE app_name = $1", ONLINE_PENDING)
    assert [r["name"] for r in unfinished] == ["2026-12-07T10:40:00:000000"]
    with pytest.raises(SchemaError, match="did not finish; run 'plmail migrate'"):
        await check_schema(db)
    # The later steps waited: the old columns are still there to move the rest from.
    assert await db.fetchval("SELECT count(*) FROM information_schema.columns "
                             "WHERE table_name = 'message' AND column_name = 'imap_uid'") == 1

    await db.execute("DROP TRIGGER test_refuse ON message; DROP FUNCTION test_refuse()")
    second = await migrate(db)
    assert second.applied[0] == "2026-12-07T10:50:00:000000"
    assert second.applied[-1] == known_migration_ids()[-1]
    await check_schema(db)
    rows = await db.fetch("SELECT account_id, provider_container, provider_key, subject FROM message ORDER BY id")
    assert len(rows) == 3000
    for row in rows:
        number = int(row["subject"].removeprefix("Mail "))
        if row["account_id"] == imap:  # IMAP: the folder row and the UID
            assert (row["provider_container"], row["provider_key"]) == (str(inbox), str(100 + number))
        else:  # Graph: the immutable id, account-wide
            assert (row["provider_container"], row["provider_key"]) == ("", f"AAMk{number}")
    assert await db.fetchval("SELECT count(*) FROM graph_message WHERE folder_id = 'AAMkInbox='") == 1500
    for index in ("uniq_message_provider_ref", "idx_message_key_number", "idx_message_mailbox"):
        assert await db.fetchval("SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                                 "WHERE c.relname = $1", index) is True, index
    third = await migrate(db)
    assert third.applied == ()
