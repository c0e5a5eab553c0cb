"""Cards above messages, "Not an event", the calendar views in the reader's zone, provenance and editing,
over HTTP through the app."""

from __future__ import annotations

import re

import httpx

from plmail.domain.enums import LabelRole, ProviderKind
from tests.integration.calendar.conftest import Diary, calendar_mail, invitation, invite, utc
from tests.integration.calendar.test_step_job_backfill import booking_mail
from tests.support.repos import account_rows
from tests.support.web import post_form, sign_in


async def _signed_in(client: httpx.AsyncClient, email: str = "reader@example.org") -> None:
    assert (await sign_in(client, email, "correct horse")).status_code == 200


async def _thread_of(diary: Diary, message_id: int) -> int:
    return int(await diary.services.db.fetchval("SELECT thread_id FROM message WHERE id = $1", message_id))


def _card(page: str) -> str:
    match = re.search(r'<aside class="event-card.*?</aside>', page, re.DOTALL)
    assert match is not None, "no event card on the page"
    return match.group(0)


async def test_an_invitation_card_shows_above_its_message_in_the_readers_zone(
    client: httpx.AsyncClient, diary: Diary
) -> None:
    ids = await diary.receive(invitation("meet-meeting-invite.eml"))
    await _signed_in(client)
    page = await client.get(f"/thread/{await _thread_of(diary, ids[0])}")
    assert page.status_code == 200
    card = _card(page.text)
    assert page.text.index(f'id="m{ids[0]}"') < page.text.index('<aside class="event-card')
    assert "Meeeeet me HTML" in card
    assert "Mon 22 March 2021, 10:30–11:30" in card  # 09:30 UTC, read in Europe/Berlin
    assert "example@gmail.com" in card and "Confirmed" in card
    assert re.search(r"homer@example.com(&gt;)?\s*<span class=\"partstat\">Not answered yet</span>", card)
    assert re.search(r"example@gmail.com(&gt;)?\s*<span class=\"partstat\">Accepted</span>", card)
    assert "Shown on your calendar" in card and "Not an event" in card


async def test_a_booking_card_and_german_text(client: httpx.AsyncClient, diary: Diary) -> None:
    ids = await diary.receive(booking_mail())
    await diary.services.db.execute("UPDATE app_user SET locale = 'de' WHERE id = $1", diary.user_id)
    await _signed_in(client)
    card = _card((await client.get(f"/thread/{await _thread_of(diary, ids[0])}")).text)
    assert 'class="event-card booking"' in card and "Flight UA110 SFO → JFK" in card
    assert "Di 21. April 2026, 06:15–11:30" in card  # 04:15–09:30 UTC in Berlin summer time
    assert "In deinem Kalender eingetragen" in card and "Kein Termin" in card


async def test_not_an_event_suppresses_and_a_resent_invitation_stays_suppressed(
    client: httpx.AsyncClient, diary: Diary
) -> None:
    ids = await diary.receive(invitation("single-event.eml"))
    thread = await _thread_of(diary, ids[0])
    event = await diary.only_event()
    await _signed_in(client)
    done = await post_form(client, f"/calendar/event/{event['id']}/not-an-event",
                           {"next": f"/thread/{thread}#m{ids[0]}"}, token_from=f"/thread/{thread}")
    assert done.status_code == 200 and done.url.path == f"/thread/{thread}"
    assert "event-card" not in done.text
    assert await diary.events() == []
    assert await diary.services.db.fetchval("SELECT count(*) FROM event_suppression") == 1

    resent = await diary.receive(invitation("update-major.eml"), start=utc(2022, 3, 5))
    assert await diary.events() == []
    page = await client.get(f"/thread/{await _thread_of(diary, resent[0])}")
    assert "event-card" not in page.text


