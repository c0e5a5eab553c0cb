"""Issue 32's list and conversation in headless Chromium: the bulk bar only with a selection (and without
JavaScript), a row's own Archive on hover, the snooze menu's date picker, initials avatars, image attachment cards,
and screenshots at 390 and 1366 px, light and dark (test-output/ui/issue32-*.png). The world is
tests/e2e/daily_ui.py's."""

from __future__ import annotations

import email
import re
import struct
import zlib
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from zoneinfo import ZoneInfo

import pytest
from playwright.async_api import expect

from plmail.mail.ingest import parse_message
from tests.e2e.daily_ui import OUTPUT, World, inbox_with
from tests.support.browser import SharedChromium
from tests.support.mail import CORPUS

pytestmark = pytest.mark.browser

BAR = "Actions for the selected conversations"
# A one-page US Letter PDF with the word "Test." from a mail library's test messages.
PDF_MAIL = CORPUS / "flanker-fixtures" / "messages" / "attached-pdf.eml"


def _png(width: int, height: int) -> bytes:
    """A real PNG (RFC 2083): an orange-to-blue gradient, so a thumbnail that loads has pixels to show."""
    rows = b"".join(b"\x00" + b"".join(bytes((255 - x * 4 % 256, 120, x * 4 % 256)) for x in range(width))
                    for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


async def _ingest(world: World, *, subject: str, sender: str, body: str = "Hello.\n",
                  files: tuple[tuple[str, str, bytes], ...] = (), seen: bool = False,
                  message_id: str | None = None, in_reply_to: str | None = None) -> int:
    world.counter += 1
    now = datetime.now(UTC) + timedelta(seconds=world.counter)
    mail = EmailMessage()
    mail["From"], mail["To"], mail["Subject"] = sender, "Eve <eve@example.org>", subject
    mail["Date"] = format_datetime(now)
    mail["Message-ID"] = f"<{message_id or f'ui{world.counter}@x'}>"
    if in_reply_to:
        mail["In-Reply-To"] = mail["References"] = f"<{in_reply_to}>"
    mail.set_content(body)
    for name, kind, data in files:
        main, sub = kind.split("/")
        mail.add_attachment(data, maintype=main, subtype=sub, filename=name)
    result = await world.services.pipeline.ingest([parse_message(
        mail.as_bytes(), account_id=world.account_id, label_ids=(world.inbox,), received_at=now, seen=seen)])
    return result.messages[0].thread_id or 0


async def test_the_bulk_bar_shows_only_with_a_selection_and_counts_it(world: World) -> None:
    page = await inbox_with(world, "Bar appears")
    bar = page.get_by_role("toolbar", name=BAR)
    await expect(bar).to_be_hidden()  # nothing selected: no row of buttons over the list
    await expect(page.get_by_role("button", name="Archive")).to_have_count(0)
    await page.get_by_role("checkbox", name=re.compile("Select Bar appears")).check()
    await expect(bar).to_be_visible()
    await expect(bar.locator("[data-selected-count]")).to_have_text("1 selected")
    await page.locator("input[name=thread_ids]").nth(1).check()
    await expect(bar.locator("[data-selected-count]")).to_have_text("2 selected")
    for name in ("Archive", "Delete", "Spam", "Mark read", "Mark unread"):
        await expect(bar.get_by_role("button", name=name, exact=True)).to_be_visible()
    await page.locator("input[name=thread_ids]:checked").first.uncheck()
    await page.locator("input[name=thread_ids]:checked").first.uncheck()
    await expect(bar).to_be_hidden()
    await page.context.close()


async def test_without_javascript_the_bar_still_appears_and_archives(world: World) -> None:
    await world.fresh_thread("No script here")
    context = await world.browser.new_context(java_script_enabled=False, storage_state=world.states["eve"],
                                              viewport={"width": 1366, "height": 800})
    page = await context.new_page()
    await page.goto(world.base + "/")
    bar = page.get_by_role("toolbar", name=BAR)
    await expect(bar).to_be_hidden()
    await page.get_by_role("checkbox", name=re.compile("Select No script here")).check()
    await expect(bar).to_be_visible()  # by CSS alone (:has(:checked))
    await bar.get_by_role("button", name="Archive").click()
    await expect(page.get_by_role("heading", name="Inbox")).to_be_visible()
    await expect(page.locator("li.thread", has_text="No script here")).to_have_count(0)
    await context.close()


async def test_a_rows_own_archive_shows_on_hover_and_archives_that_row(world: World) -> None:
    page = await inbox_with(world, "Hover to archive")
    await world.fresh_thread("Stays in the inbox")
    await page.reload()
    row = page.locator("li.thread", has_text="Hover to archive")
    archive = row.get_by_role("button", name="Archive")
    await expect(archive).to_be_hidden()
    await row.hover()
    await expect(archive).to_be_visible()
    await expect(row.get_by_role("button", name="Delete")).to_be_visible()
    await expect(row.get_by_role("button", name="Mark read")).to_be_visible()
    await expect(row.locator("summary", has_text="Snooze")).to_be_visible()
    await archive.click()
    await expect(page.get_by_role("status").filter(has_text="Conversation archived.")).to_be_visible()
    await expect(page.locator("li.thread", has_text="Hover to archive")).to_have_count(0)
    await expect(page.locator("li.thread", has_text="Stays in the inbox")).to_have_count(1)  # only that row
    roles = await world.services.db.fetch(
        "SELECT l.role FROM thread_label tl JOIN label l ON l.id = tl.label_id JOIN message_thread t "
        "ON t.id = tl.thread_id WHERE t.subject = 'Hover to archive'")
    assert {r["role"] for r in roles} == {"archive"}
    await page.context.close()


async def test_a_long_press_on_a_phone_shows_the_rows_actions(world: World) -> None:
    await world.fresh_thread("Press and hold")
    context = await world.browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True,
                                              storage_state=world.states["eve"])
    page = await context.new_page()
    await page.goto(world.base + "/")
    row = page.locator("li.thread", has_text="Press and hold")
    await expect(row.get_by_role("button", name="Archive")).to_be_hidden()
    box = await row.locator(".subject").bounding_box()
    assert box is not None
    client = await context.new_cdp_session(page)
    point = [{"x": box["x"] + 5, "y": box["y"] + 5}]
    await client.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": point})
    await expect(row).to_have_class(re.compile(r"\bactions-open\b"))
    await client.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    await expect(row.get_by_role("button", name="Archive")).to_be_visible()
    await expect(page.get_by_role("heading", name="Inbox")).to_be_visible()  # the press did not open it
    await context.close()


