"""The composer in headless Chromium against `plmail serve`, whose workers send through the suite's SMTP server
and keep Dovecot's Drafts and Sent in step: new mail with recipients chosen by completion and an attachment,
reply / reply all / forward in a thread (by keyboard), autosave and reload, Discard, Undo, a 550's reason on
the open draft, a scheduled send, and the whole of it at phone width."""

from __future__ import annotations

import asyncio
import base64
import re
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from playwright.async_api import Browser, Locator, Page, Request, Route, expect

from plmail.services import Services
from tests.integration.sending.conftest import Outgoing, add_sending_account, parsed
from tests.support.dovecot import DovecotUser, dovecot, dovecot_user
from tests.support.jobs import bring_due
from tests.support.serve import ServeProcess
from tests.support.smtp import SmtpServer, smtp, smtp_server

__all__ = ["dovecot", "dovecot_user", "smtp", "smtp_server"]

pytestmark = pytest.mark.browser

PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"


@dataclass
class Mailer:
    serve: ServeProcess
    out: Outgoing

    @property
    def url(self) -> str:
        return self.serve.url

    def wait_for_folder(self, folder: str, present: Callable[[set[str]], bool], timeout: float = 20.0) -> set[str]:
        deadline = time.monotonic() + timeout
        found: set[str] = set()
        while time.monotonic() < deadline:
            found = self.out.folder(folder)
            if present(found):
                return found
            time.sleep(0.2)
        raise AssertionError(f"{folder} never became as expected: {found}")


def incoming(to: str, *, sender: str, subject: str, message_id: str, cc: str = "", attachment: bool = False) -> bytes:
    head = (f"From: {sender}\r\nTo: {to}\r\n" + (f"Cc: {cc}\r\n" if cc else "") +
            f"Subject: {subject}\r\nMessage-ID: <{message_id}>\r\nDate: Mon, 30 Nov 2026 18:00:00 +0000\r\n"
            "MIME-Version: 1.0\r\n")
    if not attachment:
        return (head + "Content-Type: text/plain; charset=utf-8\r\n\r\nShall we meet at ten?\r\n").encode()
    return (head + 'Content-Type: multipart/mixed; boundary="b1"\r\n\r\n--b1\r\n'
            "Content-Type: text/plain; charset=utf-8\r\n\r\nThe agenda is attached.\r\n--b1\r\n"
            'Content-Type: application/pdf; name="agenda.pdf"\r\nContent-Disposition: attachment; filename="agenda.pdf"'
            "\r\nContent-Transfer-Encoding: base64\r\n\r\n" + base64.b64encode(PDF).decode()
            + "\r\n--b1--\r\n").encode()


@pytest.fixture
async def mailer(services: Services, dovecot_user: DovecotUser, smtp: SmtpServer, data_dir: Path,
                 database_url: str) -> AsyncIterator[Mailer]:
    """A user with an IMAP account on Dovecot sending through the suite's SMTP server, some mail to answer, and
    `plmail serve` on the same database and key (so it can open the account's passwords)."""
    user = await services.users.create_user("owner@example.org", "correct horse", time_zone="Europe/Berlin")
    account_id = await add_sending_account(services, user, dovecot_user, smtp)
    out = Outgoing(services, user, dovecot_user, smtp, account_id)
    out.mail.append([
        incoming(out.address, sender="Bea Berg <bea@example.net>", subject="Hello", message_id="hello@example.net"),
        incoming(out.address, sender="Carl Clausen <carl@example.com>", subject="Hi", message_id="hi@example.com"),
        incoming(out.address, sender="Bea Berg <bea@example.net>", subject="Plans for Saturday",
                 message_id="plans@example.net", attachment=True),
        incoming(f"{out.address}, Carl Clausen <carl@example.com>", sender="Bea Berg <bea@example.net>",
                 subject="Lunch on Friday?", message_id="lunch@example.net", cc="Dan <dan@example.org>"),
    ])
    await out.sync()
    await services.outbox.set_undo_delay(user.id, 2)
    process = ServeProcess(data_dir, database_url=database_url).start()
    try:
        process.wait_healthy()
        yield Mailer(process, out)
    finally:
        process.terminate()