async def test_calendar_views_list_events_in_the_readers_zone_and_strike_through_cancellations(
    client: httpx.AsyncClient, diary: Diary
) -> None:
    await diary.receive(invitation("single-event.eml"),
                        invite("late@x", title="Late call", start=utc(2022, 3, 16, 23, 30), minutes=30),
                        invite("gone@x", title="Called off", start=utc(2022, 3, 18, 9)),
                        invite("gone@x", sequence=1, method="CANCEL"),
                        calendar_mail("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nMETHOD:PUBLISH\r\nBEGIN:VEVENT\r\n"
                                      "UID:holiday@x\r\nDTSTART;VALUE=DATE:20220319\r\nSUMMARY:Holiday\r\n"
                                      "END:VEVENT\r\nEND:VCALENDAR", method="PUBLISH"))
    await _signed_in(client)
    week = await client.get("/calendar?view=week&day=2022-03-16")
    assert week.status_code == 200 and "<h1>Calendar</h1>" in week.text
    days = dict(re.findall(r'<section class="day[^"]*" data-day="([\d-]+)">(.*?)</section>', week.text, re.DOTALL))
    assert list(days) == [f"2022-03-{d}" for d in range(14, 21)]  # Monday to Sunday
    assert "12:00–12:30" in days["2022-03-16"] and "Single Event" in days["2022-03-16"]
    # 23:30 UTC on the 16th is half past midnight on the 17th in Berlin.
    assert "Late call" not in days["2022-03-16"] and "00:30–01:00" in days["2022-03-17"]
    assert "<s>Called off</s>" in days["2022-03-18"]
    assert re.search(r'class="grid-event [^"]*\bcancelled\b', days["2022-03-18"])
    # An all-day date is the same date in every zone: the 19th, and only the 19th, in the grid's all-day row.
    all_day = dict(re.findall(r'data-all-day-of="([\d-]+)">(.*?)</div>', week.text, re.DOTALL))
    assert list(all_day) == list(days)
    assert [day for day, text in all_day.items() if "Holiday" in text] == ["2022-03-19"]
    assert "Holiday" not in "".join(days.values())
    assert "all day" in week.text.split('class="tg-allday"')[1].split("data-all-day-of")[0]

    day = await client.get("/calendar?view=day&day=2022-03-17")
    assert "Late call" in day.text and "Single Event" not in day.text
    month = await client.get("/calendar?view=month&day=2022-03-02")
    assert "March 2022" in month.text and month.text.count('class="entry') == 4
    agenda = await client.get("/calendar?view=agenda&day=2022-03-15")
    assert re.findall(r'data-day="([\d-]+)"', agenda.text) == ["2022-03-16", "2022-03-17", "2022-03-18",
                                                                "2022-03-19"]

    fragment = await client.get("/calendar?view=week&day=2022-03-23", headers={"HX-Request": "true"})
    assert fragment.status_code == 200 and "<html" not in fragment.text and 'data-view="week"' in fragment.text
    assert "Single Event" not in fragment.text


async def test_event_page_shows_every_linked_message_and_editing_marks_it_user_edited(
    client: httpx.AsyncClient, diary: Diary
) -> None:
    ids = await diary.receive(invitation("single-event.eml"), invitation("update-major.eml"),
                              invitation("cancel-single-event.eml"))
    event = await diary.only_event()
    await _signed_in(client)
    page = await client.get(f"/calendar/event/{event['id']}")
    assert page.status_code == 200
    provenance = page.text.split("Found in your mail")[1].split("</section>")[0]
    assert re.findall(r'<li class="(applied|superseded)">', provenance) == ["applied", "applied", "superseded"]
    for message_id in ids:
        assert f"/thread/{await _thread_of(diary, message_id)}#m{message_id}" in provenance

    edited = await post_form(client, f"/calendar/event/{event['id']}",
                             {"title": "Dentist", "location": "Main St 1", "start": "2022-03-16T08:00",
                              "end": "2022-03-16T09:15"}, token_from=f"/calendar/event/{event['id']}")
    assert edited.status_code == 200 and "You edited this event" in edited.text
    row = await diary.only_event()
    assert (row["title"], row["location"], row["starts_at"], row["ends_at"], row["is_user_edited"]) == (
        "Dentist", "Main St 1", utc(2022, 3, 16, 7), utc(2022, 3, 16, 8, 15), True)  # typed in Berlin time
    await diary.receive(invite("02e79b96", sequence=7, title="Mail wants this"), start=utc(2022, 3, 10))
    assert (await diary.only_event())["title"] == "Dentist"

    bad = await post_form(client, f"/calendar/event/{event['id']}", {"title": "x", "start": "tomorrow", "end": ""},
                          token_from=f"/calendar/event/{event['id']}")
    assert bad.status_code == 400 and "Enter the time as shown" in bad.text


async def test_another_users_events_are_unreachable(client: httpx.AsyncClient, diary: Diary) -> None:
    await diary.receive(invitation("single-event.eml"))
    event = await diary.only_event()
    stranger = await diary.services.users.create_user("stranger@example.org", "correct horse",
                                                      time_zone="Europe/Berlin")
    await account_rows(diary.services).create(user_id=stranger.id, provider_kind=ProviderKind.LOCAL, name="S",
                                         email=stranger.email)
    assert LabelRole.INBOX in await diary.services.labels.role_ids(stranger.id)
    await _signed_in(client, "stranger@example.org")
    assert (await client.get(f"/calendar/event/{event['id']}")).status_code == 404
    token_page = "/calendar"
    assert (await post_form(client, f"/calendar/event/{event['id']}", {"title": "Mine now", "start": "2022-03-16T08:00",
                                                                        "end": "2022-03-16T09:00"},
                            token_from=token_page)).status_code == 404
    assert (await post_form(client, f"/calendar/event/{event['id']}/not-an-event", {"next": "/"},
                            token_from=token_page)).status_code == 404
    week = await client.get("/calendar?view=week&day=2022-03-16")
    assert week.status_code == 200 and "Single Event" not in week.text
    row = await diary.only_event()
    assert (row["title"], row["is_user_edited"]) == ("Single Event", False)
    assert await diary.services.db.fetchval("SELECT count(*) FROM event_suppression") == 0