async def test_snooze_menu_pick_date_and_time_snoozes_to_the_chosen_moment(world: World) -> None:
    thread = await world.fresh_thread("Snooze to a picked time")
    page = await world.page()
    await page.goto(world.base + f"/thread/{thread}")
    actions = page.get_by_role("toolbar", name="Conversation actions")
    await actions.locator("summary", has_text="Snooze").click()
    menu = actions.get_by_role("group", name="Snooze until")
    for preset in ("Tomorrow", "This weekend", "Next week"):
        await expect(menu.get_by_role("button", name=re.compile(f"^{preset}"))).to_be_visible()
    await menu.locator("summary", has_text="Pick date & time").click()
    berlin = ZoneInfo("Europe/Berlin")  # Eve's zone (tests/e2e/daily_ui.py)
    day = (datetime.now(berlin) + timedelta(days=9)).date()
    date = menu.get_by_label("Date")
    assert await date.get_attribute("type") == "date"  # the browser's date picker, not a text box
    await date.fill(day.isoformat())
    await menu.get_by_label("Time").select_option("14:30")
    await menu.get_by_role("button", name="Snooze", exact=True).click()
    await expect(page.get_by_role("status").filter(has_text="Conversation snoozed.")).to_be_visible()
    until = await world.services.db.fetchval("SELECT snoozed_until FROM message_thread WHERE id = $1", thread)
    assert until == datetime(day.year, day.month, day.day, 14, 30, tzinfo=berlin)
    await page.context.close()


async def test_snoozing_without_a_date_says_what_is_missing(world: World) -> None:
    thread = await world.fresh_thread("Snooze with no date")
    page = await world.page()
    await page.goto(world.base + f"/thread/{thread}")
    actions = page.get_by_role("toolbar", name="Conversation actions")
    await actions.locator("summary", has_text="Snooze").click()
    await actions.locator("summary", has_text="Pick date & time").click()
    await actions.get_by_role("button", name="Snooze", exact=True).click()
    await expect(page.get_by_text(re.compile("Enter a date and time"))).to_be_visible()
    until = await world.services.db.fetchval("SELECT snoozed_until FROM message_thread WHERE id = $1", thread)
    assert until is None
    await page.context.close()


def _contrast_with_white(rgb: str) -> float:
    """WCAG 2.x contrast ratio of white text on the colour `rgb(r, g, b)`."""
    def linear(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (float(v) for v in re.findall(r"[\d.]+", rgb)[:3])
    luminance = 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)
    return 1.05 / (luminance + 0.05)


