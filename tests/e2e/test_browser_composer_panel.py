"""The composer as a panel (issue 32) in headless Chromium against `plmail serve`, Dovecot and the suite's SMTP
server: two panels opened from the inbox and docked over it, one minimised and kept as a draft while the other goes
by Ctrl+Enter; recipients as chips (Enter, comma, Backspace, completion, avatars); a file dropped on the panel as a
chip with upload progress, then sent; Esc minimises; the whole screen on a phone. Screenshots at 1366 and 390 px,
light and dark, go to the test output for a person to look at."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, Route, expect

from tests.e2e.daily_ui import AXE, OUTPUT
from tests.e2e.test_browser_compose import Mailer, field_value, mailer, signed_in
from tests.support.dovecot import dovecot, dovecot_user
from tests.support.smtp import smtp, smtp_server

__all__ = ["dovecot", "dovecot_user", "mailer", "smtp", "smtp_server"]

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1366, "height": 800}
PHONE = {"width": 390, "height": 844}


async def shot(page: Page, name: str) -> None:
    OUTPUT.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=OUTPUT / f"{name}.png")


async def axe_finds_nothing_in_the_panels(page: Page) -> None:
    """axe-core over the docked panels alone (the list under them is not the composer's), any impact."""
    assert AXE.exists(), f"axe-core is missing at {AXE}: tools/test installs it from the npm registry"
    await page.evaluate(AXE.read_text())  # through DevTools, which the page's CSP does not govern
    result = await page.evaluate("axe.run({include: [['[data-compose-dock]']]}, {resultTypes: ['violations']})")
    found = [f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes'][:3]]}" for v in result["violations"]]
    assert not found, "\n".join(found)


async def open_panel(page: Page) -> Any:
    """Compose in the sidebar: one more panel in the dock; the newest is the last."""
    before = await page.locator("[data-compose-window]").count()
    await page.get_by_role("navigation", name="Main navigation").get_by_role("link", name="Compose").click()
    panels = page.locator("[data-compose-window]")
    await expect(panels).to_have_count(before + 1)
    panel = panels.nth(before)
    await expect(panel.locator("input[name=to]")).to_be_focused()
    await expect(panel.locator("trix-editor")).to_be_visible()
    return panel


async def draft_with_subject(mailer: Mailer, subject: str, timeout: float = 15.0) -> str:
    """The Message-ID of the draft plmail holds with this subject, once autosave has written it."""
    db = mailer.out.services.db
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        found = await db.fetchval("SELECT rfc_message_id FROM message WHERE account_id = $1 AND subject = $2"
                                  " AND (flags ? '$draft' OR flags ? '\\Draft')", mailer.out.account_id, subject)
        if found:
            return str(found)
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"no draft {subject!r}")
        await asyncio.sleep(0.2)


async def test_two_panels_docked_over_the_inbox_one_minimised_stays_a_draft_the_other_goes_by_ctrl_enter(
    mailer: Mailer, browser: Browser
) -> None:
    page = await signed_in(browser, mailer, viewport=DESKTOP)
    first = await open_panel(page)
    await page.keyboard.type("bea@example.net")
    await page.keyboard.press("Enter")
    await first.locator("input[name=subject]").fill("First panel")
    await expect(first.get_by_role("heading", name="First panel")).to_be_visible()  # the title follows the subject
    await first.locator("trix-editor").click()
    await page.keyboard.type("This one stays a draft.")

    second = await open_panel(page)
    await page.keyboard.type("carl@example.com,")
    await second.locator("input[name=subject]").fill("Second panel")
    await second.locator("trix-editor").click()
    await page.keyboard.type("This one goes now.")

    # Docked bottom right over the list, side by side, the newer to the left; the inbox is still the page.
    await expect(page.get_by_role("heading", name="Inbox")).to_be_visible()
    assert page.url == mailer.url + "/"
    one, two = await first.bounding_box(), await second.bounding_box()
    assert one is not None and two is not None
    assert DESKTOP["width"] - 40 <= one["x"] + one["width"] <= DESKTOP["width"]
    for box in (one, two):
        assert abs(box["y"] + box["height"] - DESKTOP["height"]) <= 2  # standing on the window's bottom edge
    assert two["x"] + two["width"] <= one["x"]
    await shot(page, "composer-two-panels-1366-light")
    await axe_finds_nothing_in_the_panels(page)

    await first.get_by_role("button", name="Minimise").click()
    await expect(first.locator("trix-editor")).to_be_hidden()
    await expect(first.get_by_role("button", name="Restore")).to_have_attribute("aria-expanded", "false")
    first_draft = await draft_with_subject(mailer, "First panel")  # autosaved while it was open

    await second.locator("trix-editor").click()
    await page.keyboard.press("Control+Enter")
    toast = page.locator(".compose-toasts .toast")
    await expect(toast).to_contain_text("Sent", timeout=20_000)
    await expect(page.locator("[data-compose-window]:visible")).to_have_count(1)  # the sent one's panel went
    [received] = mailer.out.smtp.wait_for(1, timeout=10)
    assert received.rcpt_to == ("carl@example.com",) and received.message["Subject"] == "Second panel"
    await shot(page, "composer-sent-toast-minimised-1366-light")

    # The other is still the draft it was, here and at Dovecot; closing it keeps it.
    mailer.wait_for_folder("Drafts", lambda ids: first_draft in ids)
    await first.get_by_role("button", name="Restore").click()
    await expect(first.locator("trix-editor")).to_contain_text("This one stays a draft.")
    await first.get_by_role("button", name="Save and close").click()
    await expect(page.locator("[data-compose-window]:visible")).to_have_count(0)
    await expect(page.locator(".compose-toasts")).to_contain_text("Draft saved")
    assert await draft_with_subject(mailer, "First panel") == first_draft
    assert len(mailer.out.smtp.received) == 1


async def test_recipients_are_chips_made_by_enter_comma_and_completion_and_removed_by_backspace_esc_minimises(
    mailer: Mailer, browser: Browser
) -> None:
    page = await signed_in(browser, mailer, viewport=DESKTOP, color_scheme="dark")
    panel = await open_panel(page)
    to = panel.locator("input[name=to]")
    labels = panel.locator("[data-recipients=to] .chip-label")
    await to.press_sequentially("bea@example.net")
    await to.press("Enter")  # Enter makes a chip, and sends nothing
    await to.press_sequentially("dan@example.org,")  # so does a comma
    await expect(labels).to_have_text(["bea@example.net", "dan@example.org"])
    await expect(to).to_have_value("")
    await to.press("Backspace")  # in the empty field: the last chip goes
    await expect(labels).to_have_text(["bea@example.net"])

    await to.press_sequentially("Cl", delay=30)  # completion from the addresses plmail knows, with avatars
    option = panel.locator("[role=option]", has_text="Carl Clausen")
    await expect(option).to_be_visible()
    await expect(option.locator(".avatar")).to_have_text("CC")
    await shot(page, "composer-completion-1366-dark")
    hue = "el => el.style.getPropertyValue('--avatar-hue')"
    suggested_hue = await option.locator(".avatar").evaluate(hue)
    await to.press("Enter")
    await expect(labels).to_have_text(["bea@example.net", "Carl Clausen"])
    carl = panel.locator("[data-recipients=to] .recipient").nth(1)
    await expect(carl.locator(".avatar")).to_have_text("CC")
    assert await carl.locator(".avatar").evaluate(hue) == suggested_hue  # the same address, the same colour
    await to.press_sequentially("not an address")
    await to.press("Enter")
    invalid = panel.locator("[data-recipients=to] .recipient.invalid")
    await expect(invalid).to_have_count(1)  # marked, not dropped: the person sees what to correct
    await invalid.get_by_role("button", name="Remove not an address").click()
    await expect(labels).to_have_text(["bea@example.net", "Carl Clausen"])
    assert await field_value(panel, "to") == 'bea@example.net, "Carl Clausen" <carl@example.com>'

    await panel.get_by_role("button", name="Cc", exact=True).click()  # Cc waits behind its button in a panel
    await expect(panel.locator("input[name=cc]")).to_be_focused()
    await page.keyboard.type("dan@example.org")
    await panel.locator("input[name=subject]").fill("Chips")
    await panel.locator("trix-editor").click()
    await page.keyboard.type("Esc folds me down.")
    await shot(page, "composer-chips-1366-dark")
    await axe_finds_nothing_in_the_panels(page)
    await page.keyboard.press("Escape")  # Esc minimises, keeping everything
    await expect(panel).to_have_class(re.compile(r"\bminimised\b"))
    await expect(panel.locator("trix-editor")).to_be_hidden()
    await expect(panel.get_by_role("button", name="Restore")).to_be_focused()
    await panel.get_by_role("button", name="Restore").press("Enter")
    await expect(panel.locator("trix-editor")).to_contain_text("Esc folds me down.")
    await panel.locator("trix-editor").click()
    await page.keyboard.press("Control+Enter")
    await expect(page.locator(".compose-toasts .toast")).to_contain_text("Sent", timeout=20_000)
    [received] = mailer.out.smtp.wait_for(1, timeout=10)
    assert set(received.rcpt_to) == {"bea@example.net", "carl@example.com", "dan@example.org"}
    assert "dan@example.org" in received.message["Cc"]


async def test_a_file_dropped_on_the_panel_is_a_chip_with_progress_and_goes_with_the_message(
    mailer: Mailer, browser: Browser, tmp_path: Path
) -> None:
    # The upload is held back with a route, which the service worker's fetches would slip past.
    page = await signed_in(browser, mailer, viewport=DESKTOP, service_workers="block")
    panel = await open_panel(page)
    await page.keyboard.type("bea@example.net")
    await panel.locator("input[name=subject]").fill("The plan")
    await panel.locator("trix-editor").click()
    await page.keyboard.type("Attached, as promised.")

    release = asyncio.Event()

    async def hold_uploads(route: Route) -> None:  # the upload stays on its way until the test has seen it
        if b'filename="plan.txt"' in (route.request.post_data_buffer or b""):
            await release.wait()
        await route.continue_()

    await page.route("**/compose", hold_uploads)
    await page.evaluate("""() => {
        const data = new DataTransfer();
        data.items.add(new File(["The plan, step by step.\\n"], "plan.txt", {type: "text/plain"}));
        const at = document.querySelector("[data-compose-window] .compose-bar");
        for (const type of ["dragenter", "dragover"]) {
            at.dispatchEvent(new DragEvent(type, {dataTransfer: data, bubbles: true, cancelable: true}));
        }
        window.plmailDrop = data;
    }""")
    await expect(panel.locator(".drop-overlay")).to_be_visible()  # the panel says where the file goes
    await shot(page, "composer-drop-1366-light")
    await page.evaluate("""() => document.querySelector("[data-compose-window] .compose-bar").dispatchEvent(
        new DragEvent("drop", {dataTransfer: window.plmailDrop, bubbles: true, cancelable: true}))""")
    uploading = panel.locator("[data-uploads] li", has_text="plan.txt")
    await expect(uploading.locator("progress")).to_be_visible()  # a chip with its progress while it uploads
    await expect(panel.locator(".drop-overlay")).to_be_hidden()
    await shot(page, "composer-upload-progress-1366-light")
    release.set()
    await expect(panel.locator("[data-files] li", has_text="plan.txt")).to_be_visible()
    await expect(uploading).to_have_count(0)
    await page.keyboard.press("Control+Enter")
    await expect(page.locator(".compose-toasts .toast")).to_contain_text("Sent", timeout=20_000)
    [received] = mailer.out.smtp.wait_for(1, timeout=10)
    assert [p.get_filename() for p in received.message.walk() if p.get_filename()] == ["plan.txt"]
    assert received.message["Subject"] == "The plan"
    await page.goto(mailer.url + "/compose")  # the page of its own, for the screenshot beside the panel's
    await expect(page.locator("trix-editor")).to_be_visible()
    await shot(page, "composer-page-1366-light")


@pytest.mark.parametrize("scheme", ["light", "dark"])
async def test_on_a_phone_the_panel_is_the_whole_screen(mailer: Mailer, browser: Browser, scheme: str) -> None:
    page = await signed_in(browser, mailer, viewport=PHONE, is_mobile=True, has_touch=True, color_scheme=scheme)
    # on a phone Compose is in the top bar (the sidebar's own button is hidden in the drawer)
    await page.get_by_role("banner").get_by_role("link", name="Compose").tap()
    panel = page.locator("[data-compose-window]")
    await expect(panel.locator("trix-editor")).to_be_visible()
    box = await panel.bounding_box()
    assert box is not None and box["x"] == 0 and box["y"] == 0
    assert box["width"] == PHONE["width"] and box["height"] == PHONE["height"]
    assert await page.evaluate("document.scrollingElement.scrollWidth") <= PHONE["width"]
    await panel.locator("input[name=to]").press_sequentially("bea@example.net,")
    await panel.locator("input[name=subject]").fill("From my phone")
    await shot(page, f"composer-panel-390-{scheme}")
    await panel.get_by_role("link", name="Open as a full page").tap()  # pop out: saved, then opened as its page
    await expect(page).to_have_url(re.compile(r"/compose\?draft=\d+$"))
    await expect(page.locator("input[name=subject]")).to_have_value("From my phone")
    await expect(page.locator("[data-recipients=to] .chip-label")).to_have_text(["bea@example.net"])
    assert await page.evaluate("document.scrollingElement.scrollWidth") <= PHONE["width"]
    await shot(page, f"composer-page-390-{scheme}")