async def signed_in(browser: Browser, mailer: Mailer, **context: object) -> Page:
    page = await (await browser.new_context(**context)).new_page()  # type: ignore[arg-type]
    page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
    await page.goto(mailer.url + "/login")
    await page.get_by_label("Email address").fill("owner@example.org")
    await page.get_by_label("Password").fill("correct horse")
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("heading", name="Inbox")).to_be_visible()
    await page.wait_for_load_state("load")  # the page's scripts, which the shortcuts need
    return page


async def choose_completion(page: Page, field: str, typed: str, *, keyboard: bool) -> None:
    box = page.locator(f"input[name={field}]").first
    await box.press_sequentially(typed, delay=30)
    option = page.locator(f"[id^={field}-suggestions] [role=option]").first
    await expect(option).to_be_visible()
    if keyboard:
        await box.press("Enter")
    else:
        await option.click()


async def field_value(composer: Locator, name: str) -> str:
    """What the composer's form sends as `name`: its recipient chips and any text typed after them."""
    value = await composer.locator("form.composer").evaluate("(form, name) => new FormData(form).get(name)", name)
    assert isinstance(value, str)
    return value


async def test_new_mail_with_two_recipients_by_completion_and_an_attachment_arrives_and_is_in_sent(
    mailer: Mailer, browser: Browser, tmp_path: Path
) -> None:
    page = await signed_in(browser, mailer)
    await page.evaluate("window.sameDocument = true")
    await page.keyboard.press("c")  # c: a new composer, docked over the inbox (no page load)
    await expect(page.get_by_role("heading", name="New message")).to_be_visible()
    assert await page.evaluate("window.sameDocument === true") and page.url == mailer.url + "/"
    await expect(page.get_by_role("heading", name="Inbox")).to_be_visible()  # the list stays beside the panel
    await choose_completion(page, "to", "be", keyboard=True)  # type-ahead after two characters, Enter picks
    await choose_completion(page, "to", "Cl", keyboard=False)  # a word of the name, by mouse
    chips = page.locator("[data-recipients=to] .recipient .chip-label")  # each chosen address a chip
    await expect(chips).to_have_text(["Bea Berg", "Carl Clausen"])
    assert await field_value(page.locator(".composer-shell"), "to") == \
        '"Bea Berg" <bea@example.net>, "Carl Clausen" <carl@example.com>'
    await page.locator("input[name=subject]").fill("Photos from the lake")
    await page.locator("trix-editor").click()
    await page.keyboard.type("Here they are, ")
    await page.get_by_role("button", name="Bold").click()
    await page.keyboard.type("finally")
    report = tmp_path / "lake.pdf"
    report.write_bytes(PDF * 50)
    await page.locator("input[type=file][name=attachments]").set_input_files(str(report))
    await expect(page.locator("[data-files] li", has_text="lake.pdf")).to_be_visible()
    await expect(page.locator("[data-save-status]")).to_have_text("Saved")
    await page.keyboard.press("Control+Enter")  # Ctrl+Enter sends
    toast = page.locator(".toast")
    await expect(toast).to_contain_text("Sending…")
    await expect(toast.get_by_role("button", name="Undo")).to_be_visible()
    await expect(toast).to_contain_text("Sent", timeout=20_000)
    [received] = mailer.out.smtp.wait_for(1, timeout=10)
    assert set(received.rcpt_to) == {"bea@example.net", "carl@example.com"}
    message = received.message
    assert [p.get_filename() for p in message.walk() if p.get_filename()] == ["lake.pdf"]
    types = {p.get_content_type() for p in message.walk()}
    assert {"text/plain", "text/html"} <= types
    html = next(p for p in message.walk() if p.get_content_type() == "text/html").get_payload(decode=True)
    assert b"<strong>finally</strong>" in html
    rfc_id = message["Message-ID"].strip()[1:-1]
    mailer.wait_for_folder("Sent", lambda ids: rfc_id in ids)
    mailer.wait_for_folder("Drafts", lambda ids: rfc_id not in ids)


