"""A web UI to live in all day, in headless Chromium: no sideways scroll from 320 to 1920 px and no axe-core
finding of any impact, in light and dark (screenshots in test-output/ui/), collapsed read messages and folded
quotes, Show original, Print, labels as chips and dots, settings, search type-ahead, the PWA manifest, and German
pages without an English word. One server, one database and one browser for the module (tests/e2e/daily_ui.py);
the keyboard shortcuts and the undo toast are in test_browser_shortcuts.py."""

from __future__ import annotations

import asyncio
import re

import httpx
import pytest
from babel.messages.pofile import read_po
from playwright.async_api import Page, expect

from plmail.web.i18n import LOCALE_DIR
from tests.e2e.daily_ui import AXE, OUTPUT, WIDTHS, World

pytestmark = pytest.mark.browser



def _main_pages(world: World) -> list[tuple[str, str]]:
    return [
        ("inbox", "/"), ("label", f"/label/{world.travel}"), ("search", "/search?q=garden"),
        ("thread", f"/thread/{world.quoted_thread}"), ("compose", "/compose"),
        ("calendar-day", "/calendar?view=day"), ("calendar-week", "/calendar?view=week"),
        ("calendar-month", "/calendar?view=month"), ("calendar-agenda", "/calendar?view=agenda"),
        ("filters", "/rules"), ("filter-edit", "/rules/new"), ("labels", "/labels"), ("settings", "/settings"),
        ("accounts", "/accounts"), ("admin", "/admin"),
        # issue 32: settings' sections, the style guide with every component in light and dark
        ("settings-security", "/settings/security"), ("styleguide", "/_styleguide"),
        ("settings-sending", "/settings/sending"), ("settings-sorting", "/settings/sorting"),
        ("calendar-sharing", "/calendar/sharing"), ("settings-notifications", "/settings/notifications"),
        ("settings-devices", "/settings/devices"), ("settings-sessions", "/settings/sessions"),
        ("settings-two-factor", "/settings/two-factor"),
    ]


def _states(world: World) -> list[tuple[str, str]]:
    """Pages with something open on them (see _open_a_state)."""
    return [("inbox-selected", "/"), ("thread-snooze", f"/thread/{world.quoted_thread}"), ("composer-panel", "/")]


# The innermost elements reaching past the right edge, to say what made a page too wide.
_WIDER_THAN_THE_VIEWPORT = """() => Array.from(document.querySelectorAll('body *'))
    .filter(e => {
        for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
            if (/(auto|scroll|hidden)/.test(getComputedStyle(a).overflowX)) return false;  // scrolls in its pane
        }
        return e.getBoundingClientRect().right > window.innerWidth + 1 && !Array.from(e.children).some(
            c => c.getBoundingClientRect().right > window.innerWidth + 1);
    })
    .slice(0, 4).map(e => e.tagName.toLowerCase() + (e.className ? '.' + String(e.className).split(' ')[0] : '')
        + (e.name ? '[' + e.name + ']' : '') + ' in ' + (e.parentElement.className || e.parentElement.tagName)
        + ' ' + Math.round(e.getBoundingClientRect().right))"""


# A colour scheme switched on a loaded page eases its buttons' colours over (--duration-fast): seen when done.
_TRANSITIONS_DONE = """() => Promise.all(document.getAnimations().filter(a => a instanceof CSSTransition)
    .map(a => a.finished.catch(() => null)))"""


# After a resize: the window has the width asked for and two frames went by, so the resize listeners ran and the
# layout is the one a page loaded at this width gets.
_RESIZED_AND_LAID_OUT = """width => new Promise(done => {
    const frames = () => requestAnimationFrame(() => requestAnimationFrame(() => done(window.innerWidth)));
    if (window.innerWidth === width) frames(); else addEventListener('resize', frames, {once: true});
})"""


# -- layout -------------------------------------------------------------------------------------------------


