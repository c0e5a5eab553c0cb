"""Headless Debian Chromium driven by Playwright (no browser download: the system one is used)."""

from __future__ import annotations

import os
import shutil

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