async def test_reply_reply_all_and_forward_from_a_thread_by_keyboard(mailer: Mailer, browser: Browser) -> None:
    page = await signed_in(browser, mailer)
    await page.get_by_role("link", name="Lunch on Friday?").first.click()
    await expect(page.get_by_role("heading", name="Lunch on Friday?")).to_be_visible()
    thread_url = page.url

    await page.keyboard.press("a")  # a: reply all, inline under the newest message
    composer = page.locator(".composer-shell.inline")
    await expect(composer).to_be_visible()
    to = await field_value(composer, "to")
    cc = await field_value(composer, "cc")
    assert "bea@example.net" in to and "carl@example.com" in to and "dan@example.org" in cc
    assert "owner" not in to + cc and mailer.out.address not in to + cc  # the user is not among the recipients
    await page.keyboard.type("Friday works for all of us.")
    await page.keyboard.press("Control+Enter")
    await expect(page.locator(".toast")).to_contain_text("Sent", timeout=20_000)
    [reply_all] = mailer.out.smtp.wait_for(1, timeout=10)
    assert set(reply_all.rcpt_to) == {"bea@example.net", "carl@example.com", "dan@example.org"}
    assert reply_all.message["In-Reply-To"].strip() == "<lunch@example.net>"
    await page.goto(thread_url)  # the reply, in the conversation
    await expect(page.locator("section.message")).to_have_count(2)
    await page.locator("section.message").last.scroll_into_view_if_needed()
    # The live list may re-render the conversation while the provider's Sent copy is adopted: allow for a reload.
    await expect(page.frame_locator("section.message iframe.body").last.get_by_text("Friday works for all of us."))\
        .to_be_visible(timeout=20_000)

    await page.get_by_role("link", name="Inbox").first.click()
    await page.get_by_role("link", name="Plans for Saturday").first.click()
    await expect(page.get_by_role("heading", name="Plans for Saturday")).to_be_visible()
    thread_url = page.url
    await page.keyboard.press("r")  # r: reply to the sender only
    composer = page.locator(".composer-shell.inline")
    await expect(composer).to_be_visible()
    assert await field_value(composer, "to") == '"Bea Berg" <bea@example.net>'
    await page.keyboard.type("Just to you, Bea.")
    await page.keyboard.press("Escape")  # Esc closes, saving the draft
    await expect(page.get_by_text("Draft saved")).to_be_visible()
    await page.goto(thread_url)
    draft = page.locator("section.message").last
    await expect(draft.locator(".draft-mark")).to_contain_text("Draft")
    await draft.scroll_into_view_if_needed()  # the body's frame loads when it is in view
    await expect(page.frame_locator("section.message iframe.body").last.get_by_text("Just to you, Bea.")) \
        .to_be_visible(timeout=20_000)

    await page.keyboard.press("f")  # f: forward, with the original's attachment
    composer = page.locator(".composer-shell.inline")
    await expect(composer.locator("[data-files] li", has_text="agenda.pdf")).to_be_visible()
    await expect(composer.locator("input[name=to]")).to_be_focused()  # the cursor waits in the empty To
    await choose_completion(page, "to", "Cl", keyboard=True)
    await composer.locator("[data-send]").click()
    await expect(page.locator(".toast")).to_contain_text("Sent", timeout=20_000)
    forwarded = mailer.out.smtp.wait_for(2, timeout=10)[1]
    assert forwarded.rcpt_to == ("carl@example.com",)
    assert forwarded.message["Subject"] == "Fwd: Plans for Saturday"
    assert [p.get_filename() for p in forwarded.message.walk() if p.get_filename()] == ["agenda.pdf"]


