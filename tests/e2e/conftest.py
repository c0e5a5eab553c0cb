"""A `plmail serve` process on the test database and a headless Chromium, for the browser tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, async_playwright

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS
from tests.support.pg import PgTestCluster
from tests.support.serve import ServeProcess


@pytest.fixture
def serve(tmp_path: Path, database_url: str) -> Iterator[ServeProcess]:
    """Its own data directory: a test may also open `services` (whose data directory is tmp_path/data)."""
    process = ServeProcess(tmp_path / "serve", database_url=database_url).start()
    try:
        process.wait_healthy()
        yield process
    finally:
        process.terminate()


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            await chromium.close()


@pytest.fixture(scope="module")
def module_database(pg: PgTestCluster, migrated_template: str) -> Iterator[str]:
    """The database of a browser module's shared world: one server, database and browser for all its tests."""
    with pg.template_copy() as dsn:
        yield dsn


# The daily-UI modules' world (one server, database and browser per module), found here by those modules' tests.
from tests.e2e.daily_ui import world  # noqa: E402,F401
