"""A `plmail serve` process on the test database and a headless Chromium, for the browser tests.

One Chromium serves the whole run: each test gets contexts of its own (their own cookies, storage and service
workers), and the contexts a test opened are closed when it ends, so nothing of one test runs on into the next.
Launching Chromium costs a second or two on a quiet machine; per test and per module that added up."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Playwright, async_playwright, expect

from tests.support.browser import SharedChromium
from tests.support.pg import PgTestCluster
from tests.support.serve import ServeProcess

# How long an `expect` waits for its condition when the test names no time of its own (Playwright's default is 5 s).
# tools/test runs the browser modules two at a time, and on two cores a neighbour's page load can hold a render back
# for seconds. What is checked stays the same (a condition that never holds still fails); an `expect` whose time is
# the spec's figure names it (`timeout=`) and keeps it.
expect.set_options(timeout=15_000)


@pytest.fixture(scope="session")
async def _playwright() -> AsyncIterator[Playwright]:
    async with async_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="session")
async def shared_chromium(_playwright: Playwright) -> AsyncIterator[SharedChromium]:
    chromium = SharedChromium(_playwright)
    try:
        yield chromium
    finally:
        await chromium.close()


@pytest.fixture(scope="session")
async def full_chromium(_playwright: Playwright) -> AsyncIterator[SharedChromium]:
    """The whole browser, for what the headless shell lacks: its PDF viewer, notifications."""
    chromium = SharedChromium(_playwright, full=True)
    try:
        yield chromium
    finally:
        await chromium.close()


@pytest.fixture(autouse=True)
async def _close_the_tests_contexts(request: pytest.FixtureRequest) -> AsyncIterator[None]:
    """Close the browser contexts a test opened (its pages' scripts and streams end with it)."""
    browsers: list[SharedChromium] = [request.getfixturevalue(name) for name in ("shared_chromium", "full_chromium")
                                      if name in request.fixturenames]
    before = {context for chromium in browsers for context in chromium.contexts()}
    yield
    for chromium in browsers:
        for context in chromium.contexts():
            if context not in before:
                await context.close()


@pytest.fixture
async def browser(shared_chromium: SharedChromium) -> Browser:
    return await shared_chromium.get()


@pytest.fixture
def serve(tmp_path: Path, database_url: str) -> Iterator[ServeProcess]:
    """Its own data directory: a test may also open `services` (whose data directory is tmp_path/data)."""
    process = ServeProcess(tmp_path / "serve", database_url=database_url).start()
    try:
        process.wait_healthy()
        yield process
    finally:
        process.terminate()


@pytest.fixture(scope="module")
def module_database(pg: PgTestCluster, migrated_template: str) -> Iterator[str]:
    """The database of a browser module's shared world: one server, database and browser for all its tests."""
    with pg.template_copy() as dsn:
        yield dsn


# The daily-UI modules' world (one server, database and browser per module), found here by those modules' tests.
from tests.e2e.daily_ui import world  # noqa: E402,F401