async def test_autosave_then_reload_finds_the_draft_discard_removes_it_and_undo_delivers_nothing(
    mailer: Mailer, browser: Browser
) -> None:
    page = await signed_in(browser, mailer)
    await page.goto(mailer.url + "/compose")
    await page.locator("input[name=to]").fill("bea@example.net")
    await page.locator("trix-editor").click()
    await page.keyboard.type("Notes for the trip")  # no subject; five characters of text are enough
    await expect(page.locator("[data-save-status]")).to_have_text("Saved", timeout=10_000)
    await page.reload()  # what autosave kept: in Drafts, here and at Dovecot
    await page.get_by_role("navigation", name="Main navigation").get_by_role("link", name="Drafts").first.click()
    await page.locator("li.thread a").first.click()
    await page.get_by_role("link", name="Edit draft").click()
    await expect(page.locator("trix-editor")).to_contain_text("Notes for the trip")
    draft_id = await page.locator("input[name=draft_id]").input_value()
    rfc_id = await mailer.out.services.db.fetchval("SELECT rfc_message_id FROM message WHERE id = $1", int(draft_id))
    mailer.wait_for_folder("Drafts", lambda ids: rfc_id in ids)
    await page.get_by_role("button", name="Discard").click()  # asks once (accepted), then deletes everywhere
    await expect(page.get_by_role("heading", name="Inbox")).to_be_visible()
    mailer.wait_for_folder("Drafts", lambda ids: rfc_id not in ids)
    assert await mailer.out.services.db.fetchval("SELECT count(*) FROM message WHERE id = $1", int(draft_id)) == 0

    await mailer.out.services.outbox.set_undo_delay(mailer.out.user.id, 4)
    await page.goto(mailer.url + "/compose")
    await page.locator("input[name=to]").fill("bea@example.net")
    await page.locator("input[name=subject]").fill("Second thoughts")
    await page.locator("trix-editor").click()
    await page.keyboard.type("Maybe I should not send this.")
    await page.get_by_role("button", name="Send", exact=True).click()
    await page.locator(".toast").get_by_role("button", name="Undo").click()  # inside the four seconds
    await expect(page.locator("input[name=subject]")).to_have_value("Second thoughts")  # the draft reopens
    await expect(page.locator("trix-editor")).to_contain_text("Maybe I should not send this.")
    await asyncio.sleep(5)  # past the time it would have gone
    assert mailer.out.smtp.received == []


