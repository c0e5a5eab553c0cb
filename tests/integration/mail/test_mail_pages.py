"""The inbox tabs, a conversation, "Why is this here?", search and parts, over HTTP through the app."""

from __future__ import annotations

import re
from datetime import timedelta

import httpx

from plmail.mail.backfill import CategoryBackfill
from tests.integration.mail.conftest import Mailbox
from tests.support.mail import BASE_DATE, make_message
from tests.support.web import post_form, sign_in

LIST = {"List-Post": "<mailto:dev@lists.example.org>", "List-Unsubscribe": "<mailto:u@lists.example.org>"}


async def _signed_in(client: httpx.AsyncClient, mailbox: Mailbox) -> None:
    assert (await sign_in(client, mailbox.user.email, "correct horse")).status_code == 200


async def test_inbox_tabs_list_threads_newest_first_with_unread_counts_and_pages(
    client: httpx.AsyncClient, mailbox: Mailbox
) -> None:
    batch = [mailbox.message(make_message(message_id=f"p{i}@x", subject=f"Personal {i:02d}",
                                          date=BASE_DATE + timedelta(minutes=i)), seen=i % 2 == 0)
             for i in range(55)]
    batch.append(mailbox.message(make_message(message_id="list@x", subject="List post", headers=LIST)))
    await mailbox.services.pipeline.ingest(batch)
    await _signed_in(client, mailbox)

    general = await client.get("/")
    subjects = re.findall(r'<span class="subject">([^<]+)</span>', general.text)
    assert len(subjects) == 50  # fifty threads a page
    assert subjects[0] == "Personal 54" and subjects[1] == "Personal 53"  # newest first
    assert "List post" not in subjects
    tabs = general.text.split('aria-label="Inbox tabs"')[1].split("</nav>")[0]
    assert re.search(r'General <span class="count">27</span>', tabs)  # unread threads per tab
    assert re.search(r'Forums <span class="count">1</span>', tabs)
    second = await client.get("/?tab=primary&page=2")
    assert re.findall(r'<span class="subject">([^<]+)</span>', second.text) == [f"Personal {i:02d}"
                                                                                for i in range(4, -1, -1)]
    forums = await client.get("/?tab=forums")
    assert re.findall(r'<span class="subject">([^<]+)</span>', forums.text) == ["List post"]


async def test_a_conversation_reads_oldest_first_sanitised_in_a_sandbox_and_explains_itself(
    client: httpx.AsyncClient, mailbox: Mailbox
) -> None:
    html = ('<p>Look <img src="cid:pic@x"></p><img src="https://tracker.example/t.gif">'
            '<script>alert(1)</script>')
    first = make_message(message_id="t1@x", subject="Photos", html=html, headers=LIST, date=BASE_DATE)
    second = make_message(message_id="t2@x", subject="Re: Photos", in_reply_to="t1@x", references=["t1@x"],
                          body="Thanks!", date=BASE_DATE + timedelta(hours=2), sender="Bob <bob@example.net>")
    result = await mailbox.services.pipeline.ingest([mailbox.message(second), mailbox.message(first)])
    thread_id = result.messages[0].thread_id
    await _signed_in(client, mailbox)

    page = await client.get(f"/thread/{thread_id}")
    assert page.status_code == 200
    assert page.text.index('id="m' + str(result.messages[1].id)) < page.text.index('id="m' + str(result.messages[0].id))
    frame = re.search(r'<iframe class="body"[^>]*sandbox="([^"]*)"[^>]*srcdoc="([^"]*)"', page.text)
    assert frame is not None
    assert "allow-scripts" not in frame.group(1)
    assert "alert(1)" not in frame.group(2) and "tracker.example" not in frame.group(2)
    assert f"/message/{result.messages[1].id}/cid/pic%40x" in frame.group(2)
    assert "Remote images are hidden" in page.text
    assert "It came through a mailing list (header list-post)." in page.text  # Why is this here?

    shown = await client.get(f"/thread/{thread_id}?images={result.messages[1].id}")
    assert "https://tracker.example/t.gif" in shown.text
    always = await post_form(client, f"/message/{result.messages[1].id}/images", {}, token_from=f"/thread/{thread_id}")
    assert always.status_code == 200 and "https://tracker.example/t.gif" in always.text


