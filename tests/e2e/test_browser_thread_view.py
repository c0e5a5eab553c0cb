"""The thread shows who and in what order (issue 29), in headless Chromium against `plmail serve`, the mail on
Dovecot synced over IMAP: each header's From, To, Cc (Bcc on the user's own sent copy) with "me"; the messages in
the order they were written even where a sender's clock ran late and two share a second; Yes/Maybe/No only on an
invitation naming the user whose event is still to come. One world (database, Dovecot user, server, browser) for
the module."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, expect

from plmail.services import Services
from tests.integration.sending.conftest import Outgoing, add_sending_account
from tests.support.browser import SharedChromium
from tests.support.dovecot import DovecotServer, dovecot
from tests.support.jobs import run_queued
from tests.support.mail import CORPUS
from tests.support.serve import ServeProcess, open_world_services
from tests.support.smtp import SmtpServer, smtp_server

__all__ = ["dovecot", "smtp_server"]

pytestmark = pytest.mark.browser

PASSWORD = "correct horse"
INVITATION = CORPUS / "thunderbird-calendar-invitations" / "browser" / "invitations" / "data" / "single-event.eml"
FUTURE_YEAR = datetime.now(UTC).year + 2
OUTLOOK = CORPUS / "spamscope-mail-parser-mails" / "mail_test_7"
GMAIL = CORPUS / "flanker-fixtures" / "messages" / "multi-received-headers.eml"
OUTPUT = Path(__file__).resolve().parents[2] / "test-output" / "thread-view"


def _mail(*, sender: str, to: str, subject: str, message_id: str, date: str, cc: str = "", bcc: str = "",
          in_reply_to: str = "", references: str = "", body: str = "") -> bytes:
    head = [f"From: {sender}", f"To: {to}"]
    head += [f"Cc: {cc}"] if cc else []
    head += [f"Bcc: {bcc}"] if bcc else []
    head += [f"Subject: {subject}", f"Message-ID: <{message_id}>", f"Date: {date}"]
    head += [f"In-Reply-To: <{in_reply_to}>"] if in_reply_to else []
    head += ["References: " + " ".join(f"<{r}>" for r in references.split())] if references else []
    head += ["MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8", "", body or f"{subject}.", ""]
    return "\r\n".join(head).encode()


def _invitation(*, year: int, uid: str, attendee: str = "receiver@example.com") -> bytes:
    raw = INVITATION.read_bytes().replace(b"\n", b"\r\n")
    raw = raw.replace(b"DTSTART:2022", f"DTSTART:{year}".encode()).replace(b"DTEND:2022", f"DTEND:{year}".encode())
    raw = raw.replace(b"UID:02e79b96", f"UID:{uid}".encode()).replace(b"Message-ID: <", f"Message-ID: <{uid}.".encode())
    raw = raw.replace(b"Subject: Invitation: Single Event", f"Subject: Invitation: Single Event {uid}".encode())
    return raw.replace(b"receiver@example.com", attendee.encode())


@dataclass
class ThreadWorld:
    services: Services
    server: ServeProcess
    browser: Browser
    out: Outgoing
    state: dict[str, object]

    async def page(self, *, width: int = 1366) -> Page:
        context = await self.browser.new_context(viewport={"width": width, "height": 900}, storage_state=self.state)
        return await context.new_page()

    async def thread_of(self, message_id: str) -> int:
        return int(await self.services.db.fetchval(
            "SELECT thread_id FROM message WHERE rfc_message_id = $1 LIMIT 1", message_id))

    async def thread_of_event(self, uid: str) -> int:
        return int(await self.services.db.fetchval(
            "SELECT m.thread_id FROM message m JOIN event_source_link l ON l.message_id = m.id "
            "JOIN calendar_event e ON e.id = l.event_id WHERE e.uid = $1 LIMIT 1", uid))


@pytest.fixture(scope="module")
async def thread_world(tmp_path_factory: pytest.TempPathFactory, module_database: str,
                       shared_chromium: SharedChromium,
                       dovecot: DovecotServer, smtp_server: SmtpServer) -> AsyncIterator[ThreadWorld]:
    root = tmp_path_factory.mktemp("thread-view")
    thread_database = module_database
    data = root / "data"
    services = await open_world_services(data, thread_database)
    server: ServeProcess | None = None
    try:
        mailbox = dovecot.add_user()
        user = await services.users.create_user("owner@example.org", PASSWORD, time_zone="UTC")
        account_id = await add_sending_account(services, user, mailbox, smtp_server)
        out = Outgoing(services, user, mailbox, smtp_server, account_id)
        me = out.address
        await services.identities.add_alias(user.id, account_id, "receiver@example.com", name="Receiver",
                                            confirm_base="http://plmail.test/")
        # A conversation whose messages reach the mailbox last-written first. Carl's clock runs ten minutes late
        # (his reply is dated before the mail it answers); Bea answers the user's reply within the same second.
        opening = _mail(sender="Bea Berg <bea@example.net>", to=f"Owner <{me}>, Carl Clausen <carl@example.com>",
                        cc="Dan Dahl <dan@example.org>", subject="Lunch on Friday?", message_id="lunch@example.net",
                        date="Mon, 30 Nov 2026 10:00:00 +0000", body="Shall we have lunch on Friday?")
        late_clock = _mail(sender="Carl Clausen <carl@example.com>", to="Bea Berg <bea@example.net>",
                           cc=f"{me}, Dan Dahl <dan@example.org>", subject="Re: Lunch on Friday?",
                           message_id="carl@example.com", date="Mon, 30 Nov 2026 09:50:00 +0000",
                           in_reply_to="lunch@example.net", references="lunch@example.net", body="Yes, at noon.")
        mine = _mail(sender=f"Owner <{me}>", to="Bea Berg <bea@example.net>", cc="Carl Clausen <carl@example.com>",
                     bcc="Boss Bauer <boss@example.org>", subject="Re: Lunch on Friday?", message_id="mine@example.org",
                     date="Mon, 30 Nov 2026 10:05:00 +0000", in_reply_to="carl@example.com",
                     references="lunch@example.net carl@example.com", body="Noon works for me.")
        same_second = _mail(sender="Bea Berg <bea@example.net>", to=f"{me}", subject="Re: Lunch on Friday?",
                            message_id="bea2@example.net", date="Mon, 30 Nov 2026 10:05:00 +0000",
                            in_reply_to="mine@example.org", references="lunch@example.net mine@example.org",
                            body="See you there.")
        mailbox.append([same_second, late_clock, opening])
        mailbox.append([mine], "Sent")
        # Real client HTML to answer: Outlook's p.MsoNormal quoting an Apple Mail forward, and Gmail's divs.
        mailbox.append([OUTLOOK.read_bytes(), GMAIL.read_bytes()])
        mailbox.append([_invitation(year=FUTURE_YEAR, uid="upcoming-29b"), _invitation(year=2022, uid="ended-29b"),
                        _invitation(year=FUTURE_YEAR, uid="stranger-29b", attendee="stranger@example.com")])
        await services.sync.run(account_id)
        while (await services.importer.run_page(account_id, chain=False)).page.more:
            pass  # every folder, Sent included
        await services.sync.run(account_id)
        await run_queued(services, ("extract_events",))
        await services.outbox.set_undo_delay(user.id, 2)
        server = ServeProcess(data, database_url=thread_database).start()  # its key opens the account's passwords
        server.wait_healthy()
        browser = await shared_chromium.get()
        context = await browser.new_context()
        page = await context.new_page()
        await page.goto(server.url + "/login")
        await page.get_by_label("Email address").fill("owner@example.org")
        await page.get_by_label("Password").fill(PASSWORD)
        await page.get_by_role("button", name="Sign in").click()
        await expect(page.get_by_role("heading", name="Inbox")).to_be_visible()
        state = await context.storage_state()
        await context.close()
        yield ThreadWorld(services, server, browser, out, dict(state))
    finally:
        if server is not None:
            server.terminate()
        await services.close()


async def test_each_header_shows_from_to_cc_with_me_and_bcc_on_my_own_copy(thread_world: ThreadWorld) -> None:
    page = await thread_world.page()
    await page.goto(thread_world.server.url + f"/thread/{await thread_world.thread_of('lunch@example.net')}")
    await page.get_by_role("button", name="Expand all").click()
    ids = [await _id(thread_world, m) for m in ("lunch@example.net", "carl@example.com", "mine@example.org",
                                                  "bea2@example.net")]
    opening, late, mine, same_second = (page.locator(f"section.message[data-message-id='{i}']") for i in ids)
    await expect(opening.locator("header .from")).to_have_text("Bea Berg")
    await expect(opening.locator("header .recipient-line.to")).to_have_text("to me, Carl Clausen")
    await expect(opening.locator("header .recipient-line.cc")).to_have_text("cc Dan Dahl")
    await expect(opening.locator("header .recipient-line.bcc")).to_have_count(0)
    await expect(opening.locator("header .party.me")).to_have_attribute("title", thread_world.out.address)
    await expect(late.locator("header .recipient-line.to")).to_have_text("to Bea Berg")
    await expect(late.locator("header .recipient-line.cc")).to_have_text("cc me, Dan Dahl")
    # The user's own sent copy: "me" as sender, and its Bcc line, which only the sender's copy carries.
    await expect(mine.locator("header .from")).to_have_text("me")
    await expect(mine.locator("header .address")).to_have_text(f"<{thread_world.out.address}>")
    await expect(mine.locator("header .recipient-line.to")).to_have_text("to Bea Berg")
    await expect(mine.locator("header .recipient-line.cc")).to_have_text("cc Carl Clausen")
    await expect(mine.locator("header .recipient-line.bcc")).to_have_text("bcc Boss Bauer")
    await expect(same_second.locator("header .recipient-line.to")).to_have_text("to me")
    OUTPUT.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(OUTPUT / "thread-1366.png"), full_page=True)
    await page.context.close()


async def _id(world: ThreadWorld, message_id: str) -> int:
    return int(await world.services.db.fetchval(
        "SELECT id FROM message WHERE rfc_message_id = $1 ORDER BY id LIMIT 1", message_id))


async def test_a_reply_never_shows_above_the_message_it_answers(thread_world: ThreadWorld) -> None:
    page = await thread_world.page(width=390)
    await page.goto(thread_world.server.url + f"/thread/{await thread_world.thread_of('lunch@example.net')}")
    shown = await page.locator("section.message").evaluate_all("els => els.map(e => e.dataset.messageId)")
    expected = [str(await _id(thread_world, m)) for m in ("lunch@example.net", "carl@example.com",
                                                          "mine@example.org", "bea2@example.net")]
    assert shown == expected  # written order, though they arrived newest first and Carl's is dated 09:50
    OUTPUT.mkdir(parents=True, exist_ok=True)
    await page.get_by_role("button", name="Expand all").click()
    await page.screenshot(path=str(OUTPUT / "thread-390.png"), full_page=True)
    await page.context.close()


@pytest.mark.parametrize(("uid", "asks"), [("upcoming-29b", True), ("ended-29b", False), ("stranger-29b", False)])
async def test_yes_maybe_no_only_on_an_invitation_naming_me_that_has_not_ended(
    thread_world: ThreadWorld, uid: str, asks: bool
) -> None:
    page = await thread_world.page()
    await page.goto(thread_world.server.url + f"/thread/{await thread_world.thread_of_event(uid)}")
    card = page.locator("aside.event-card")
    await expect(card).to_have_count(1)  # the card (what, when, who) is there in every case
    await expect(card.get_by_role("heading", name="Single Event")).to_be_visible()
    answers = card.locator("form.rsvp")
    if asks:
        await expect(answers).to_be_visible()
        for label in ("Yes", "Maybe", "No"):
            await expect(answers.get_by_role("button", name=label, exact=True)).to_be_visible()
    else:
        await expect(answers).to_have_count(0)
        await expect(card.get_by_role("button", name="Yes", exact=True)).to_have_count(0)
    await page.context.close()


@pytest.mark.parametrize(("source", "quote"), [
    (OUTLOOK, ["> Ciao sere mi puoi dire se il mio cliente deve fare questa dichiarazione?", ">",
               "> GERONAZZO Dott.ssa  MARIACHIARA", "> Commercialista - Revisore Contabile", ">",
               "> Centr\u25cfStudi Commercialisti Srl", "> Via Mazzini, 53 \u2013 Valdobbiadene \u2013 TV"]),
    (GMAIL, ["> ---------- Forwarded message ----------", "> From: Bob Simple <hello@example.com>",
             "> Date: Wed, Feb 9, 2011 at 11:55 AM", "> Subject: Fwd: Please forward this email to me",
             "> To: Hello <hello@example.com>", ">", "> ---------- Forwarded message ----------"]),
], ids=["outlook", "gmail"])
async def test_a_reply_to_real_html_quotes_it_line_by_line(thread_world: ThreadWorld, source: Path,
                                                           quote: list[str]) -> None:
    """What reaches the SMTP server from the rich composer: the answer, the attribution line, the original's lines
    each quoted in the text part; the original inside <blockquote type="cite"> in the HTML part."""
    raw = source.read_bytes()
    message_id = raw.split(b"Message-ID: <", 1)[1].split(b">", 1)[0].decode()
    thread_world.out.smtp.reset()
    page = await thread_world.page()
    page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
    await page.goto(thread_world.server.url + f"/thread/{await thread_world.thread_of(message_id)}")
    await page.wait_for_load_state("load")
    await page.keyboard.press("r")
    composer = page.locator(".composer-shell.inline")
    await expect(composer.locator("trix-editor")).to_be_focused()
    await page.keyboard.type("Thanks, noted.")
    await page.keyboard.press("Control+Enter")
    await expect(page.locator(".toast")).to_contain_text("Sent", timeout=20_000)
    [received] = thread_world.out.smtp.wait_for(1, timeout=10)
    assert received.message["In-Reply-To"].strip() == f"<{message_id}>"
    text = next(p for p in received.message.walk() if p.get_content_type() == "text/plain")
    lines = text.get_payload(decode=True).decode(text.get_content_charset() or "utf-8").splitlines()
    assert lines[0] == "Thanks, noted."
    attribution = next(i for i, line in enumerate(lines) if line.startswith("On ") and line.endswith(" wrote:"))
    assert lines[attribution + 1:attribution + 1 + len(quote)] == quote
    html = next(p for p in received.message.walk() if p.get_content_type() == "text/html")
    markup = html.get_payload(decode=True).decode(html.get_content_charset() or "utf-8")
    assert '<blockquote type="cite"' in markup
    assert markup.index(" wrote:") < markup.index('<blockquote type="cite"')  # after the attribution line
    await page.context.close()