async def _open_a_state(page: Page, name: str) -> None:
    """The states a page is also seen in (issue 32): a row selected, the snooze menu open, a composer docked."""
    if name == "inbox-selected":
        await page.locator("li.thread input[name=thread_ids]").first.check()
        await expect(page.get_by_role("toolbar", name="Actions for the selected conversations")
                     .get_by_role("button", name="Archive")).to_be_visible()
    elif name == "thread-snooze":
        await page.locator("form.thread-actions .snooze-menu > summary").click()
        await expect(page.locator("form.thread-actions .snooze-menu .menu")).to_be_visible()
    elif name == "composer-panel":
        await page.locator("[data-compose-panel]:visible").first.click()
        await expect(page.locator("[data-compose-window] input[name=to]")).to_be_focused()
        await expect(page.locator("[data-compose-window] trix-editor")).to_be_visible()


async def test_every_page_fits_and_axe_finds_nothing_of_any_impact_from_320_to_1920_px_light_and_dark(
    world: World
) -> None:
    """No sideways scroll and not one axe-core violation, minor to critical, on each page and state at each width
    in light and then dark; a screenshot of each for a person to look at. Two pages at a time (the server renders
    one while Chromium checks the other); each page is loaded once, its state opened and axe injected once, and then
    seen at every width, the window resized as a person drags it (the layout is CSS media queries; the one script
    that measures the window, pages.js's scrollable tables, listens to resize), in light and then in dark, switched
    as the system setting does. Loading it again per width cost a third of the test's time."""
    assert AXE.exists(), f"axe-core is missing at {AXE}: tools/test installs it from the npm registry"
    OUTPUT.mkdir(parents=True, exist_ok=True)
    axe = AXE.read_text()
    too_wide: list[str] = []
    found: list[str] = []
    checked: list[tuple[str, int, str]] = []
    waiting = [*_main_pages(world), *_states(world)]

    async def at(width: int, page: Page, name: str, shade: str) -> None:
        await page.set_viewport_size({"width": width, "height": 1080 if width >= 1920 else 800})
        await page.evaluate(_RESIZED_AND_LAID_OUT, width)
        scroll_width = await page.evaluate("document.documentElement.scrollWidth")
        if scroll_width > width:
            culprits = await page.evaluate(_WIDER_THAN_THE_VIEWPORT)
            too_wide.append(f"{name} at {width} px ({shade}) is {scroll_width} px wide: {culprits}")
        await page.screenshot(path=OUTPUT / f"{name}-{width}-{shade}.png")
        result = await page.evaluate("axe.run(document, {resultTypes: ['violations']})")
        for violation in result["violations"]:  # of any impact: minor, moderate, serious, critical
            targets = [n["target"] for n in violation["nodes"][:3]]
            found.append(f"{name} {width} {shade}: {violation['id']} ({violation['impact']}) {targets}")
        checked.append((name, width, shade))

    async def one_tab() -> None:
        page = await world.page(width=WIDTHS[0], height=800)
        while waiting:
            name, path = waiting.pop(0)
            await page.set_viewport_size({"width": WIDTHS[0], "height": 800})
            await page.emulate_media(color_scheme="light")
            answer = await page.goto(world.base + path)
            assert answer is not None and answer.ok, f"{name}: {answer and answer.status}"  # the page, not an error
            await _open_a_state(page, name)
            # Through the DevTools protocol, which the page's Content-Security-Policy does not govern (a <script>
            # tag with axe inline would be refused, as any inline script is): the page stays as users get it.
            await page.evaluate(axe)
            for shade in ("light", "dark"):
                if shade == "dark":
                    await page.emulate_media(color_scheme="dark")
                    await page.evaluate(_TRANSITIONS_DONE)
                for width in WIDTHS:
                    await at(width, page, name, shade)
        await page.context.close()

    await asyncio.gather(one_tab(), one_tab())
    pages = len(_main_pages(world)) + len(_states(world))
    assert len(checked) == len(set(checked)) == pages * len(WIDTHS) * 2  # every page, width and shade, once
    assert not too_wide and not found, "\n".join(sorted(too_wide) + sorted(found))