async def test_search_box_finds_subject_sender_and_body(client: httpx.AsyncClient, mailbox: Mailbox) -> None:
    await mailbox.services.pipeline.ingest([
        mailbox.message(make_message(message_id="s1@x", subject="Invoice 4711", sender="Bill <bill@acme.example>",
                                     body="Payment is due on Friday.")),
        mailbox.message(make_message(message_id="s2@x", subject="Lunch", body="Pizza?")),
    ])
    # A local archive account is always importing: its mail is indexed for search afterwards.
    await mailbox.services.search_index.catch_up()
    await _signed_in(client, mailbox)
    for query, expected in [("invoices", ["Invoice 4711"]), ("acme.example", ["Invoice 4711"]),
                            ("payment due", ["Invoice 4711"]), ("pizza", ["Lunch"]), ("nomatch", [])]:
        page = await client.get("/search", params={"q": query})
        assert re.findall(r'<span class="subject">([^<]+)</span>', page.text) == expected, query


async def test_parts_are_served_safely_and_only_to_their_owner(
    client: httpx.AsyncClient, mailbox: Mailbox
) -> None:
    raw = (b"From: a@example.org\r\nMessage-ID: <att@x>\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n"
           b"--b\r\nContent-Type: text/plain\r\n\r\nsee attached\r\n"
           b"--b\r\nContent-Type: text/html; name=\"evil.html\"\r\nContent-Disposition: attachment; "
           b"filename=\"evil.html\"\r\n\r\n<script>steal()</script>\r\n--b--\r\n")
    await mailbox.services.pipeline.ingest([mailbox.message(raw)])
    part_id = await mailbox.services.db.fetchval("SELECT id FROM message_part")
    await _signed_in(client, mailbox)
    download = await client.get(f"/part/{part_id}")
    assert download.status_code == 200
    assert download.headers["content-type"] == "application/octet-stream"  # never rendered on our origin
    assert download.headers["content-disposition"].startswith("attachment; filename*=UTF-8''evil.html")
    assert download.headers["x-content-type-options"] == "nosniff"
    assert download.content.startswith(b"<script>")
    other = await mailbox.services.users.create_user("other@example.org", "correct horse")
    client.cookies.clear()
    await sign_in(client, other.email, "correct horse")
    assert (await client.get(f"/part/{part_id}")).status_code == 404
    thread_id = await mailbox.services.db.fetchval("SELECT thread_id FROM message")
    assert (await client.get(f"/thread/{thread_id}")).status_code == 404


async def test_backfill_category_resorts_stored_mail_and_announces_moved_threads(mailbox: Mailbox) -> None:
    services = mailbox.services
    newsletter = make_message(message_id="b1@x", sender="news@shop.example", headers={"List-Unsubscribe": "<x>"})
    result = await services.pipeline.ingest([mailbox.message(newsletter)])
    thread_id = result.messages[0].thread_id
    assert result.messages[0].category == "promotions"
    await services.db.execute("UPDATE contact SET is_correspondent = true WHERE email = 'news@shop.example'")
    report = await CategoryBackfill(services.db).run(user_id=mailbox.user.id)
    assert (report.messages_changed, report.threads_moved) == (1, 1)
    assert await services.db.fetchval("SELECT category FROM message_thread WHERE id = $1", thread_id) == "primary"
    assert ("Thread", str(thread_id), "updated") in (await mailbox.changes("Thread"))[-1:]
    unchanged = await CategoryBackfill(services.db).run(user_id=mailbox.user.id)
    assert (unchanged.messages_changed, unchanged.threads_moved) == (0, 0)
    # Switching a tab off re-sorts the same way.
    await services.users.users.merge_settings(mailbox.user.id, {"categories_disabled": ["primary"]})
    await services.db.execute("UPDATE contact SET is_correspondent = false")
    await services.users.users.merge_settings(mailbox.user.id, {"categories_disabled": ["promotions"]})
    switched = await CategoryBackfill(services.db).run(user_id=mailbox.user.id)
    assert switched.messages_changed == 0  # promotions is off, so the newsletter stays in General
