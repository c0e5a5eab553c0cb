"""First run in a real browser: setup, inbox, the admin's worker check, sign out and back in."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Browser, expect

from tests.support.serve import ServeProcess

pytestmark = pytest.mark.browser


async def test_first_run_setup_inbox_worker_check_and_sign_in(serve: ServeProcess, browser: Browser) -> None:
    page = await browser.new_page(locale="de-DE")
    await page.goto(serve.url + "/")
    await expect(page).to_have_url(re.compile(r"/setup$"))
    await expect(page.get_by_role("heading", name="Willkommen bei plmail")).to_be_visible()  # German browser

    await page.get_by_label("Dein Name").fill("Ada")
    await page.get_by_label("E-Mail-Adresse").fill("ada@example.org")
    await page.get_by_label("Passwort wählen").fill("correct horse")
    await page.get_by_label("Sprache").select_option("de")
    time_zone = await page.get_by_label("Zeitzone").input_value()
    assert time_zone  # filled from the browser
    await page.get_by_role("button", name="Anlegen und anmelden").click()

    await expect(page.get_by_role("heading", name="Posteingang")).to_be_visible()
    sidebar = page.get_by_role("navigation", name="Hauptnavigation")
    for name in ("Posteingang", "Gesendet", "Entwürfe", "Papierkorb"):
        await expect(sidebar.get_by_role("link", name=name)).to_be_visible()
    await expect(page.get_by_text("Verbinde ein E-Mail-Konto")).to_be_visible()

    await sidebar.get_by_role("link", name="Administration").click()
    await expect(page.get_by_role("heading", name="Warteschlangen")).to_be_visible()
    await page.get_by_role("button", name="Worker prüfen").click()  # htmx swaps the panel in place
    # one answer per queue: ingest, ingest_backlog, enrich_live, enrich, enrich_backlog, release and send
    await expect(page.get_by_text(re.compile("beantwortet von"))).to_have_count(7, timeout=20_000)
    assert page.url.endswith("/admin")

    await page.get_by_role("button", name="Abmelden").click()
    await expect(page).to_have_url(re.compile(r"/login$"))
    await page.get_by_label("E-Mail-Adresse").fill("ada@example.org")
    await page.get_by_label("Passwort").fill("wrong password")
    await page.get_by_role("button", name="Anmelden").click()
    await expect(page.get_by_role("alert")).to_have_text("E-Mail-Adresse oder Passwort ist falsch.")
    await page.get_by_label("Passwort").fill("correct horse")
    await page.get_by_role("button", name="Anmelden").click()
    await expect(page.get_by_role("heading", name="Posteingang")).to_be_visible()