async def test_a_550_shows_its_reason_on_the_open_draft_and_a_scheduled_send_goes_at_its_time(
    mailer: Mailer, browser: Browser
) -> None:
    mailer.out.smtp.faults.rejected = {"nobody@example.net"}
    page = await signed_in(browser, mailer)
    await page.goto(mailer.url + "/compose")
    await page.locator("input[name=to]").fill("nobody@example.net")
    await page.locator("input[name=subject]").fill("Important")
    await page.locator("trix-editor").click()
    await page.keyboard.type("Every word of this matters.")
    await page.keyboard.press("Control+Enter")
    error = page.locator(".composer-shell > p[role=alert]")
    await expect(error).to_contain_text("550", timeout=20_000)  # the server's reason, on the draft
    await expect(error).to_contain_text("nobody@example.net")
    await expect(page.locator("trix-editor")).to_contain_text("Every word of this matters.")  # nothing lost
    await expect(page.locator("input[name=subject]")).to_have_value("Important")

    await expect(page.locator("[data-recipients=to] .chip-label")).to_have_text(["nobody@example.net"])
    await page.locator("input[name=to]").press("Backspace")  # the refused address goes
    await page.locator("input[name=to]").fill("bea@example.net")
    await page.locator(".schedule-menu summary").click()
    later = (datetime.now(ZoneInfo("Europe/Berlin")) + timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M")
    await page.get_by_label("Pick a time").fill(later)
    await page.get_by_role("button", name="Schedule", exact=True).click()
    await expect(page.locator(".toast")).to_contain_text("Scheduled for")
    await page.goto(mailer.url + "/compose/outbox")
    scheduled = page.locator("#scheduled li", has_text="Important")
    await expect(scheduled.get_by_role("button", name="Cancel")).to_be_visible()
    await asyncio.sleep(2)
    assert mailer.out.smtp.received == []  # not before its time
    # The clock reaches the chosen time: the submission and its queued job come due now.
    db = mailer.out.services.db
    await db.execute("UPDATE submission SET send_at = now() WHERE state = 'pending'")
    assert await bring_due(mailer.out.services, ["send_submission"]) == 1
    [received] = mailer.out.smtp.wait_for(1, timeout=20)
    assert received.rcpt_to == ("bea@example.net",) and received.message["Subject"] == "Important"
    await page.reload()
    await expect(page.locator("#scheduled")).to_contain_text("Nothing is scheduled.")


async def test_at_phone_width_compose_attach_and_send_without_horizontal_scrolling(
    mailer: Mailer, browser: Browser, tmp_path: Path
) -> None:
    page = await signed_in(browser, mailer, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)

    async def no_sideways_scroll() -> None:
        width = await page.evaluate("document.scrollingElement.scrollWidth")
        assert width <= 390, f"the page is {width}px wide at 390px"

    await no_sideways_scroll()
    await page.get_by_role("link", name="Compose").first.click()
    shell = page.locator(".composer-shell")
    await expect(shell).to_be_visible()
    box = await shell.bounding_box()
    assert box is not None and box["width"] >= 370 and box["height"] >= 600  # the composer fills the screen
    await no_sideways_scroll()
    await page.locator("input[name=to]").fill("bea@example.net")
    await page.locator("input[name=subject]").fill("From my phone")
    await page.locator("trix-editor").tap()
    await page.keyboard.type("Sent on the go.")
    await page.get_by_role("button", name="Plain text").tap()  # plain-text mode: what was written comes along
    await expect(page.locator("textarea[name=text]")).to_have_value(re.compile(r"^Sent on the go\."))
    photo = tmp_path / "photo.pdf"
    photo.write_bytes(PDF)
    await page.locator("input[type=file][name=attachments]").set_input_files(str(photo))
    await expect(page.locator("[data-files] li", has_text="photo.pdf")).to_be_visible()
    await no_sideways_scroll()
    await page.locator(".schedule-menu summary").tap()
    await no_sideways_scroll()
    await page.locator(".schedule-menu summary").tap()
    await page.get_by_role("button", name="Send", exact=True).tap()
    await expect(page.locator(".toast")).to_contain_text("Sent", timeout=20_000)
    await no_sideways_scroll()
    [received] = mailer.out.smtp.wait_for(1, timeout=10)
    message = parsed(received.data)
    assert [p.get_filename() for p in message.walk() if p.get_filename()] == ["photo.pdf"]
    types = [p.get_content_type() for p in message.walk()]
    assert "text/html" not in types and "text/plain" in types  # plain text sends text only
    text = next(p for p in message.walk() if p.get_content_type() == "text/plain").get_payload(decode=True)
    assert text.startswith(b"Sent on the go.")


async def dropped(page: Page, target: str, files: dict[str, str]) -> None:
    """Files dragged from the desktop and let go over `target`: the drag events a browser fires, with them."""
    await page.evaluate("""([selector, files]) => {
        const data = new DataTransfer();
        for (const [name, text] of Object.entries(files)) data.items.add(new File([text], name, {type: "text/plain"}));
        const at = document.querySelector(selector);
        for (const type of ["dragenter", "dragover", "drop"]) {
            at.dispatchEvent(new DragEvent(type, {dataTransfer: data, bubbles: true, cancelable: true}));
        }
    }""", [target, files])


async def pasted(page: Page, target: str, *, text: str | None = None, png: bytes | None = None) -> None:
    """A paste into `target` from the clipboard: text, or an image copied from another program."""
    await page.evaluate("""([selector, text, png]) => {
        const data = new DataTransfer();
        if (text !== null) data.setData("text/plain", text);
        if (png !== null) data.items.add(new File([new Uint8Array(png)], "image.png", {type: "image/png"}));
        document.querySelector(selector).dispatchEvent(
            new ClipboardEvent("paste", {clipboardData: data, bubbles: true, cancelable: true}));
    }""", [target, text, list(png) if png is not None else None])


class SaveLog:
    """The composer's saves as the page made them, and what its status line said, to put beside a failed wait."""

    def __init__(self, page: Page) -> None:
        self.started = time.monotonic()
        self.lines: list[str] = []
        page.on("requestfinished", lambda r: asyncio.ensure_future(self._finished(r)))
        page.on("requestfailed", lambda r: self._note(f"{r.method} {r.url} failed: {r.failure}"))
        page.on("console", lambda m: self._note(m.text) if m.text.startswith("status: ") else None)

    def _note(self, line: str) -> None:
        self.lines.append(f"{time.monotonic() - self.started:7.2f} s  {line}")

    async def _finished(self, request: Request) -> None:
        if request.method != "POST" or not request.url.endswith("/compose"):
            return
        response = await request.response()
        body = request.post_data_buffer  # None for a body with files in it
        cc = re.search(rb'name="cc"\r\n\r\n([^\r]*)', body) if body is not None else None
        sent = f"cc={cc[1].decode()!r}" if cc else "with files" if body is None else "no cc"
        self._note(f"POST /compose {sent} -> {response.status if response else None}")

    async def watch_status(self, page: Page) -> None:
        await page.evaluate("""() => {
            const status = document.querySelector("[data-save-status]");
            new MutationObserver(() => console.log("status: " + status.textContent))
                .observe(status, {childList: true, characterData: true, subtree: true});
        }""")

    def __str__(self) -> str:
        return "the composer's saves and status:\n" + "\n".join(self.lines)


PNG = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
       b"\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82")