async def test_senders_show_initials_avatars_in_a_colour_from_their_address(world: World) -> None:
    first = "avatar-1@x"
    thread = await _ingest(world, subject="Avatars", sender="Ada Lovelace <ada@example.org>", message_id=first,
                           seen=True)
    await _ingest(world, subject="Re: Avatars", sender="grace@example.org", in_reply_to=first)
    await _ingest(world, subject="Re: Avatars", sender="Ada Lovelace <ada@example.org>", in_reply_to=first)
    page = await world.page()
    await page.goto(world.base + f"/thread/{thread}")
    await page.get_by_role("button", name="Expand all").click()
    avatars = page.locator("section.message .message-head .avatar")
    await expect(avatars).to_have_text(["AL", "G", "AL"])
    colours = [await avatars.nth(i).evaluate("e => getComputedStyle(e).backgroundColor") for i in range(3)]
    assert colours[0] == colours[2]  # the same address, the same colour
    for colour in colours:
        assert _contrast_with_white(colour) >= 4.5, colour  # WCAG AA for the white initials
    assert await page.locator("img[src*=gravatar]").count() == 0  # no lookup leaves the server
    await page.context.close()


async def test_an_image_attachment_shows_as_a_card_with_a_preview(world: World) -> None:
    thread = await _ingest(world, subject="Photo from the trip", sender="Bea Berg <bea@example.net>",
                           files=(("harbour.png", "image/png", _png(64, 40)),
                                  ("tickets.pdf", "application/pdf", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")))
    page = await world.page()
    await page.goto(world.base + f"/thread/{thread}")
    image = page.locator(".attachment-card", has_text="harbour.png")
    await expect(image.locator("img")).to_be_visible()
    await image.locator("img").evaluate(  # visible is not loaded: on a busy machine the bytes come later
        "img => img.complete || new Promise(done => { img.onload = img.onerror = done; })")
    assert await image.locator("img").evaluate("img => img.naturalWidth") == 64  # it loaded
    await expect(image).to_contain_text(re.compile(r"\d+(\.\d)? (Bytes|kB)"))
    pdf = page.locator(".attachment-card", has_text="tickets.pdf")
    await expect(pdf.locator("img")).to_have_count(0)  # no preview of a file the server will not show
    await expect(pdf.locator(".type-badge")).to_have_text("PDF")
    await expect(pdf.get_by_role("link", name="Download tickets.pdf")).to_have_attribute("download", "tickets.pdf")
    # The list row says there is an attachment with an icon, not an emoji.
    await page.goto(world.base + "/")
    row = page.locator("li.thread", has_text="Photo from the trip")
    await expect(row.get_by_role("img", name="Attachment")).to_be_visible()
    await page.context.close()


async def test_a_pdf_attachment_shows_its_first_page_and_opens_in_the_browser(
        world: World, full_chromium: SharedChromium) -> None:
    """Issue 32's "preview for images and PDFs": the corpus PDF's first page on its card (screenshots
    issue32-thread-pdf-*), and the preview opens the PDF in a new tab; the download stays. The tab is opened in
    the whole browser: the headless shell has no PDF viewer and would download the file instead."""
    OUTPUT.mkdir(parents=True, exist_ok=True)
    pdf = next(part.get_payload(decode=True) for part in email.message_from_bytes(PDF_MAIL.read_bytes()).walk()
               if part.get_content_type() == "application/pdf")
    thread = await _ingest(world, subject="Signed lease", sender="Bea Berg <bea@example.net>",
                           body="Here is the signed lease.\n", files=(("lease.pdf", "application/pdf", pdf),))
    for width in (390, 1366):
        for dark in (False, True):
            opens_the_tab = width == 1366 and not dark
            viewer = await full_chromium.get() if opens_the_tab else None
            page = await world.page(width=width, height=900, dark=dark, browser=viewer)
            shade = "dark" if dark else "light"
            await page.goto(world.base + f"/thread/{thread}")
            card = page.locator(".attachment-card", has_text="lease.pdf")
            preview = card.get_by_role("img", name="First page of the PDF")
            await preview.scroll_into_view_if_needed()
            await expect(preview).to_be_visible()
            await page.wait_for_function("() => document.querySelector('.attachment-card img.pdf-page').complete")
            assert await preview.evaluate("img => img.naturalWidth") == 240  # the drawn page loaded
            await expect(card.get_by_role("link", name="Download lease.pdf")).to_have_attribute("download", "lease.pdf")
            await page.screenshot(path=OUTPUT / f"issue32-thread-pdf-{width}-{shade}.png")
            assert await page.evaluate("document.documentElement.scrollWidth") <= width
            if opens_the_tab:
                async with page.context.expect_page() as opened:
                    await preview.click()
                tab = await opened.value
                await expect(tab).to_have_url(re.compile(r"/part/\d+/view$"))
            await page.context.close()


INVITE = (b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nMETHOD:REQUEST\r\nBEGIN:VEVENT\r\n"
          b"UID:harbour-walk@example.net\r\nDTSTAMP:20261201T090000Z\r\nDTSTART:20261220T100000Z\r\n"
          b"DTEND:20261220T120000Z\r\nSUMMARY:Harbour walk\r\nORGANIZER:mailto:bea@example.net\r\n"
          b"ATTENDEE:mailto:eve@example.org\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")


async def test_an_invitation_shows_as_a_chip_on_its_row(world: World) -> None:
    await _ingest(world, subject="Harbour walk on Sunday", sender="Bea Berg <bea@example.net>",
                  files=(("invite.ics", "text/calendar", INVITE),))
    await world.fresh_thread("Just a note")
    page = await world.page()
    await page.goto(world.base + "/")
    invited = page.locator("li.thread", has_text="Harbour walk on Sunday")
    await expect(invited.locator(".row-chip.invitation")).to_have_text("Invitation")
    await expect(page.locator("li.thread", has_text="Just a note").locator(".row-chip.invitation")).to_have_count(0)
    await page.context.close()


async def test_screenshots_of_the_list_and_a_conversation(world: World) -> None:
    """For a person to look at: the inbox (a starred, an unread and an attached thread) and a conversation."""
    OUTPUT.mkdir(parents=True, exist_ok=True)
    starred = await world.fresh_thread("Dinner on Saturday?")
    await world.services.operations.set_starred(
        (await world.services.db.fetchval("SELECT user_id FROM account WHERE id = $1", world.account_id)),
        True, thread_ids=[starred])
    first = "shot-1@x"
    thread = await _ingest(world, subject="Plans for the harbour trip", sender="Bea Berg <bea@example.net>",
                           message_id=first, seen=True,
                           body="Hi Eve,\n\nhere are the photos and the tickets.\n\nOn Monday, you wrote:\n"
                                "> Can you send the photos?\n\n-- \nBea\n",
                           files=(("harbour.png", "image/png", _png(96, 64)),
                                  ("tickets.pdf", "application/pdf", b"%PDF-1.4\n")))
    await _ingest(world, subject="Re: Plans for the harbour trip", sender="Carl Clausen <carl@example.com>",
                  in_reply_to=first, body="Looks great, count me in.\n")
    for width in (390, 1366):
        for dark in (False, True):
            page = await world.page(width=width, height=900, dark=dark)
            shade = "dark" if dark else "light"
            await page.goto(world.base + "/")
            await page.screenshot(path=OUTPUT / f"issue32-inbox-{width}-{shade}.png")
            await page.locator("li.thread input[name=thread_ids]").nth(1).check()
            await page.locator("li.thread").nth(2).hover()
            await page.screenshot(path=OUTPUT / f"issue32-inbox-selected-{width}-{shade}.png")
            await page.goto(world.base + f"/thread/{thread}")
            await page.get_by_role("button", name="Expand all").click()
            thumbnail = page.locator(".attachment-card img")
            await thumbnail.scroll_into_view_if_needed()
            await page.wait_for_function("() => Array.from(document.querySelectorAll('.attachment-card img'))"
                                         ".every(img => img.complete && img.naturalWidth > 0)")
            await page.evaluate("window.scrollTo(0, 0)")
            await page.screenshot(path=OUTPUT / f"issue32-thread-{width}-{shade}.png", full_page=True)
            assert await page.evaluate("document.documentElement.scrollWidth") <= width
            await page.get_by_role("toolbar", name="Conversation actions").locator("summary", has_text="Snooze").click()
            await page.locator("summary", has_text="Pick date & time").click()
            await page.screenshot(path=OUTPUT / f"issue32-thread-snooze-{width}-{shade}.png")
            await page.context.close()


async def test_compact_density_makes_rows_shorter(world: World) -> None:
    """Settings → Appearance → compact: the same list in less height (screenshots issue32-inbox-compact-*)."""
    users = world.services.users
    eve = await users.by_email("eve@example.org")
    page = await world.page()
    await page.goto(world.base + "/")
    comfortable = await page.locator("li.thread").first.bounding_box()
    await page.context.close()
    await users.save_appearance(eve, theme="system", density="compact", hour_cycle="", shortcuts=True)
    try:
        for width in (390, 1366):
            page = await world.page(width=width, height=900)
            await page.goto(world.base + "/")
            await expect(page.locator("body")).to_have_class(re.compile(r"\bcompact\b"))
            await page.screenshot(path=OUTPUT / f"issue32-inbox-compact-{width}-light.png")
            if width == 1366:
                compact = await page.locator("li.thread").first.bounding_box()
                assert comfortable is not None and compact is not None
                assert compact["height"] < comfortable["height"]
            await page.context.close()
    finally:
        await users.save_appearance(eve, theme="system", density="comfortable", hour_cycle="", shortcuts=True)
