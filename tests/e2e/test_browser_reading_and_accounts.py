"""Issue 29's reading and account bullets in headless Chromium against `plmail serve`, one server, database and
browser for the module: an IMAP account on Dovecot sending through the suite's SMTP server, a loopback web server
standing in for a list's one-click endpoint and a provider's autoconfig file, and a loopback DNS server.

The list's participants, Starred / All mail / Archive and Snoozed's wake-up times; Back to the list, u and Esc
returning to the same list with the cursor on the row, e opening the next conversation; Not spam and Unsubscribe
(one-click POST, mailto through the SMTP server); adding an account by autoconfig, its status when the server is
down, Retry, Counting messages…, and a refused form keeping what was typed. What reaches the SMTP server and what
Dovecot holds afterwards is asserted where it applies."""

from __future__ import annotations

import asyncio
import email
import email.policy
import re
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect

from plmail.domain.models import User
from plmail.services import Services
from tests.integration.imap_sync.conftest import message_ids
from tests.integration.sending.conftest import add_sending_account
from tests.support.browser import SharedChromium
from tests.support.dovecot import DovecotServer, DovecotUser, dovecot
from tests.support.fakes.provider_site import DnsServer, ProviderSite
from tests.support.fakes.server import FakeServer
from tests.support.jobs import bring_due
from tests.support.mail import make_message
from tests.support.net import free_port
from tests.support.serve import ServeProcess, open_world_services
from tests.support.smtp import SmtpServer, smtp_server

__all__ = ["dovecot", "smtp_server"]

pytestmark = pytest.mark.browser
PASSWORD = "correct horse"
OUTPUT = Path(__file__).resolve().parents[2] / "test-output" / "ui"


@dataclass
class World:
    services: Services
    server: ServeProcess
    browser: Browser
    user: User
    mail: DovecotUser
    smtp: SmtpServer
    site: FakeServer[ProviderSite]
    dns: DnsServer
    dovecot: DovecotServer
    account_id: int

    @property
    def address(self) -> str:
        return f"{self.mail.name}@example.org"

    async def page(self, *, width: int = 1366) -> Page:
        context = await self.browser.new_context(viewport={"width": width, "height": 900})
        page = await context.new_page()
        page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))  # "ask once": yes
        await page.goto(self.base + "/login")
        await page.get_by_label("Email address").fill(self.user.email)
        await page.get_by_label("Password").fill(PASSWORD)
        await page.get_by_role("button", name="Sign in").click()
        await expect(page.get_by_role("heading", name="Inbox")).to_be_visible()
        await page.wait_for_load_state("load")
        return page

    @property
    def base(self) -> str:
        return self.server.url

    def folder(self, name: str) -> set[str]:
        with self.mail.peer() as peer:
            return message_ids(peer.conn, name)

    async def thread_of(self, rfc_id: str) -> int:
        value = await self.services.db.fetchval("SELECT thread_id FROM message WHERE rfc_message_id = $1", rfc_id)
        assert value is not None, rfc_id
        return int(value)


async def window_passed(world: World) -> None:
    """The test clock passes the undo window: the held provider changes and their job are due now."""
    await until_async(lambda: world.services.db.fetchval(
        "SELECT count(*) > 0 FROM provider_change WHERE done_at IS NULL"))
    await world.services.db.execute("UPDATE provider_change SET hold_until = now() WHERE done_at IS NULL")
    await bring_due(world.services, ("propagate_provider_changes",))


async def until_async(check: Callable[[], Any], timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = await check()
        if found or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.1)