async def test_at_phone_width_the_list_comes_first_and_the_sidebar_opens_from_the_menu(world: World) -> None:
    page = await world.page(width=390, height=844)
    await page.goto(world.base + "/")
    sidebar = page.get_by_role("navigation", name="Main navigation")
    await expect(sidebar).to_be_hidden()
    first_row = page.locator("li.thread").first
    box = await first_row.bounding_box()
    assert box is not None and box["y"] < 844 / 2  # mail on the first screen, not the account trees
    # Two lines: sender (and time) above the subject and preview.
    sender = await first_row.locator(".sender").bounding_box()
    subject = await first_row.locator(".subject").bounding_box()
    assert sender is not None and subject is not None and subject["y"] > sender["y"] + sender["height"] - 2
    await page.get_by_role("button", name="Menu").click()
    await expect(sidebar).to_be_visible()
    await expect(sidebar.get_by_role("link", name="Travel")).to_be_visible()
    await page.keyboard.press("Escape")
    await expect(sidebar).to_be_hidden()
    # The toolbar's rarer actions fold into "More" (the toolbar shows once a row is selected, issue 32).
    bar = page.get_by_role("toolbar", name="Actions for the selected conversations")
    await expect(bar.get_by_role("button", name="Mark read")).to_be_hidden()
    await first_row.locator("input[name=thread_ids]").check()
    await expect(bar.get_by_role("button", name="Archive")).to_be_visible()
    await expect(bar.get_by_role("button", name="Mark read")).to_be_hidden()
    await bar.locator("summary", has_text="More").click()
    await expect(bar.get_by_role("button", name="Mark read")).to_be_visible()
    # The conversation's toolbar too: Archive, Delete and Spam stay, the rest is under More.
    await page.goto(world.base + f"/thread/{world.quoted_thread}")
    actions = page.get_by_role("toolbar", name="Conversation actions")
    await expect(actions.get_by_role("button", name="Archive")).to_be_visible()
    await expect(actions.get_by_role("button", name="Mark unread")).to_be_hidden()
    await actions.locator("summary", has_text="More").click()
    await expect(actions.get_by_role("button", name="Mark unread")).to_be_visible()
    assert await page.evaluate("document.documentElement.scrollWidth") <= 390
    await page.context.close()


async def test_the_month_calendar_fits_a_phone(world: World) -> None:
    page = await world.page(width=320)
    await page.goto(world.base + "/calendar?view=month")
    table = page.locator("table.month")
    box = await table.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 320
    await page.context.close()


# -- keyboard -----------------------------------------------------------------------------------------------


# -- conversations ------------------------------------------------------------------------------------------


async def test_six_messages_two_unread_show_two_open_and_four_one_line_rows(world: World) -> None:
    page = await world.page()
    await page.goto(world.base + f"/thread/{world.long_thread}")
    messages = page.locator("section.message")
    await expect(messages).to_have_count(6)
    await expect(page.locator("section.message:not(.collapsed) .message-full")).to_have_count(2)
    one_line = page.locator("section.message.collapsed")
    await expect(one_line).to_have_count(4)
    for i in range(4):
        row = one_line.nth(i).locator(".message-line")
        await expect(row).to_contain_text(f"Friend {i}")
        await expect(row).to_contain_text(f"Message {i} about the garden.")
        box = await row.bounding_box()
        assert box is not None and box["height"] < 40  # one line
    await one_line.nth(1).locator(".message-line").click()
    await expect(page.locator("#m" + (await messages.nth(1).get_attribute("data-message-id") or "") + "-body")
                 ).to_be_visible()
    await expect(page.locator("section.message.collapsed")).to_have_count(3)
    await page.context.close()


