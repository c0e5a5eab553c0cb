"""The list as Gmail shows it: the participants of each conversation ("me, Carol, Dave 3"), the sidebar's Starred,
All mail and Archive beside the system labels, and the Snoozed view's wake-up times."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import httpx

from plmail.domain.enums import LabelRole, ProviderKind
from plmail.mail.ingest import parse_message
from plmail.services import Services
from tests.support.mail import make_message
from tests.support.repos import account_rows
from tests.support.web import csrf_token, sign_in

PASSWORD = "correct horse"


async def _world(services: Services, client: httpx.AsyncClient) -> dict[str, int]:
    user = await services.users.create_user("eve@example.org", PASSWORD, time_zone="Europe/Berlin")
    account = await account_rows(services).create(user_id=user.id, provider_kind=ProviderKind.LOCAL, name="Home",
                                                  email="eve@example.org")
    roles = await services.labels.role_ids(user.id)
    base = datetime.now(UTC) - timedelta(hours=5)
    ids = ["p1@x", "p2@x", "p3@x"]
    senders = ["Eve Example <eve@example.org>", "Carol Jones <carol@example.net>", "Dave Brown <dave@example.net>"]
    party = await services.pipeline.ingest([parse_message(make_message(
        message_id=ids[i], subject="Party" if i == 0 else "Re: Party", sender=senders[i], date=base,
        in_reply_to=ids[i - 1] if i else None, references=ids[:i], to=["team@example.net"]),
        account_id=account, label_ids=(roles[LabelRole.INBOX],), received_at=base + timedelta(minutes=i))
        for i in range(3)])
    single = await services.pipeline.ingest([parse_message(make_message(
        message_id="old@x", subject="Old receipt", sender="Shop <shop@example.com>", to=["eve@example.org"]),
        account_id=account, label_ids=(), received_at=base - timedelta(days=2))])
    junk = await services.pipeline.ingest([parse_message(make_message(
        message_id="junk@x", subject="Cheap pills", sender="Spammer <s@spam.example>", to=["eve@example.org"]),
        account_id=account, label_ids=(roles[LabelRole.SPAM],), received_at=base)])
    await sign_in(client, "eve@example.org", PASSWORD)
    return {"party": party.messages[0].thread_id or 0, "old": single.messages[0].thread_id or 0,
            "junk": junk.messages[0].thread_id or 0}


def _row(page: str, thread_id: int) -> str:
    match = re.search(rf'<li class="thread[^"]*" data-thread-id="{thread_id}".*?</li>', page, re.S)
    assert match, f"thread {thread_id} is not listed"
    return match.group(0)


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html)).strip()


async def test_the_list_names_the_participants_with_me_as_gmail_does(
    client: httpx.AsyncClient, services: Services,
) -> None:
    world = await _world(services, client)
    row = _row((await client.get("/")).text, world["party"])
    sender = re.search(r'<span class="sender">(.*?)</span>\s*<span class="line">', row, re.S)
    assert sender is not None and _text(sender.group(1)) == "me, Carol, Dave 3"
    single = _row((await client.get("/all")).text, world["old"])
    assert "Shop</span>" in single  # alone: the whole name


async def test_starred_all_mail_and_archive_are_in_the_sidebar_and_list_what_they_say(
    client: httpx.AsyncClient, services: Services,
) -> None:
    world = await _world(services, client)
    inbox = (await client.get("/")).text
    sidebar = inbox[inbox.index('id="sidebar"'):inbox.index("<h2>Accounts</h2>")]
    names = [_text(n) for n in re.findall(r'<span class="name">(.*?)</span>', sidebar)]
    assert names[:2] == ["Inbox", "Starred"]
    assert names.index("All mail") < names.index("Archive") < names.index("Spam")
    token = await csrf_token(client, "/")
    await client.post("/actions", data={"_csrf_token": token, "action": "star", "thread_ids": str(world["old"]),
                                        "next": "/"})
    starred = (await client.get("/starred")).text
    assert f'data-thread-id="{world["old"]}"' in starred and f'data-thread-id="{world["party"]}"' not in starred
    every = (await client.get("/all")).text
    assert f'data-thread-id="{world["old"]}"' in every and f'data-thread-id="{world["party"]}"' in every
    assert f'data-thread-id="{world["junk"]}"' not in every  # All mail leaves Spam and Trash out, as Gmail's
    archive = (await client.get("/archive")).text
    assert f'data-thread-id="{world["old"]}"' in archive and f'data-thread-id="{world["party"]}"' not in archive
    await client.post("/actions", data={"_csrf_token": token, "action": "archive",
                                        "thread_ids": str(world["party"]), "next": "/"})
    assert f'data-thread-id="{world["party"]}"' in (await client.get("/archive")).text


async def test_snoozed_shows_when_each_conversation_wakes_up(client: httpx.AsyncClient, services: Services) -> None:
    world = await _world(services, client)
    token = await csrf_token(client, "/")
    await client.post("/actions", data={"_csrf_token": token, "action": "snooze", "snooze": "custom",
                                        "snooze_custom": "2031-03-04T09:30", "thread_ids": str(world["party"]),
                                        "next": "/"})
    user = await services.users.by_email("eve@example.org")
    assert user is not None
    roles = await services.labels.role_ids(user.id)
    page = (await client.get(f"/label/{roles[LabelRole.SNOOZED]}")).text
    row = _row(page, world["party"])
    # 09:30 in Europe/Berlin, the user's zone, as picked; English clock for an English reader
    assert 'class="snoozed-until"' in row and "Mar 4, 2031, 9:30\u202fAM" in row
    assert 'datetime="2031-03-04T08:30:00+00:00"' in row


def _snooze_menu(row: str) -> str:
    match = re.search(r'<details class="menu-wrap snooze-menu">.*?</details>', row, re.S)
    assert match, "the row has no snooze menu"
    return match.group(0)


async def test_each_rows_snooze_menu_posts_its_own_row_and_speaks_the_readers_language_at_once(
    client: httpx.AsyncClient, services: Services,
) -> None:
    """The rows' words and snooze menu are made once per page (pages.py, thread_list.html): each row's menu still
    posts that row's conversation, and a change of language shows on the very next list."""
    world = await _world(services, client)
    page = (await client.get("/all")).text
    for thread in ("party", "old"):
        menu = _snooze_menu(_row(page, world[thread]))
        buttons = re.findall(r'<button([^>]*) name="snooze" value="(\w+)"', menu)
        assert {value for _attrs, value in buttons} >= {"tomorrow", "weekend", "next_week"}
        assert all(f'form="row-{world[thread]}"' in attrs for attrs, _value in buttons)
        assert "Tomorrow" in menu and 'aria-label="Snooze until"' in menu
    assert f'<form method="post" action="/actions" id="row-{world["party"]}"' in page

    user = await services.users.by_email("eve@example.org")
    assert user is not None
    await services.users.update_preferences(user, display_name=user.display_name, locale="de",
                                            time_zone=user.time_zone)
    row = _row((await client.get("/all")).text, world["old"])
    # German, as the catalog translates them: the row's actions and its snooze menu
    assert 'aria-label="Archivieren"' in row and 'aria-label="Löschen"' in row
    menu = _snooze_menu(row)
    assert "Morgen" in menu and "Tomorrow" not in menu and f'form="row-{world["old"]}"' in menu
