"""Shared fixtures: one PostgreSQL cluster per run, a migrated template, a fresh database per test."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from litestar import Litestar

from plmail.app import create_app
from plmail.config import Settings
from plmail.db.database import Database
from plmail.db.engine import close_engine, open_engine, piccolo_engine
from plmail.db.migrate import migrate
from plmail.services import Services, open_services
from tests.support.pg import TEMPLATE_DB, PgTestCluster
from tests.support.scratch import use_memory_for_scratch

use_memory_for_scratch()

# Every test that signs in hashes or checks a password: at RFC 9106's parameters that was 0.1-0.2 s of CPU each,
# a fifth of the light tests' time. The suite uses argon2's cheapest parameters (`plmail.users.passwords`), and
# the `plmail serve` processes it starts inherit them; tests/unit/test_password_profile.py checks the default.
os.environ.setdefault("PLMAIL_ARGON2_PROFILE", "CHEAPEST")

# tools/test runs the suite in three phases. First most tests, side by side (pytest-xdist, a worker more than the
# machine has cores). Then the `heavy` ones, which drive a browser, start `plmail serve` or servers of their own: side
# by side again, but after the light ones (so a browser never shares the machine with them) and each module whole on
# one worker (`--dist loadfile`), so its module-scoped servers start once. Last the `alone` ones, which measure how
# long something takes against a bound: one at a time, so a neighbour's load cannot make them miss a deadline.
# A path names a whole module or folder; path::name (a prefix of the test's name) only the tests that time themselves,
# so their modules' other tests still run side by side. `_ALONE` wins over `_HEAVY`.
_HEAVY = (
    "tests/e2e/",
    "tests/integration/sending/test_disabled_user.py",
    "tests/integration/test_proxy_headers.py",
    "tests/integration/assistant/test_priority.py",
    "tests/integration/imap_sync/test_resume.py",
    "tests/integration/jmap_accounts/",
    "tests/integration/providers/test_mail_contract.py",
    "tests/integration/providers/test_jmap_cyrus_submission.py",
    "tests/integration/ops/test_home_lab.py",
    "tests/integration/ops/test_release.py",
    "tests/integration/ops/test_two_nodes.py",
    "tests/integration/test_embedded.py",
    "tests/integration/test_jobs.py",
    "tests/integration/imap/test_connect.py",
    "tests/integration/imap/test_failures.py",
    "tests/integration/imap/test_idle.py",
    "tests/integration/jmap/test_push_subscriptions.py",
)
_ALONE = (
    "tests/e2e/test_jmap_client.py",
    # reads the undo toast, which lives 10 s: beside a neighbour the phone page's send outlasted it
    "tests/e2e/test_browser_compose.py::test_at_phone_width_compose_attach_and_send_without_horizontal_scrolling",
    "tests/integration/test_embedded.py::test_sigterm_stops_serve_and_its_database_promptly",
    "tests/integration/test_embedded.py::test_serve_survives_a_database_restart_and_still_stops_promptly",
    "tests/integration/test_jobs.py::test_stop_lets_a_running_job_finish_within_the_grace_period",
    "tests/integration/test_jobs.py::test_a_job_overrunning_the_grace_period_is_put_back_not_lost",
    "tests/integration/calendar/test_hostile_ics_serve.py",
    "tests/integration/test_live_events.py",
    "tests/integration/assistant/test_priority.py::test_live_mail_is_asked_before_the_import_backlog",
    "tests/integration/imap/test_connect.py::test_plain_connection_only_to_loopback",
    "tests/integration/imap/test_connect.py::test_connect_timeout_without_greeting",
    "tests/integration/imap/test_failures.py::test_kicked_by_the_server_while_idling",
    "tests/integration/imap/test_failures.py::test_silent_server_times_out",
    "tests/integration/imap/test_failures.py::test_slow_but_steady_response_is_not_a_timeout",
    "tests/integration/imap/test_idle.py::test_idle_sees_append_from_another_connection",
    "tests/integration/imap/test_idle.py::test_idle_is_renewed_and_ends_after_timeout",
    "tests/integration/imap_sync/test_crash_restart.py",
    "tests/integration/imap_sync/test_idle.py",
    "tests/integration/jmap/test_push.py",
    "tests/integration/jmap/test_push_subscriptions.py::test_a_hundred_arrivals_in_a_second_are_coalesced",
    "tests/unit/calendar/test_hostile_markup.py",
    "tests/unit/calendar/test_hostile_recurrence.py::test_the_783_byte_rule_is_cut_short_in_bounded_time",
    "tests/unit/calendar/test_hostile_recurrence.py::test_a_vtimezone_with_a_transition_a_day_is_not_used_and_costs",
    "tests/unit/calendar/test_ics_robustness.py",
    "tests/unit/mail/test_pdf_page.py::test_a_drawing_that_overruns_its_time_is_killed_and_gives_no_image",
    "tests/unit/calendar/test_markup_syntaxes.py::test_a_flood_of_rdfa_items_is_capped_in_bounded_time",
    "tests/unit/calendar/test_recurrence.py::test_stored_rules_that_never_match_cost_bounded_time",
    "tests/unit/fakes/test_model.py::test_delays_are_measurable_and_the_order_of_prompts_is_recorded",
    "tests/unit/fakes/test_model.py::test_a_hanging_host_holds_the_request_until_the_client_gives_up",
    "tests/unit/fakes/test_model.py::test_a_hanging_request_ends_on_release_and_the_server_stops_promptly",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.startswith(_ALONE):
            item.add_marker(pytest.mark.alone)
        elif item.nodeid.startswith(_HEAVY):
            item.add_marker(pytest.mark.heavy)


@pytest.fixture(autouse=True)
def _no_database_pool_left_open() -> Iterator[None]:
    """A pool a test leaves open is closed by the next test's start, perhaps while its database is being dropped
    under it: that test then fails with a broken pipe, far from the cause (seen in CI). Fail the cause instead."""
    before = piccolo_engine().pool
    yield
    after = piccolo_engine().pool
    if after is not None and after is not before:
        pytest.fail("this test left the process's database pool open (close its services or engine)")


@pytest.fixture(scope="session")
def pg() -> Iterator[PgTestCluster]:
    cluster = PgTestCluster()
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
async def migrated_template(pg: PgTestCluster) -> str:
    if os.environ.get("PLMAIL_TEST_TEMPLATE_READY"):  # tools/mutation migrated it once for every mutant
        return TEMPLATE_DB
    dsn = pg.create_database(TEMPLATE_DB)
    engine = await open_engine(dsn, max_size=2)
    try:
        await migrate(Database(engine))
    finally:
        await close_engine()
    return TEMPLATE_DB


@pytest.fixture
def database_url(pg: PgTestCluster, migrated_template: str) -> Iterator[str]:
    with pg.template_copy() as dsn:
        yield dsn


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    return path


@pytest.fixture
def settings(data_dir: Path, database_url: str) -> Settings:
    base = Settings.from_env({"PLMAIL_DATA_DIR": str(data_dir), "PLMAIL_DATABASE_URL": database_url})
    return dataclasses.replace(base, shutdown_grace_seconds=2)


@pytest.fixture
async def services(settings: Settings, database_url: str) -> AsyncIterator[Services]:
    opened = await open_services(settings, database_url)
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
async def web_app(settings: Settings, database_url: str, services: Services) -> AsyncIterator[Litestar]:
    """The real ASGI app, its lifespan running, without workers (pages only), sharing `services`."""
    app = create_app(settings, database_url, worker_queues=(), services=services)
    async with running_lifespan(app):
        yield app


@pytest.fixture
async def client(web_app: Litestar) -> AsyncIterator[httpx.AsyncClient]:
    """The app over HTTP in this event loop, as a browser at 203.0.113.7 would reach it."""
    async with browser(web_app) as http:
        yield http


def browser(app: Litestar, address: str = "203.0.113.7", *, base_url: str = "http://plmail.test"
            ) -> httpx.AsyncClient:
    """Another browser on the same app, from another client address (its own cookies)."""
    transport = httpx.ASGITransport(app=app, client=(address, 40000))
    return httpx.AsyncClient(transport=transport, base_url=base_url, follow_redirects=True)


@asynccontextmanager
async def running_lifespan(app: Litestar) -> AsyncIterator[None]:
    """Run the app's lifespan in one task of its own: anyio cancel scopes must exit where they entered,
    and pytest-asyncio may tear a fixture down from another task."""
    ready = asyncio.Event()
    stop = asyncio.Event()

    async def hold() -> None:
        async with app.lifespan():
            ready.set()
            await stop.wait()

    task = asyncio.create_task(hold())
    ready_wait = asyncio.create_task(ready.wait())
    await asyncio.wait({task, ready_wait}, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        ready_wait.cancel()
        task.result()  # raises the startup error
    try:
        yield
    finally:
        stop.set()
        # Bounded, so an app whose shutdown hangs fails its test with this message instead of holding the run.
        done, _ = await asyncio.wait({task}, timeout=60)
        assert done, "the app's lifespan did not shut down within 60 s"
        task.result()