async def test_quotes_and_signatures_fold_and_show_original_has_headers_source_and_verdicts(world: World) -> None:
    page = await world.page()
    await page.goto(world.base + f"/thread/{world.quoted_thread}")
    body = page.locator("section.message .body.text")
    await expect(body.get_by_text("Here they are.")).to_be_visible()
    await expect(body.get_by_text("Can you send the numbers?")).to_be_hidden()
    await expect(body.get_by_text("Head of numbers")).to_be_hidden()
    await body.locator("details.quote summary").click()
    await expect(body.get_by_text("Can you send the numbers?")).to_be_visible()
    await page.locator("section.message .message-more summary").click()  # the message's own menu (issue 32)
    await page.get_by_role("link", name="Show original").click()
    await expect(page.get_by_role("heading", name="Original message")).to_be_visible()
    facts = page.locator("table.facts")
    for method in ("SPF", "DKIM", "DMARC"):
        await expect(facts.locator("tr", has_text=method)).to_contain_text("PASS")
    await expect(page.locator("table.headers")).to_contain_text("Authentication-Results")
    await expect(page.locator("pre.source")).to_contain_text("Message-ID: <quoted@x>")
    href = await page.get_by_role("link", name="Download the original").get_attribute("href")
    cookies = {c["name"]: c["value"] for c in await page.context.cookies()}
    download = httpx.get(world.base + (href or ""), cookies=cookies)
    assert download.status_code == 200 and download.headers["content-type"].startswith("message/rfc822")
    assert b"Message-ID: <quoted@x>" in download.content
    await page.context.close()


async def test_quotes_in_html_mail_fold_behind_the_ellipsis(world: World) -> None:
    page = await world.page()
    thread = await world.services.db.fetchval("SELECT id FROM message_thread WHERE subject = 'Menu for Friday'")
    await page.goto(world.base + f"/thread/{thread}")
    body = page.frame_locator("iframe.body")
    await expect(body.get_by_text("Soup and bread.")).to_be_visible()
    await expect(body.get_by_text("What do we eat?")).to_be_hidden()
    await page.get_by_role("button", name="Show quoted text").click()
    await expect(body.get_by_text("What do we eat?")).to_be_visible()
    await page.context.close()


async def test_print_shows_the_conversation_alone_with_every_message_open(world: World) -> None:
    page = await world.page()
    await page.goto(world.base + f"/thread/{world.long_thread}")
    await page.emulate_media(media="print")
    await expect(page.locator(".sidebar")).to_be_hidden()
    await expect(page.locator("form.thread-actions")).to_be_hidden()
    await expect(page.locator("section.message .message-full")).to_have_count(6)
    for i in range(6):
        await expect(page.get_by_text(f"Message {i} about the garden.").last).to_be_visible()
    await page.context.close()


# -- labels, settings, search, installable ------------------------------------------------------------------


async def test_labels_show_as_coloured_chips_and_sidebar_dots_nested_consistently(world: World) -> None:
    page = await world.page()
    await page.goto(world.base + "/")
    row = page.locator("li.thread", has_text="Train tickets to Hamburg")
    await expect(row.locator(".chip")).to_have_text(["Travel", "Travel/Trains"])
    assert await row.locator(".chip.blue").count() == 1
    colour = await row.locator(".chip.blue").evaluate("e => getComputedStyle(e).borderTopColor")
    assert colour == "rgb(26, 115, 232)"
    assert await row.locator(".chip", has_text="Inbox").count() == 0  # not the location labels
    sidebar = page.get_by_role("navigation", name="Main navigation")
    travel = sidebar.locator(f"a[data-label-id='{world.travel}']")
    assert await travel.locator(".dot").evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(26, 115, 232)"
    parent = await travel.locator(".name").bounding_box()
    child = await sidebar.locator(f"a[data-label-id='{world.trains}'] .name").bounding_box()
    inbox = await sidebar.locator(f"a[data-label-id='{world.inbox}'] .name").bounding_box()
    assert parent and child and inbox
    assert abs(parent["x"] - inbox["x"]) < 12  # a top-level label lines up with the system labels
    assert child["x"] > parent["x"] + 8  # a nested one is indented
    await page.goto(world.base + "/thread/" + str(await world.services.db.fetchval(
        "SELECT id FROM message_thread WHERE subject = 'Train tickets to Hamburg'")))
    await expect(page.locator(".conversation .chips .chip")).to_have_text(["Travel", "Travel/Trains"])
    await page.context.close()