async def test_the_composer_script_swaps_signatures_splits_pasted_lists_takes_drops_and_pasted_images_and_says_why(
    mailer: Mailer, browser: Browser, tmp_path: Path
) -> None:
    """What compose.js adds to the form: the signature follows the From, a pasted list becomes addresses, files
    dropped on the composer attach (one removed again), over 25 MB is refused before anything uploads, a pasted
    image goes out inline as a cid: part, and an autosave the server refuses says why."""
    services, user = mailer.out.services, mailer.out.user
    primary = await mailer.out.identity()
    await services.identities.update(user.id, primary.id, text_signature="Owner Example")
    team = await mailer.out.verified_alias("team@example.org", name="The Team")
    await services.identities.update(user.id, team.id, html_signature="<div><strong>Team plmail</strong></div>")
    page = await signed_in(browser, mailer)
    saves = SaveLog(page)
    await page.goto(mailer.url + "/compose")
    await saves.watch_status(page)
    editor = page.locator("trix-editor")
    await expect(editor).to_contain_text("Owner Example")  # the default identity's signature
    await page.locator("select[name=identity_id]").select_option(str(team.id))
    await expect(editor).to_contain_text("Team plmail")  # swapped with the From
    await expect(editor).not_to_contain_text("Owner Example")

    await pasted(page, "input[name=to]", text="bea@example.net\nCarl Clausen <carl@example.com>\tdan@example.org")
    await expect(page.locator("[data-recipients=to] .recipient")).to_have_count(3)  # a chip each
    assert await field_value(page.locator(".composer-shell"), "to") == \
        "bea@example.net, Carl Clausen <carl@example.com>, dan@example.org"
    await page.locator("input[name=subject]").fill("Team news")
    await editor.click()
    await page.keyboard.press("Control+Home")
    await page.keyboard.type("Hello all, the plan is attached. ")

    huge = tmp_path / "video.bin"
    with huge.open("wb") as out:
        out.truncate(25 * 1024 * 1024 + 1)  # one byte over the 25 MB
    await page.locator("input[type=file][name=attachments]").set_input_files(str(huge))
    await expect(page.locator("[data-attach-error]")).to_contain_text("25 MB")
    await expect(page.locator("[data-attach-error]")).to_contain_text("video.bin")

    await dropped(page, ".attachments-zone", {"plan.txt": "The plan.\n", "notes.txt": "Private notes.\n"})
    files = page.locator("[data-files] li")
    await expect(files).to_have_count(2)
    await page.get_by_role("button", name="Remove notes.txt").click()
    await expect(files).to_have_count(1)
    await expect(page.locator("[data-save-status]")).to_have_text("Saved")

    await editor.click()
    await page.keyboard.press("Control+End")
    await pasted(page, "trix-editor", png=PNG)
    await expect(editor.locator("img[src*='/cid/']")).to_have_count(1)  # stored with the draft, shown from there
    # Shown at once, from the pasted file, while it uploads: the page's policy lets its own blob: URLs in.
    assert not [line for line in saves.lines if line.endswith("failed: csp")], str(saves)

    cc = page.locator("input[name=cc]")
    await cc.fill("not an address")
    await cc.press("Enter")  # taken as written: chips, marked as no address (as when the field loses focus)
    status = page.locator("[data-save-status]")
    # The suite's wait (conftest: 15 s); 10 s was no figure of an issue. The Cc's save comes 2 s after the last
    # change and may queue behind the pasted image's; beside two browser neighbours it once took longer than 10 s.
    try:
        await expect(status).to_contain_text("Not saved:")
        await expect(status).to_contain_text("not an email address")
    except AssertionError as failed:  # seen once in about six full runs: what the page did, for the next look
        raise AssertionError(f"{failed}\n{saves}") from None
    chips = page.locator("[data-recipients=cc] .chip-remove")
    while await chips.count():
        await chips.first.click()
    await expect(status).to_have_text("Saved")

    await page.keyboard.press("Control+Enter")
    await expect(page.locator(".toast")).to_contain_text("Sent", timeout=20_000)
    [received] = mailer.out.smtp.wait_for(1, timeout=10)
    message = received.message
    assert set(received.rcpt_to) == {"bea@example.net", "carl@example.com", "dan@example.org"}
    assert "team@example.org" in message["From"]
    assert [p.get_filename() for p in message.walk() if p.get_content_disposition() == "attachment"] == ["plan.txt"]
    html = next(p for p in message.walk() if p.get_content_type() == "text/html").get_payload(decode=True).decode()
    text = next(p for p in message.walk() if p.get_content_type() == "text/plain").get_payload(decode=True).decode()
    assert "Team plmail" in text and "Owner Example" not in text and "Hello all" in text
    [image] = [p for p in message.walk() if p.get_content_type() == "image/png"]
    assert image.get_content_disposition() == "inline"
    content_id = image["Content-ID"].strip("<>")
    assert f'src="cid:{content_id}"' in html and "/cid/" not in html  # the part, not the draft's URL
    assert image.get_payload(decode=True) == PNG


