"""The toolbar, conversation actions, labels page and filter editor over HTTP through the app."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import httpx

from plmail.domain.enums import LabelRole
from tests.integration.mail.conftest import Mailbox
from tests.support.mail import BASE_DATE, make_message
from tests.support.web import post_form, sign_in


async def _signed_in(client: httpx.AsyncClient, mailbox: Mailbox) -> None:
    assert (await sign_in(client, mailbox.user.email, "correct horse")).status_code == 200


def _subjects(page: httpx.Response) -> list[str]:
    return re.findall(r'<span class="subject">([^<]+)</span>', page.text)


async def _fill(mailbox: Mailbox, count: int) -> list[int]:
    result = await mailbox.services.pipeline.ingest([
        mailbox.message(make_message(message_id=f"t{i}@x", subject=f"Topic {i:02d}",
                                     date=BASE_DATE + timedelta(minutes=i))) for i in range(count)])
    return [m.thread_id or 0 for m in result.messages]


async def test_toolbar_acts_on_the_selection_and_on_the_whole_view(client: httpx.AsyncClient,
                                                                    mailbox: Mailbox) -> None:
    threads = await _fill(mailbox, 60)
    await _signed_in(client, mailbox)
    page = await client.get("/")
    token = re.search(r'name="_csrf_token" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
    picked = await client.post("/actions", data={"_csrf_token": token, "action": "archive", "next": "/",
                                                 "thread_ids": [str(threads[59]), str(threads[58])]})
    assert picked.status_code == 200
    assert _subjects(picked)[0] == "Topic 57"  # the two newest left the inbox
    # "Select every conversation in this view" reaches past the first page.
    everything = await client.post("/actions", data={"_csrf_token": token, "action": "read", "next": "/",
                                                     "all_in_view": "1", "view": "inbox:primary",
                                                     "thread_ids": [str(threads[0])]})
    assert everything.status_code == 200
    unread = await mailbox.services.db.fetchval("SELECT count(*) FROM message_thread WHERE unread_count > 0")
    assert unread == 2  # only the two archived threads, outside the view, are still unread
    bogus = await client.post("/actions", data={"_csrf_token": token, "action": "explode", "next": "/",
                                                "thread_ids": [str(threads[0])]})
    assert bogus.status_code == 400 and "Unknown action" in bogus.text


async def test_conversation_actions_snooze_trash_restore_and_reading(client: httpx.AsyncClient,
                                                                      mailbox: Mailbox) -> None:
    [thread_id] = await _fill(mailbox, 1)
    await _signed_in(client, mailbox)
    opened = await client.get(f"/thread/{thread_id}")
    assert "Snooze" in opened.text
    assert await mailbox.services.db.fetchval("SELECT unread_count FROM message_thread") == 0  # opening reads it
    snoozed = await post_form(client, "/actions", {"action": "snooze", "thread_ids": str(thread_id),
                                                   "snooze": "custom", "snooze_custom": "2099-01-01T09:00",
                                                   "next": "/"}, token_from=f"/thread/{thread_id}")
    assert snoozed.status_code == 200 and _subjects(snoozed) == []
    roles = await mailbox.services.labels.role_ids(mailbox.user.id)
    snoozed_view = await client.get(f"/label/{roles[LabelRole.SNOOZED]}")
    assert _subjects(snoozed_view) == ["Topic 00"] and 'value="wake"' in snoozed_view.text
    snoozed_page = (await client.get(f"/thread/{thread_id}")).text
    assert 'value="wake"' in snoozed_page and 'value="untrash"' not in snoozed_page
    trashed = await post_form(client, "/actions", {"action": "trash", "thread_ids": str(thread_id), "next": "/"},
                              token_from="/")
    assert trashed.status_code == 200
    binned_page = (await client.get(f"/thread/{thread_id}")).text
    assert 'value="untrash"' in binned_page and 'value="wake"' not in binned_page  # Restore, not Unsnooze
    await mailbox.services.operations.untrash(mailbox.user.id, thread_ids=[thread_id])
    await mailbox.services.operations.snooze(mailbox.user.id, [thread_id], datetime(2099, 1, 1, tzinfo=UTC))
    woken = await post_form(client, "/actions", {"action": "wake", "thread_ids": str(thread_id), "next": "/"},
                            token_from="/")
    assert _subjects(woken) == ["Topic 00"]
    await post_form(client, "/actions", {"action": "trash", "thread_ids": str(thread_id), "next": "/"},
                    token_from="/")
    trash = await client.get(f"/label/{roles[LabelRole.TRASH]}")
    assert _subjects(trash) == ["Topic 00"]  # the one view that lists binned threads
    assert 'value="untrash"' in trash.text
    restored = await post_form(client, "/actions", {"action": "untrash", "thread_ids": str(thread_id),
                                                    "next": "/"}, token_from="/")
    assert _subjects(restored) == ["Topic 00"]


async def test_labels_page_creates_nests_hides_and_deletes(client: httpx.AsyncClient, mailbox: Mailbox) -> None:
    [thread_id] = await _fill(mailbox, 1)
    await _signed_in(client, mailbox)
    await post_form(client, "/labels/", {"name": "Projects", "color": "blue"}, token_from="/labels")
    projects = await mailbox.services.db.fetchval("SELECT id FROM label WHERE name = 'Projects'")
    await post_form(client, "/labels/", {"name": "Apollo", "parent_id": str(projects)}, token_from="/labels")
    apollo = await mailbox.services.db.fetchval("SELECT id FROM label WHERE name = 'Apollo'")
    page = await client.get("/labels")
    assert "Projects/Apollo" in page.text
    duplicate = await post_form(client, "/labels/", {"name": "projects"}, token_from="/labels")
    assert duplicate.status_code == 400 and "already exists" in duplicate.text
    await post_form(client, "/actions", {"action": "move", "label_id": str(apollo), "thread_ids": str(thread_id),
                                         "next": "/"}, token_from="/")
    sidebar = (await client.get("/")).text.split("Main navigation")[1].split("Accounts")[0]
    assert "Apollo" in sidebar
    await post_form(client, f"/labels/{apollo}", {"name": "Apollo", "parent_id": str(projects)}, token_from="/labels")
    hidden_sidebar = (await client.get("/")).text.split("Main navigation")[1].split("Accounts")[0]
    assert "Apollo" not in hidden_sidebar  # "visible" was not ticked
    await post_form(client, f"/labels/{projects}/delete", {}, token_from="/labels")
    assert await mailbox.services.db.fetchval("SELECT count(*) FROM message") == 1
    archive = (await mailbox.services.labels.role_ids(mailbox.user.id))[LabelRole.ARCHIVE]
    assert await mailbox.services.db.fetchval("SELECT label_id FROM message_label") == archive


async def test_filter_editor_previews_saves_and_runs_on_existing_mail(client: httpx.AsyncClient,
                                                                       mailbox: Mailbox) -> None:
    await _fill(mailbox, 3)
    await _signed_in(client, mailbox)
    form = {"name": "Topics", "match": "all", "condition_field": ["subject"], "condition_value": ["topic"],
            "actions": ["archive", "star"], "enabled": "on"}
    preview = await post_form(client, "/rules/preview", form, token_from="/rules/new")
    assert "matches 3 messages" in preview.text
    assert "If the subject contains “topic”, then archive it and star it." in preview.text
    bad = await post_form(client, "/rules/preview", {**form, "condition_field": ["hasLabel"],
                                                     "condition_value": ["Nope"]}, token_from="/rules/new")
    assert "There is no label named" in bad.text
    saved = await post_form(client, "/rules/", form, token_from="/rules/new")
    assert saved.status_code == 200 and "If the subject contains “topic”" in saved.text
    rule_id = await mailbox.services.db.fetchval("SELECT id FROM mail_rule")
    edit = await client.get(f"/rules/{rule_id}")
    assert 'value="topic"' in edit.text
    await post_form(client, f"/rules/{rule_id}/run", {}, token_from="/rules")
    queued = await mailbox.services.db.fetchval("SELECT run_state FROM mail_rule")
    assert queued == "queued"
    await mailbox.services.rules.apply_to_existing(mailbox.user.id, rule_id)
    listing = await client.get("/rules")
    assert "Ran on existing mail: 3 of 3 matched" in listing.text
    assert _subjects(await client.get("/")) == []


async def test_delete_forever_and_empty_trash_destroy_for_good(client: httpx.AsyncClient, mailbox: Mailbox) -> None:
    """The web's "Delete forever" (in Trash and Spam) and "Empty trash" are the destroy JMAP's Email/set has."""
    threads = await _fill(mailbox, 4)
    await _signed_in(client, mailbox)
    roles = await mailbox.services.labels.role_ids(mailbox.user.id)
    await post_form(client, "/actions", {"action": "trash", "thread_ids": str(threads[0]), "next": "/"},
                    token_from="/")
    await post_form(client, "/actions", {"action": "trash", "thread_ids": str(threads[1]), "next": "/"},
                    token_from="/")
    await post_form(client, "/actions", {"action": "spam", "thread_ids": str(threads[2]), "next": "/"},
                    token_from="/")
    trash = await client.get(f"/label/{roles[LabelRole.TRASH]}")
    assert 'value="destroy"' in trash.text and 'value="empty_trash"' in trash.text
    assert 'value="destroy"' in (await client.get(f"/label/{roles[LabelRole.SPAM]}")).text
    assert 'value="empty_trash"' not in (await client.get("/")).text  # nothing is destroyed from the Inbox

    before = len(await mailbox.changes("Email"))
    gone = await post_form(client, "/actions", {"action": "destroy", "thread_ids": str(threads[2]),
                                                "next": f"/label/{roles[LabelRole.SPAM]}"}, token_from="/")
    assert gone.status_code == 200
    count = "SELECT count(*) FROM message WHERE thread_id = ANY($1::bigint[])"
    assert await mailbox.services.db.fetchval(count, [threads[2]]) == 0
    emptied = await post_form(client, "/actions", {"action": "empty_trash", "view": f"label:{roles[LabelRole.TRASH]}",
                                                   "next": f"/label/{roles[LabelRole.TRASH]}"}, token_from="/")
    assert emptied.status_code == 200 and _subjects(emptied) == []
    assert await mailbox.services.db.fetchval(count, [threads[0], threads[1]]) == 0
    assert await mailbox.services.db.fetchval(count, [threads[3]]) == 1  # the Inbox keeps its mail
    destroyed = [c for c in (await mailbox.changes("Email"))[before:] if c[2] == "destroyed"]
    assert len(destroyed) == 3  # phones learn of all three through Email/changes


async def test_an_action_with_an_idempotency_key_is_applied_once(client: httpx.AsyncClient, mailbox: Mailbox) -> None:
    """Issue 33: the offline queue's replay carries an Idempotency-Key; a key applied already is refused (409) and
    changes nothing, and a key whose action failed may be sent again."""
    threads = await _fill(mailbox, 2)
    await _signed_in(client, mailbox)
    page = await client.get("/")
    token = re.search(r'name="_csrf_token" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
    form = {"_csrf_token": token, "action": "star", "next": "/", "thread_ids": [str(threads[0])]}
    first = await client.post("/actions", data=form, headers={"Idempotency-Key": "offline-1"})
    assert first.status_code == 200
    await client.post("/actions", data={**form, "action": "unstar"})  # the person changes their mind online
    replay = await client.post("/actions", data=form, headers={"Idempotency-Key": "offline-1"})
    assert replay.status_code == 409
    starred = await mailbox.services.db.fetchval(
        "SELECT starred_at IS NOT NULL FROM message_thread WHERE id = $1", threads[0])
    assert starred is False  # the replay did not star it again
    failed = await client.post("/actions", data={**form, "action": "explode"}, headers={"Idempotency-Key": "k2"})
    assert failed.status_code == 400
    again = await client.post("/actions", data=form, headers={"Idempotency-Key": "k2"})
    assert again.status_code == 200
    too_long = await client.post("/actions", data=form, headers={"Idempotency-Key": "x" * 201})
    assert too_long.status_code == 400


async def test_the_snooze_menu_posts_a_choice_or_a_picked_date_and_time(client: httpx.AsyncClient,
                                                                        mailbox: Mailbox) -> None:
    """Issue 32: a snooze menu item is one button (name=snooze); "Pick date & time" sends a date and a time."""
    first, second = await _fill(mailbox, 2)
    await _signed_in(client, mailbox)
    page = (await client.get(f"/thread/{first}")).text
    assert 'type="date" name="snooze_date"' in page and 'type="datetime-local"' not in page
    picked = await post_form(client, "/actions", {"thread_ids": str(first), "snooze": "custom",
                                                  "snooze_date": "2099-03-04", "snooze_time": "14:30", "next": "/"},
                             token_from=f"/thread/{first}")
    assert picked.status_code == 200
    until = await mailbox.services.db.fetchval("SELECT snoozed_until FROM message_thread WHERE id = $1", first)
    assert until == datetime(2099, 3, 4, 14, 30, tzinfo=ZoneInfo(mailbox.user.time_zone))
    preset = await post_form(client, "/actions", {"thread_ids": str(second), "snooze": "tomorrow", "next": "/"},
                             token_from="/")
    assert preset.status_code == 200
    tomorrow = await mailbox.services.db.fetchval("SELECT snoozed_until FROM message_thread WHERE id = $1", second)
    local = tomorrow.astimezone(ZoneInfo(mailbox.user.time_zone))
    assert local.date() == (datetime.now(ZoneInfo(mailbox.user.time_zone)) + timedelta(days=1)).date()
    assert (local.hour, local.minute) == (8, 0)  # snooze.py's morning
    await mailbox.services.operations.wake(mailbox.user.id, [first])
    for bad in ({"snooze_date": ""}, {"snooze_date": "2099-13-40"}, {"snooze_date": "2001-01-01"}):
        refused = await post_form(client, "/actions", {"thread_ids": str(first), "snooze": "custom",
                                                       "snooze_time": "09:00", "next": "/", **bad}, token_from="/")
        assert refused.status_code == 400, bad
    assert await mailbox.services.db.fetchval("SELECT snoozed_until FROM message_thread WHERE id = $1", first) is None