async def test_settings_theme_clock_and_grouped_time_zones(world: World) -> None:
    page = await world.page()
    await page.goto(world.base + "/settings")
    zone = page.locator("select#time-zone")
    assert await zone.locator("optgroup[label=Europe] option[value='Europe/Berlin']").count() == 1
    await page.get_by_label("Find a time zone").fill("Tokyo")
    await expect(zone).to_have_value("Asia/Tokyo")
    await page.get_by_label("Find a time zone").fill("")
    await zone.select_option("Europe/Berlin")
    appearance = page.locator("#appearance")
    await appearance.get_by_label("Theme").select_option("dark")
    await appearance.get_by_label("Clock").select_option("12")
    await appearance.get_by_role("button", name="Save").click()
    await expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    background = await page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
    assert background == "rgb(22, 22, 24)"  # dark although the browser asked for light
    await world.fresh_thread("Clock check")
    await page.goto(world.base + "/")
    stamp = await page.locator("li.thread", has_text="Clock check").locator("time").inner_text()
    assert re.search(r"\b(AM|PM)\b", stamp), stamp
    await page.goto(world.base + "/settings")
    await appearance.get_by_label("Theme").select_option("system")
    await appearance.get_by_label("Clock").select_option("24")
    await appearance.get_by_role("button", name="Save").click()
    await page.goto(world.base + "/")
    stamp = await page.locator("li.thread", has_text="Clock check").locator("time").inner_text()
    assert re.fullmatch(r"\d{2}:\d{2}", stamp), stamp
    await page.context.close()


async def test_search_type_ahead_offers_operators_contacts_and_the_recent_searches(world: World) -> None:
    page = await world.page()
    await page.goto(world.base + "/")
    box = page.get_by_role("searchbox", name="Search mail")
    suggestions = page.locator("#search-suggestions li")
    await box.fill("")
    await box.press_sequentially("is:st", delay=30)
    await expect(suggestions.filter(has_text="is:starred")).to_have_count(1)
    await box.fill("")
    await box.press_sequentially("garden", delay=30)
    await box.press("Enter")
    await expect(page).to_have_url(re.compile(r"/search\?q=garden"))
    for word in ("train", "notes", "party"):
        box = page.get_by_role("searchbox", name="Search mail")
        await box.fill(word)
        await box.press("Enter")
        await expect(page).to_have_url(re.compile(f"q={word}"))
    box = page.get_by_role("searchbox", name="Search mail")
    await box.fill("")
    await box.focus()
    recent = page.locator("#search-suggestions li.recent")
    await expect(recent).to_have_text(["party", "notes", "train", "garden"])
    await page.context.close()


async def test_plmail_can_be_added_to_a_home_screen(world: World) -> None:
    page = await world.page(width=390)
    await page.goto(world.base + "/")
    href = await page.locator("link[rel=manifest]").get_attribute("href")
    manifest = httpx.get(world.base + (href or "")).json()
    assert manifest["display"] == "standalone" and manifest["start_url"] == "/"
    sizes = {icon["sizes"] for icon in manifest["icons"]}
    assert {"192x192", "512x512"} <= sizes
    for icon in manifest["icons"]:
        answer = httpx.get(world.base + icon["src"])
        assert answer.status_code == 200 and answer.headers["content-type"] == icon["type"]
    # Installable (issue 33): a service worker at the root scope, so the whole app works from the home screen.
    scope = await page.evaluate("navigator.serviceWorker.ready.then(function (r) { return r.scope; })")
    assert scope == world.base + "/"
    await page.context.close()


# -- filters ------------------------------------------------------------------------------------------------