async def test_a_file_removed_while_a_save_is_on_its_way_stays_removed_and_is_not_sent(
    mailer: Mailer, browser: Browser
) -> None:
    """A save's answer lists the files the draft had when the save left. A file removed before that answer comes
    back must not reappear with it, be kept by the next save, or go out with the message."""
    # Playwright's routes do not see what the service worker fetches once it controls the page (plmail's worker
    # answers POSTs when offline), so the page goes without it here.
    page = await signed_in(browser, mailer, service_workers="block")
    await page.goto(mailer.url + "/compose")
    await page.locator("input[name=to]").fill("bea@example.net")
    await page.locator("input[name=subject]").fill("Two files")
    await dropped(page, ".attachments-zone", {"plan.txt": "The plan.\n", "notes.txt": "Private notes.\n"})
    files = page.locator("[data-files] li")
    await expect(files).to_have_count(2)
    remove_notes = page.get_by_role("button", name="Remove notes.txt")
    await expect(remove_notes).to_be_visible()  # shown once the upload's save has answered

    # The next save reaches the server, and its answer is held back until the file has been removed.
    held, release = asyncio.Event(), asyncio.Event()

    async def hold(route: Route) -> None:
        if route.request.method != "POST" or held.is_set():
            await route.continue_()
            return
        answer = await route.fetch()
        held.set()
        await release.wait()
        await route.fulfill(response=answer)

    await page.route("**/compose", hold)
    await page.locator("input[name=subject]").fill("Two files, one kept")  # an autosave two seconds on
    await asyncio.wait_for(held.wait(), 30)
    answered: list[Request] = []
    page.on("requestfinished",
            lambda r: answered.append(r) if r.method == "POST" and r.url.endswith("/compose") else None)
    await remove_notes.click()
    await expect(files).to_have_count(1)
    release.set()
    deadline = time.monotonic() + 30
    while len(answered) < 2 and time.monotonic() < deadline:  # the held save, then the removal's own
        await page.wait_for_timeout(50)
    assert len(answered) >= 2
    await expect(page.locator("[data-save-status]")).to_have_text("Saved")
    await expect(files).to_have_count(1)
    await expect(files).to_contain_text("plan.txt")

    await page.keyboard.press("Control+Enter")
    await expect(page.locator(".toast")).to_contain_text("Sent", timeout=20_000)
    [received] = mailer.out.smtp.wait_for(1, timeout=10)
    sent = [p.get_filename() for p in received.message.walk() if p.get_content_disposition() == "attachment"]
    assert sent == ["plan.txt"]


