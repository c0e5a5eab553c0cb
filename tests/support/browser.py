"""Headless Debian Chromium driven by Playwright (no browser download: the system one is used)."""

from __future__ import annotations

import os
import shutil

from playwright.async_api import Browser, BrowserContext, Playwright

CHROMIUM = os.environ.get("PLMAIL_TEST_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
# Debian's "old headless" shell: the same Blink without the full browser around it, which cost the browser tests a
# fifth more CPU (a screenshot and axe pass over every page: 141 s of CPU with the full browser, 115 s with this).
# It has no PDF viewer and shows no notifications; the tests that need those ask for `full_chromium`.
HEADLESS_SHELL = os.environ.get("PLMAIL_TEST_HEADLESS_SHELL") or shutil.which("chromium-headless-shell")

# Without the background-networking flags Chromium keeps dialling Google on a closed network.
_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
CHROMIUM_ARGS = ["--headless=new", *_ARGS]


class SharedChromium:
    """The run's Chromium, launched when a test first needs it and again should it ever have crashed: the headless
    shell where it is installed, or with `full` (or without the shell) the whole browser."""

    def __init__(self, playwright: Playwright, *, full: bool = False) -> None:
        self._playwright = playwright
        self._browser: Browser | None = None
        self._full = full or HEADLESS_SHELL is None

    async def get(self) -> Browser:
        if self._browser is None or not self._browser.is_connected():
            if self._full:
                self._browser = await self._playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            else:
                self._browser = await self._playwright.chromium.launch(executable_path=HEADLESS_SHELL, args=_ARGS)
        return self._browser

    def contexts(self) -> list[BrowserContext]:
        return list(self._browser.contexts) if self._browser is not None and self._browser.is_connected() else []

    async def close(self) -> None:
        if self._browser is not None and self._browser.is_connected():
            await self._browser.close()
