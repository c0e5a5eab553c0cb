"""Gmail's keyboard shortcuts in headless Chromium, one test per key, never inside a field or the composer, and
the undo toast they share with the toolbar (tests/e2e/daily_ui.py's world: one server and browser for the module)."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from tests.e2e.daily_ui import World, inbox_with

pytestmark = pytest.mark.browser


async def test_shortcut_j_and_k_move_through_the_list(world: World) -> None:
    page = await inbox_with(world, "Cursor test")
    rows = page.locator("li.thread")
    await page.keyboard.press("j")
    await expect(rows.nth(0)).to_have_class(re.compile(r"\bcursor\b"))
    await page.keyboard.press("j")
    await expect(rows.nth(1)).to_have_class(re.compile(r"\bcursor\b"))
    await expect(rows.nth(0)).not_to_have_class(re.compile(r"\bcursor\b"))
    await page.keyboard.press("k")
    await expect(rows.nth(0)).to_have_class(re.compile(r"\bcursor\b"))
    await page.context.close()


@pytest.mark.parametrize("key", ["o", "Enter"])
async def test_shortcut_o_and_enter_open_the_conversation(world: World, key: str) -> None:
    page = await inbox_with(world, f"Open with {key}")
    await page.keyboard.press("j")
    await page.keyboard.press(key)
    await expect(page.get_by_role("heading", name=f"Open with {key}")).to_be_visible()
    await page.context.close()


async def test_shortcut_u_goes_back_to_the_list(world: World) -> None:
    page = await world.page()
    await page.goto(world.base + f"/thread/{world.quoted_thread}")
    await page.keyboard.press("u")
    await expect(page.get_by_role("heading", name="Inbox")).to_be_visible()
    await page.context.close()


@pytest.mark.parametrize(("key", "said", "where"), [
    ("e", "Conversation archived.", "archive"), ("#", "Conversation moved to the trash.", "trash"),
    ("!", "Conversation marked as spam.", "spam")])
async def test_shortcuts_e_hash_and_bang_move_the_conversation_with_an_undo_toast(
        world: World, key: str, said: str, where: str) -> None:
    subject = f"Moved by {key}"
    page = await inbox_with(world, subject)
    await page.keyboard.press("j")
    await page.keyboard.type(key)
    toast = page.get_by_role("status").filter(has_text=said)
    await expect(toast).to_be_visible()
    await expect(page.locator("li.thread", has_text=subject)).to_have_count(0)
    labels = await world.services.db.fetch(
        "SELECT l.role FROM thread_label tl JOIN label l ON l.id = tl.label_id JOIN message_thread t "
        "ON t.id = tl.thread_id WHERE t.subject = $1", subject)
    assert {r["role"] for r in labels} == {where}
    assert "toast=" not in page.url  # a reload does not show the toast again
    await page.context.close()


async def test_shortcut_z_and_the_undo_button_put_the_conversation_back(world: World) -> None:
    page = await inbox_with(world, "Undo me by z")
    await page.keyboard.press("j")
    await page.keyboard.press("e")
    await expect(page.get_by_role("status").filter(has_text="Conversation archived.")).to_be_visible()
    await page.wait_for_load_state("load")  # the toast is in the HTML before the scripts that hear z have run
    await page.keyboard.press("z")
    await expect(page.get_by_role("status").filter(has_text="Action undone.")).to_be_visible()
    await expect(page.locator("li.thread", has_text="Undo me by z")).to_have_count(1)
    # The toolbar and the Undo button do the same.
    await page.get_by_role("checkbox", name=re.compile("Select Undo me by z")).check()
    await page.get_by_role("toolbar").get_by_role("button", name="Archive").click()
    toast = page.get_by_role("status").filter(has_text="Conversation archived.")
    await toast.get_by_role("button", name="Undo").click()
    await expect(page.locator("li.thread", has_text="Undo me by z")).to_have_count(1)
    held = await world.services.db.fetchval(
        "SELECT count(*) FROM provider_change c JOIN message m ON m.id = c.message_id "
        "WHERE c.done_at IS NULL AND m.subject = 'Undo me by z'")
    assert held == 0  # what was waiting for the provider was withdrawn
    await page.context.close()


async def test_the_toast_goes_after_ten_seconds(world: World) -> None:
    page = await inbox_with(world, "Toast lifetime")
    await page.clock.install()
    await page.keyboard.press("j")
    await page.keyboard.press("e")
    toast = page.get_by_role("status").filter(has_text="Conversation archived.")
    await expect(toast).to_be_visible()
    await page.wait_for_load_state("load")  # the toast's timer starts with the page's scripts
    await page.clock.run_for(9_000)
    await expect(toast).to_be_visible()
    await page.clock.run_for(1_500)
    await expect(toast).to_have_count(0)
    await page.context.close()


async def test_shortcut_s_stars_and_unstars(world: World) -> None:
    page = await inbox_with(world, "Star me")
    row = page.locator("li.thread", has_text="Star me")
    await page.keyboard.press("j")
    await page.keyboard.press("s")
    await expect(row.locator(".star")).to_have_count(1)
    await page.wait_for_load_state("domcontentloaded")  # s posted the list's form: its keys work once the page is up
    await page.keyboard.press("j")
    await page.keyboard.press("s")
    await expect(row.locator(".star")).to_have_count(0)
    await page.context.close()


async def test_shortcut_x_selects_the_row(world: World) -> None:
    page = await inbox_with(world, "Select me")
    await page.keyboard.press("j")
    await page.keyboard.press("x")
    await expect(page.get_by_role("checkbox", name=re.compile("Select Select me"))).to_be_checked()
    await page.keyboard.press("x")
    await expect(page.get_by_role("checkbox", name=re.compile("Select Select me"))).not_to_be_checked()
    await page.context.close()


async def test_shortcuts_shift_i_and_shift_u_mark_read_and_unread(world: World) -> None:
    page = await inbox_with(world, "Read me")
    row = page.locator("li.thread", has_text="Read me")
    await expect(row).to_have_class(re.compile(r"\bunread\b"))
    await page.keyboard.press("j")
    await page.keyboard.press("Shift+I")
    await expect(row).not_to_have_class(re.compile(r"\bunread\b"))
    await page.wait_for_load_state("domcontentloaded")  # I posted the list's form: its keys work once the page is up
    await page.keyboard.press("j")
    await page.keyboard.press("Shift+U")
    await expect(row).to_have_class(re.compile(r"\bunread\b"))
    await page.context.close()


@pytest.mark.parametrize(("key", "field"), [("l", "label_id"), ("b", "snooze")])
async def test_shortcuts_l_and_b_open_the_label_and_snooze_choices(world: World, key: str, field: str) -> None:
    page = await inbox_with(world, f"Choose with {key}")
    await page.keyboard.press("j")
    await page.keyboard.press(key)
    assert await page.evaluate("document.activeElement.name") == field
    await expect(page.get_by_role("checkbox", name=re.compile(f"Select Choose with {key}"))).to_be_checked()
    await page.context.close()


async def test_shortcut_slash_focuses_the_search_box(world: World) -> None:
    page = await world.page()
    await page.goto(world.base + "/")
    await page.keyboard.press("/")
    assert await page.evaluate("document.activeElement.name") == "q"
    await page.context.close()


@pytest.mark.parametrize(("keys", "url", "heading"), [
    ("g i", r"/$", "Inbox"), ("g s", r"/starred$", "Starred"), ("g a", r"/all$", "All mail"),
    ("g t", r"/label/\d+$", "Sent"), ("g d", r"/label/\d+$", "Drafts")])
async def test_shortcuts_g_go_to_inbox_starred_sent_drafts(world: World, keys: str, url: str,
                                                            heading: str | None) -> None:
    page = await world.page()
    await page.goto(world.base + "/labels")
    for key in keys.split():
        await page.keyboard.press(key)
    await expect(page).to_have_url(re.compile(url))
    if heading:
        await expect(page.get_by_role("heading", name=heading, exact=True)).to_be_visible()
    await page.context.close()


async def test_shortcut_question_mark_shows_the_list(world: World) -> None:
    page = await world.page()
    await page.goto(world.base + "/")
    await page.keyboard.type("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    await expect(dialog).to_be_visible()
    await expect(dialog).to_contain_text("Go to the inbox")
    await page.keyboard.press("Escape")
    await expect(dialog).to_be_hidden()
    await page.context.close()


async def test_no_shortcut_fires_in_the_search_box_or_the_composer(world: World) -> None:
    page = await inbox_with(world, "Typing is not a command")
    await page.keyboard.press("j")
    box = page.get_by_role("searchbox", name="Search mail")
    await box.click()
    await page.keyboard.type("e#!sxj")
    await expect(box).to_have_value("e#!sxj")
    await expect(page.locator("li.thread", has_text="Typing is not a command")).to_have_count(1)
    assert page.url.endswith("/")
    await page.goto(world.base + "/compose")
    subject = page.get_by_label("Subject")
    await subject.click()
    await page.keyboard.type("g i e u?")
    await expect(subject).to_have_value("g i e u?")
    assert "/compose" in page.url
    await expect(page.get_by_role("dialog", name="Keyboard shortcuts")).to_be_hidden()
    await page.context.close()


async def test_shortcuts_can_be_switched_off(world: World) -> None:
    page = await world.page()
    await page.goto(world.base + "/settings")
    await page.get_by_label("Keyboard shortcuts (press ? for the list)").uncheck()
    async with page.expect_navigation():  # the setting is saved before the next page is asked for
        await page.locator("#appearance").get_by_role("button", name="Save").click()
    await page.goto(world.base + "/labels")
    await page.keyboard.press("g")
    await page.keyboard.press("i")
    await page.wait_for_timeout(300)
    assert page.url.endswith("/labels")
    await page.goto(world.base + "/settings")
    await page.get_by_label("Keyboard shortcuts (press ? for the list)").check()
    async with page.expect_navigation():
        await page.locator("#appearance").get_by_role("button", name="Save").click()
    await page.context.close()
