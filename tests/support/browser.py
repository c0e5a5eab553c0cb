"""Headless Debian Chromium driven by Playwright (no browser download: the system one is used)."""

from __future__ import annotations

import os
import shutil

from playwright.async_api import Browser, BrowserContext, Playwright

CHROMIUM = os.environ.get("PLMAIL_TEST_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"

# Without the background-networking flags Chromium keeps dialling Google on a closed network.
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


class SharedChromium:
    """The run's Chromium, launched when a test first needs it and again should it ever have crashed."""

    def __init__(self, playwright: Playwright) -> None:
        self._playwright = playwright
        self._browser: Browser | None = None

    async def get(self) -> Browser:
        if self._browser is None or not self._browser.is_connected():
            self._browser = await self._playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        return self._browser

    def contexts(self) -> list[BrowserContext]:
        return list(self._browser.contexts) if self._browser is not None and self._browser.is_connected() else []

    async def close(self) -> None:
        if self._browser is not None and self._browser.is_connected():
            await self._browser.close()