def until(check: Callable[[], Any], timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def _mail(rfc_id: str, subject: str, sender: str, to: str, *, headers: dict[str, str] | None = None,
          in_reply_to: str | None = None, references: tuple[str, ...] = (), minute: int = 0) -> bytes:
    when = datetime(2026, 11, 30, 9, 0, tzinfo=UTC) + timedelta(minutes=minute)
    return make_message(message_id=rfc_id, subject=subject, sender=sender, to=[to], headers=headers or {},
                        in_reply_to=in_reply_to, references=references, date=when,
                        body=f"About {subject}.\n").replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


@pytest.fixture(scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory, module_database: str, shared_chromium: SharedChromium,
                dovecot: DovecotServer, smtp_server: SmtpServer) -> AsyncIterator[World]:
    root = tmp_path_factory.mktemp("reading")
    with FakeServer(ProviderSite()) as site, DnsServer() as dns:
        env = {"PLMAIL_AUTOCONFIG_URLS": ProviderSite.autoconfig_urls(site.url),
               "PLMAIL_DNS_SERVERS": dns.address, "PLMAIL_TEST_FETCH_ALLOW": "127.0.0.1/32"}
        services = await open_world_services(root / "data", module_database, env)
        server: ServeProcess | None = None
        try:
            user = await services.users.create_user("owner@example.org", PASSWORD, time_zone="Europe/Berlin",
                                                     is_admin=True)
            await services.connection_tests.allow_any_port(True)  # the test servers are on free ports
            mail = dovecot.add_user()
            smtp_server.reset()
            account_id = await add_sending_account(services, user, mail, smtp_server)
            me = f"{mail.name}@example.org"
            party = ("party1@x", "party2@x", "party3@x")
            mail.append([
                _mail(party[0], "Party", f"Owner <{me}>", "team@example.net", minute=1),
                _mail(party[1], "Re: Party", "Carol Jones <carol@example.net>", me, in_reply_to=party[0],
                      references=party[:1], minute=2),
                _mail(party[2], "Re: Party", "Dave Brown <dave@example.net>", me, in_reply_to=party[1],
                      references=party[:2], minute=3),
                *[_mail(f"note{i}@x", f"Note {i}", "Nina <nina@example.net>", me, minute=10 + i) for i in range(4)],
                _mail("news1@lists.example", "Weekly news", "News <news@lists.example>", me, minute=20, headers={
                    "List-Id": "<news.lists.example>",
                    "List-Unsubscribe": f"<{site.url}/unsubscribe/news>, <mailto:leave-news@lists.example>",
                    "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}),
                _mail("digest1@lists.example", "Daily digest", "Digest <digest@lists.example>", me, minute=21,
                      headers={"List-Id": "<digest.lists.example>",
                               "List-Unsubscribe": "<mailto:leave-digest@lists.example?subject=unsubscribe>"}),
            ])
            mail.append([_mail("junk1@x", "You won", "Friend <friend@example.com>", me, minute=30)], folder="Junk")
            await services.sync.run(account_id)
            await services.importer.run_page(account_id, chain=False)
            await services.sync.run(account_id)
            await services.search_index.catch_up()  # the first import's search vectors, index_search's work
            await services.outbox.set_undo_delay(user.id, 2)
            # the same data directory, so the same installation key opens the account's password
            server = ServeProcess(root / "data", database_url=module_database, extra_env=env).start()
            server.wait_healthy()
            browser = await shared_chromium.get()
            yield World(services, server, browser, user, mail, smtp_server, site, dns, dovecot, account_id)
        finally:
            if server is not None:
                server.terminate()
            await services.close()


async def test_the_list_shows_participants_and_the_sidebar_starred_all_mail_archive(world: World) -> None:
    page = await world.page()
    party = page.locator(f'li.thread[data-thread-id="{await world.thread_of("party1@x")}"]')
    await expect(party.locator(".sender")).to_have_text(re.compile(r"^\s*me, Carol, Dave\s+3\s*$"))
    await page.screenshot(path=str(OUTPUT / "issue29-list-1366.png"))
    sidebar = page.locator("#sidebar")
    names = await sidebar.locator("ul.labels").first.locator(".name").all_inner_texts()
    assert names[:2] == ["Inbox", "Starred"] and names.index("All mail") < names.index("Archive")
    await sidebar.get_by_role("link", name="All mail").click()
    await expect(page.get_by_role("heading", name="All mail")).to_be_visible()
    await expect(page.locator("li.thread", has_text="Weekly news")).to_have_count(1)
    await expect(page.locator("li.thread", has_text="You won")).to_have_count(0)  # Spam is not All mail
    await sidebar.get_by_role("link", name="Starred").click()
    await expect(page.get_by_role("heading", name="Starred")).to_be_visible()
    await expect(page.locator("li.thread")).to_have_count(0)
    await page.context.close()
    phone = await world.page(width=390)
    await expect(phone.locator("li.thread .participants").first).to_be_visible()
    await phone.screenshot(path=str(OUTPUT / "issue29-list-390.png"))
    await phone.context.close()


async def test_snoozed_shows_each_wake_up_time(world: World) -> None:
    page = await world.page()
    row = page.locator("li.thread", has_text="Note 0")
    await row.locator("input[name=thread_ids]").check()
    bar = page.get_by_role("toolbar", name="Actions for the selected conversations")
    await bar.locator("summary", has_text="Snooze").click()  # the snooze menu (issue 32): its first choice
    await bar.locator("button[name=snooze]").first.click()
    await page.locator("#sidebar a[data-role=snoozed]").click()
    snoozed = page.locator("li.thread", has_text="Note 0").locator("time.snoozed-until")
    await expect(snoozed).to_be_visible()
    wakes = await snoozed.get_attribute("datetime")
    stored = await world.services.db.fetchval("SELECT snoozed_until FROM message_thread WHERE id = $1",
                                              await world.thread_of("note0@x"))
    assert wakes == stored.isoformat()
    await page.context.close()


async def test_u_esc_and_back_return_to_the_same_search_with_the_cursor_on_the_row_and_e_opens_the_next(
    world: World,
) -> None:
    page = await world.page()
    await page.goto(world.base + "/search?q=Note")
    rows = page.locator("li.thread")
    await expect(rows.nth(2)).to_be_visible()
    ids = [await rows.nth(i).get_attribute("data-thread-id") for i in range(3)]
    search_url = page.url
    await page.keyboard.press("j")
    await page.keyboard.press("j")
    await page.keyboard.press("o")
    await expect(page).to_have_url(re.compile(rf"/thread/{ids[1]}$"))
    await page.wait_for_load_state("load")
    await page.keyboard.press("u")
    await expect(page).to_have_url(search_url)
    await expect(page.locator("li.thread.cursor")).to_have_attribute("data-thread-id", ids[1] or "")
    await page.locator("li.thread.cursor a").click()
    await page.wait_for_load_state("load")
    await page.keyboard.press("Escape")
    await expect(page).to_have_url(search_url)
    await expect(page.locator("li.thread.cursor")).to_have_attribute("data-thread-id", ids[1] or "")
    await page.locator("li.thread.cursor a").click()
    await page.get_by_role("link", name="Back to the list").click()
    await expect(page).to_have_url(search_url)
    # e in a conversation archives it and opens the next one of the list, as Gmail does
    await page.locator(f'li.thread[data-thread-id="{ids[1]}"] a').click()
    await page.wait_for_load_state("load")
    await page.keyboard.press("e")
    await expect(page).to_have_url(re.compile(rf"/thread/{ids[2]}(\?.*)?$"))
    await expect(page.get_by_role("status").filter(has_text="archived")).to_be_visible()
    # and Dovecot's INBOX lets go of the archived message once the undo window passed
    archived_rfc = await world.services.db.fetchval(
        "SELECT rfc_message_id FROM message WHERE thread_id = $1", int(ids[1] or 0))
    await window_passed(world)
    assert await asyncio.to_thread(until, lambda: archived_rfc not in world.folder("INBOX"), 40), \
        world.folder("INBOX")
    await page.context.close()


async def test_not_spam_brings_it_back_to_the_inbox_on_the_server(world: World) -> None:
    page = await world.page()
    await page.goto(world.base + f"/thread/{await world.thread_of('junk1@x')}")
    await expect(page.get_by_text("This conversation is in Spam.")).to_be_visible()
    await expect(page.get_by_role("button", name="Unsubscribe")).to_have_count(0)
    await page.get_by_role("button", name="Not spam").click()
    await expect(page.get_by_role("button", name="Not spam")).to_have_count(0)
    await window_passed(world)
    assert await asyncio.to_thread(until, lambda: "junk1@x" in world.folder("INBOX"), 40), world.folder("INBOX")
    assert "junk1@x" not in world.folder("Junk")
    await page.context.close()


async def test_one_click_unsubscribe_posts_once_and_the_button_says_unsubscribed(world: World) -> None:
    page = await world.page()
    await page.goto(world.base + f"/thread/{await world.thread_of('news1@lists.example')}")
    await page.get_by_role("button", name="Unsubscribe").click()
    await expect(page.locator(".unsubscribed")).to_have_text("Unsubscribed")
    await expect(page.get_by_role("button", name="Unsubscribe")).to_have_count(0)
    await page.screenshot(path=str(OUTPUT / "issue29-unsubscribed-1366.png"))
    posts = [p for p in world.site.app.posts if p.path == "/unsubscribe/news"]
    assert len(posts) == 1 and posts[0].body == b"List-Unsubscribe=One-Click"
    await page.reload()
    await expect(page.locator(".unsubscribed")).to_be_visible()
    assert world.smtp.received == [] or all("leave-news" not in ",".join(r.rcpt_to) for r in world.smtp.received)
    await page.context.close()


async def test_mailto_unsubscribe_goes_out_through_the_smtp_server_and_leaves_no_draft(world: World) -> None:
    page = await world.page(width=390)
    await page.goto(world.base + f"/thread/{await world.thread_of('digest1@lists.example')}")
    await page.get_by_role("button", name="Unsubscribe").click()
    await expect(page.locator(".unsubscribed")).to_be_visible()
    await page.screenshot(path=str(OUTPUT / "issue29-unsubscribed-390.png"))
    await bring_due(world.services, ("send_submission",))
    arrived = await asyncio.to_thread(lambda: [r for r in world.smtp.wait_for(1, timeout=30)
                                               if "leave-digest@lists.example" in r.rcpt_to])
    assert len(arrived) == 1 and arrived[0].mail_from == world.address
    assert email.message_from_bytes(arrived[0].data, policy=email.policy.default)["Subject"] == "unsubscribe"
    assert await asyncio.to_thread(until, lambda: not world.folder("Drafts"), 10), world.folder("Drafts")
    await page.context.close()


AUTOCONFIG = """<?xml version="1.0"?>
<clientConfig version="1.1"><emailProvider id="{domain}"><domain>{domain}</domain>
<incomingServer type="imap"><hostname>{host}</hostname><port>{port}</port><socketType>plain</socketType>
<username>{user}</username></incomingServer>
<outgoingServer type="smtp"><hostname>smtp.{domain}</hostname><port>465</port><socketType>SSL</socketType>
<username>%EMAILADDRESS%</username></outgoingServer></emailProvider></clientConfig>"""


async def test_adding_an_account_fills_in_autoconfig_and_its_status_tells_the_truth(world: World) -> None:
    second = world.dovecot.add_user()
    server = second.imap()
    world.site.app.publish("provider-one.test", AUTOCONFIG.format(domain="provider-one.test", host=server.host,
                                                                  port=server.port, user=second.name))
    page = await world.page()
    await page.goto(world.base + "/accounts/new")
    await page.get_by_label("Email address").fill(f"{second.name}@provider-one.test")
    await page.get_by_label("Email address").press("Tab")
    await expect(page.locator("input[name=host]")).to_have_value(server.host)
    await expect(page.locator("input[name=port]")).to_have_value(str(server.port))
    await expect(page.locator("input[name=username]")).to_have_value(second.name)
    await expect(page.locator("input[name=smtp_host]")).to_have_value("smtp.provider-one.test")
    await expect(page.locator("input[name=smtp_port]")).to_have_value("465")
    await expect(page.locator(".preset-note")).to_contain_text("settings your provider publishes")
    await page.screenshot(path=str(OUTPUT / "issue29-autoconfig-1366.png"))
    # a wrong password: refused, and what was typed stays
    await page.get_by_label("Password", exact=True).fill("wrong")
    await page.get_by_label("Name", exact=True).fill("Provider One")
    await page.locator("input[name=smtp_host]").fill("")
    await page.get_by_role("button", name="Add account").click()
    await expect(page.get_by_role("alert")).to_contain_text("refused the sign-in")
    await expect(page.get_by_label("Name", exact=True)).to_have_value("Provider One")
    await expect(page.locator("input[name=host]")).to_have_value(server.host)
    await page.get_by_label("Password", exact=True).fill(second.password)
    await page.get_by_role("button", name="Add account").click()
    await expect(page.get_by_role("heading", name="Provider One")).to_be_visible()
    status = page.locator(".account-status")
    # the worker syncs it: only then Connected
    for _ in range(60):
        await page.reload()
        if (await status.inner_text()).startswith("Connected"):
            break
        await page.wait_for_timeout(500)
    await expect(status).to_contain_text("Connected")
    account_id = int(page.url.rsplit("/", 1)[1])
    # the server goes away: the status says so in words, when it last worked, and offers Retry
    await world.services.db.execute(
        "UPDATE account SET settings = jsonb_set(settings, '{imap,port}', to_jsonb($2::int)), updated_at = now() "
        "WHERE id = $1", account_id, free_port())
    await page.get_by_role("button", name="Sync now").click()
    for _ in range(60):
        if "Not connected" in await status.inner_text():
            break
        await page.wait_for_timeout(500)
        await page.reload()
    await expect(status).to_contain_text("Not connected: the last sync failed.")
    await expect(status).to_contain_text("Could not connect to")
    await expect(status).to_contain_text("Last worked")
    await page.screenshot(path=str(OUTPUT / "issue29-account-down-1366.png"))
    # it is back: Retry, and Connected again
    await world.services.db.execute(
        "UPDATE account SET settings = jsonb_set(settings, '{imap,port}', to_jsonb($2::int)), updated_at = now() "
        "WHERE id = $1", account_id, server.port)
    await status.get_by_role("button", name="Retry").click()
    for _ in range(60):
        if (await status.inner_text()).startswith("Connected"):
            break
        await page.wait_for_timeout(500)
        await page.reload()
    await expect(status).to_contain_text("Connected")
    await page.context.close()