async def test_filter_editor_lists_matches_reorders_and_shows_live_progress(world: World) -> None:
    page = await world.page()
    for name, word in (("Notes", "note"), ("Trips", "hamburg")):
        await page.goto(world.base + "/rules/new")
        await page.get_by_label("Name").fill(name)
        await page.get_by_label("Field").first.select_option("subject")
        save = page.get_by_role("button", name="Save filter")
        before = await save.bounding_box()
        await page.get_by_label("Value").first.fill(word)
        star = page.get_by_label("Star it")
        await star.check()
        preview = page.locator("#rule-preview")
        if name == "Notes":
            await expect(preview).to_contain_text("matches 8 messages", timeout=10_000)
            # A preview that grows as its matches arrive does not move the button about to be clicked.
            assert before is not None and before == await save.bounding_box()
            rows = preview.locator("table.rule-matches tbody tr")
            await expect(rows).to_have_count(8)
            await expect(rows.first).to_contain_text("Note number 7")  # the newest arrival first
            await expect(rows.first).to_contain_text("Alice")
            await expect(preview).to_contain_text("If the subject contains “note”, then star it.")
            # The checkbox sits on the line of its text, not above it.
            box, text = await star.bounding_box(), await page.locator("label", has_text="Star it").bounding_box()
            assert box is not None and text is not None and abs(box["y"] - text["y"]) < 12
        await save.click()
        await expect(page.get_by_role("heading", name="Filters")).to_be_visible()
    names = page.locator("ul.rules > li .rule-name")
    await expect(names).to_have_text(["Notes", "Trips"])
    await page.get_by_role("button", name="Move Notes down").click()
    await expect(names).to_have_text(["Trips", "Notes"])
    await page.get_by_role("button", name="Move Notes up").click()
    await expect(names).to_have_text(["Notes", "Trips"])
    notes = page.locator("ul.rules > li", has_text="Notes")
    await notes.get_by_role("button", name="Apply to existing mail").click()
    # The list follows the run without a reload.
    await expect(page.locator("ul.rules > li", has_text="Notes").locator(".run-state")).to_contain_text(
        re.compile(r"Ran on existing mail: 8 of \d+ matched"), timeout=30_000)
    await page.context.close()


# -- accessibility ------------------------------------------------------------------------------------------


async def test_every_action_on_the_list_is_reachable_by_keyboard_with_a_visible_focus(world: World) -> None:
    page = await world.page()
    await page.goto(world.base + "/")
    without_outline: list[str] = []
    for _ in range(40):
        await page.keyboard.press("Tab")
        described = await page.evaluate("""() => {
            const e = document.activeElement; const s = getComputedStyle(e);
            return [e.tagName + (e.name ? '[' + e.name + ']' : '') + ' ' + (e.textContent || '').trim().slice(0, 20),
                    s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0];
        }""")
        if not described[1]:
            without_outline.append(described[0])
    assert not without_outline, without_outline
    await page.context.close()


# -- German -------------------------------------------------------------------------------------------------


def _english_strings() -> set[str]:
    """Every English text the catalog translates into something else: none of them may show on a German page."""
    with open(LOCALE_DIR / "de" / "LC_MESSAGES" / "messages.po", "rb") as f:
        catalog = read_po(f)
    problems = [(m.id, errors) for m, errors in catalog.check()]
    untranslated = [m.id for m in catalog if m.id and (m.fuzzy or not m.string or (
        isinstance(m.string, tuple) and not all(m.string)))]
    assert not problems and not untranslated, (problems, untranslated)
    english: set[str] = set()
    for message in catalog:
        for key, text in zip(message.id if isinstance(message.id, tuple) else (message.id,),
                             message.string if isinstance(message.string, tuple) else (message.string,),
                             strict=False):
            if key and "{" not in key and key != text:
                english.add(key)
    return english


async def test_german_pages_show_no_english_ui_string(world: World) -> None:
    english = _english_strings()
    page = await world.page("dora")
    found: list[str] = []
    for name, path in _main_pages(world):
        if name in ("label", "thread"):
            continue  # eve's
        await page.goto(world.base + path)
        texts = await page.evaluate("""() => {
            const out = [];
            const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
            while (walker.nextNode()) { const t = walker.currentNode.textContent.trim(); if (t) out.push(t); }
            document.querySelectorAll('[placeholder],[aria-label],[title]').forEach(e => {
                ['placeholder', 'aria-label', 'title'].forEach(a => {
                    if (e.getAttribute(a)) out.push(e.getAttribute(a));
                });
            });
            return out;
        }""")
        found += [f"{name}: {text!r}" for text in texts if text in english]
        await page.screenshot(path=OUTPUT / f"de-{name}-1366.png")
    await page.context.close()
    phone = await world.page("dora", width=390, height=844)
    for name, path in _main_pages(world):
        if name not in ("label", "thread"):
            await phone.goto(world.base + path)
            await phone.screenshot(path=OUTPUT / f"de-{name}-390.png")  # for a person to look at, like the layout's
    await phone.context.close()
    assert not found, found