async def test_a_message_sent_offline_is_queued_and_sent_once_on_reconnect(mailer: Mailer, browser: Browser) -> None:
    """Issue 33: Send pressed while offline is kept by the service worker with an idempotency key, the composer
    says it goes once plmail is back online, and the reconnect sends it exactly once."""
    page = await signed_in(browser, mailer)
    try:
        await page.wait_for_function("() => navigator.serviceWorker.controller !== null", timeout=15000)
        await page.goto(mailer.url + "/compose")
        await page.locator("input[name=to]").fill("bea@example.net")
        await page.locator("input[name=subject]").fill("Written on the train")
        await page.locator("trix-editor").click()
        await page.keyboard.type("Sent from the tunnel.")
        await expect(page.locator("[data-save-status]")).to_have_text("Saved")

        await page.context.set_offline(True)
        await page.get_by_role("button", name="Send", exact=True).click()
        await expect(page.locator("[data-offline-send]")).to_be_visible()
        await expect(page.locator("[data-offline-send]")).to_contain_text("will be sent as soon as")
        user = await mailer.out.services.users.by_email("owner@example.org")
        applied = "SELECT count(*) FROM applied_action WHERE user_id = $1"
        assert await mailer.out.services.db.fetchval(applied, user.id) == 0  # nothing reached the server

        await page.context.set_offline(False)  # the page's "online" event asks the worker to replay
        [received] = mailer.out.smtp.wait_for(1, timeout=20)
        assert received.message["Subject"] == "Written on the train"
        assert await mailer.out.services.db.fetchval(applied, user.id) == 1
        left = "async () => (await (await caches.open('plmail-queue-v1')).keys()).length"
        await page.wait_for_function(f"({left})().then(n => n === 0)", timeout=10000)
        # The same key again (a replay whose answer was lost) is refused: nothing more is sent.
        [key] = [r["idempotency_key"] for r in await mailer.out.services.db.fetch(
            "SELECT idempotency_key FROM applied_action WHERE user_id = $1", user.id)]
        status = await page.evaluate(
            """async (key) => {
                 const csrf = JSON.parse(document.body.getAttribute("hx-headers"))["x-csrftoken"];
                 const body = new FormData();
                 for (const [k, v] of Object.entries({action: "send", to: "bea@example.net", subject: "Again",
                                                      text: "x", _csrf_token: csrf})) body.append(k, v);
                 const answer = await fetch("/compose", {method: "POST", body,
                                                         headers: {"Idempotency-Key": key, "x-csrftoken": csrf}});
                 return answer.status; }""", key)
        assert status == 409
        assert len(mailer.out.smtp.received) == 1
    finally:
        await page.context.close()
