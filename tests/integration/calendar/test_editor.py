"""Events a person makes, over HTTP: create (once and repeating), edit the series or one occurrence, delete
either; editing an extracted event marks it user-edited; accepting a proposal keeps its evidence and place;
"Happening soon" lists what is coming with a way back to its mail."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

import httpx

from plmail.jobs.calendar import propose_events
from plmail.jobs.context import SERVICES_KEY
from tests.integration.calendar.conftest import Diary, invite, utc
from tests.support.mail import make_message
from tests.support.web import csrf_token, post_form, sign_in


async def signed_in(client: httpx.AsyncClient) -> None:
    assert (await sign_in(client, "reader@example.org", "correct horse")).status_code == 200


def editor(**fields: str) -> dict[str, str]:
    return {"title": "Dentist", "start_date": "2026-05-04", "start_time": "09:00", "end_date": "2026-05-04",
            "end_time": "10:00", "repeat": "none", "location": "", "description": "", **fields}


async def occurrences(diary: Diary, event_id: int) -> list[tuple[datetime, datetime, bool, bool]]:
    return await diary.occurrences(event_id)


async def test_a_new_event_from_the_editor_is_on_the_calendar_in_the_readers_zone(
    client: httpx.AsyncClient, diary: Diary
) -> None:
    await signed_in(client)
    form = await client.get("/calendar/new?day=2026-05-04")
    assert form.status_code == 200 and 'name="start_date" value="2026-05-04"' in form.text
    calendar_id = re.search(r'<option value="(\d+)" selected>Calendar</option>', form.text)
    assert calendar_id is not None
    made = await post_form(client, "/calendar/new", editor(location="Main St 1", description="Bring the card",
                                                           calendar_id=calendar_id.group(1)),
                           token_from="/calendar/new")
    assert made.status_code == 200 and made.url.path.startswith("/calendar/event/")
    event = await diary.only_event()
    assert (event["title"], event["location"], event["description"], event["source"], event["time_zone"]) == (
        "Dentist", "Main St 1", "Bring the card", "manual", "Europe/Berlin")
    assert (event["starts_at"], event["ends_at"]) == (utc(2026, 5, 4, 7), utc(2026, 5, 4, 8))  # typed in Berlin
    week = await client.get("/calendar?view=week&day=2026-05-04")
    assert "Dentist" in week.text and "09:00–10:00" in week.text

    refused = await post_form(client, "/calendar/new", editor(title="Backwards", end_time="08:00"),
                              token_from="/calendar/new")
    assert refused.status_code == 400 and "The end must be after the start." in refused.text
    assert 'value="Backwards"' in refused.text  # nothing typed is lost
    nameless = await post_form(client, "/calendar/new", editor(title="  "), token_from="/calendar/new")
    assert nameless.status_code == 400 and "Give the event a title." in nameless.text
    assert len(await diary.events()) == 1


async def test_a_weekly_series_edited_once_then_as_a_whole_then_one_deleted(
    client: httpx.AsyncClient, diary: Diary
) -> None:
    await signed_in(client)
    await post_form(client, "/calendar/new", editor(title="Standup", repeat="weekly", end_date="2026-05-04",
                                                    start_time="09:00", end_time="09:15"), token_from="/calendar/new")
    event = await diary.only_event()
    rows = await occurrences(diary, event["id"])
    assert len(rows) > 100 and rows[0][0] == utc(2026, 5, 4, 7)
    # Summer to winter time: 09:00 in Berlin stays 09:00, so the UTC instant moves.
    november = next(r for r in rows if r[0].month == 11 and r[0].year == 2026)
    assert november[0].astimezone(UTC).hour == 8

    second = rows[1][0]  # 11 May
    page = await client.get(f"/calendar/event/{event['id']}?occurrence={quote(second.isoformat())}")
    assert page.status_code == 200 and 'name="scope" value="occurrence" checked' in page.text
    assert 'name="start_date" value="2026-05-11"' in page.text
    moved = await post_form(client, f"/calendar/event/{event['id']}", editor(
        title="Standup (moved)", start_date="2026-05-12", end_date="2026-05-12", start_time="10:00",
        end_time="10:30", repeat="weekly", scope="occurrence", occurrence=second.isoformat()),
        token_from=f"/calendar/event/{event['id']}")
    assert moved.status_code == 200
    rows = await occurrences(diary, event["id"])
    changed = next(r for r in rows if r[3])
    assert (changed[0], changed[1]) == (utc(2026, 5, 12, 8), utc(2026, 5, 12, 8, 30))
    week = await client.get("/calendar?view=week&day=2026-05-11")
    assert "Standup (moved)" in week.text and "10:00–10:30" in week.text
    assert (await diary.only_event())["title"] == "Standup"  # the series keeps its own title

    # The whole series moves an hour later; the moved instance moves with it, its own change kept.
    whole = await post_form(client, f"/calendar/event/{event['id']}", editor(
        title="Team standup", start_time="10:00", end_time="10:15", repeat="weekly", scope="series"),
        token_from=f"/calendar/event/{event['id']}")
    assert whole.status_code == 200
    series = await diary.only_event()
    assert (series["title"], series["starts_at"], series["is_user_edited"]) == ("Team standup",
                                                                                 utc(2026, 5, 4, 8), True)
    rows = await occurrences(diary, event["id"])
    assert rows[0][0] == utc(2026, 5, 4, 8) and any(r[3] for r in rows)

    third = rows[2][0]
    gone = await post_form(client, f"/calendar/event/{event['id']}/delete",
                           {"scope": "occurrence", "occurrence": third.isoformat()},
                           token_from=f"/calendar/event/{event['id']}")
    assert gone.status_code == 200
    assert third not in [r[0] for r in await occurrences(diary, event["id"])]
    assert len(await diary.events()) == 1

    # Custom rules stay what they are unless the person picks another repeat.
    await diary.services.db.execute(
        """UPDATE calendar_event SET recurrence = jsonb_set(recurrence, '{recurrenceRules}',
           '[{"@type": "RecurrenceRule", "frequency": "weekly", "interval": 2, "count": 5}]') WHERE id = $1""",
        event["id"])
    page = await client.get(f"/calendar/event/{event['id']}")
    assert 'value="custom" selected' in page.text and "FREQ=WEEKLY;INTERVAL=2;COUNT=5" in page.text
    kept = await post_form(client, f"/calendar/event/{event['id']}", editor(
        title="Team standup", start_time="10:00", end_time="10:15", repeat="custom"),
        token_from=f"/calendar/event/{event['id']}")
    assert kept.status_code == 200
    assert len(await occurrences(diary, event["id"])) == 5

    deleted = await post_form(client, f"/calendar/event/{event['id']}/delete", {"scope": "series"},
                              token_from=f"/calendar/event/{event['id']}")
    assert deleted.status_code == 200 and deleted.url.path == "/calendar"
    assert await diary.events() == []


async def test_an_all_day_event_and_editing_an_invitation_marks_it_user_edited(
    client: httpx.AsyncClient, diary: Diary
) -> None:
    await signed_in(client)
    await post_form(client, "/calendar/new", editor(title="Holiday", all_day="on", start_date="2026-07-01",
                                                    end_date="2026-07-03", start_time="", end_time=""),
                    token_from="/calendar/new")
    holiday = await diary.only_event()
    assert (holiday["is_all_day"], holiday["starts_at"], holiday["ends_at"]) == (True, utc(2026, 7, 1),
                                                                                 utc(2026, 7, 4))
    await diary.receive(invite("plan@x", title="Planning", start=utc(2026, 4, 1, 9)), start=utc(2026, 3, 20))
    planning = next(e for e in await diary.events() if e["uid"] == "plan@x")
    assert planning["is_user_edited"] is False
    await post_form(client, f"/calendar/event/{planning['id']}", editor(
        title="Planning (my notes)", start_date="2026-04-01", end_date="2026-04-01", start_time="11:00",
        end_time="12:00", repeat=""), token_from=f"/calendar/event/{planning['id']}")
    await diary.receive(invite("plan@x", sequence=3, title="Mail wants this"), start=utc(2026, 3, 25))
    planning = next(e for e in await diary.events() if e["uid"] == "plan@x")
    assert (planning["title"], planning["is_user_edited"], planning["source"]) == ("Planning (my notes)", True, "ics")


async def test_accepting_a_proposal_keeps_its_message_place_and_end(client: httpx.AsyncClient, diary: Diary) -> None:
    sent = utc(2022, 3, 1, 8)
    raw = make_message(subject="Coffee", sender="Anna <anna@example.org>", to=["reader@example.org"], date=sent,
                       body="Hi,\n\nShall we meet on March 10, 2022 from 2-4pm at Cafe Lotte?\n\nAnna\n")
    ids = await diary.deliver(raw)
    await propose_events({SERVICES_KEY: diary.services}, user_id=diary.user_id, message_ids=ids)
    row = await diary.services.db.fetchrow("SELECT id, location, stated_end FROM event_proposal")
    assert row is not None and row["location"] == "Cafe Lotte" and row["stated_end"] == utc(2022, 3, 10, 15)
    await signed_in(client)
    thread = int(await diary.services.db.fetchval("SELECT thread_id FROM message WHERE id = $1", ids[0]))
    token = await csrf_token(client, f"/thread/{thread}")
    accepted = await client.post(f"/calendar/proposal/{row['id']}/accept", data={"next": f"/thread/{thread}"},
                                 headers={"x-csrftoken": token})
    assert accepted.status_code == 200
    event = await diary.only_event()
    assert (event["source"], event["location"], event["starts_at"], event["ends_at"]) == (
        "accepted_proposal", "Cafe Lotte", utc(2022, 3, 10, 13), utc(2022, 3, 10, 15))
    assert await diary.links(event["id"]) == [(ids[0], "accepted_proposal", True)]
    page = await client.get(f"/calendar/event/{event['id']}")
    assert "No message is linked to this event." not in page.text
    assert f"/thread/{thread}#m{ids[0]}" in page.text and "Coffee" in page.text
    card = re.search(r'<aside class="event-card accepted".*?</aside>', (await client.get(f"/thread/{thread}")).text,
                     re.DOTALL)
    assert card is not None and "Added to calendar" in card.group(0) and "Cafe Lotte" in card.group(0)
    # The evidence link is no extraction: the message may still offer its other dates.
    source = await diary.services.db.fetchval(
        """SELECT EXISTS (SELECT 1 FROM event_source_link l WHERE l.message_id = $1 AND l.applied
                              AND l.extractor <> 'accepted_proposal')""", ids[0])
    assert source is False


async def test_happening_soon_lists_the_next_two_weeks_with_the_way_back_to_the_mail(
    client: httpx.AsyncClient, diary: Diary
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    raws: list[bytes] = [invite(f"soon-{i}@x", title=f"Soon {i}", start=now + timedelta(days=1, hours=i))
                         for i in range(14)]
    raws.append(invite("later@x", title="Much later", start=now + timedelta(days=20)))
    ids = await diary.receive(*raws, start=now - timedelta(days=3))
    await signed_in(client)
    inbox = await client.get("/")
    assert 'hx-get="/calendar/soon"' in inbox.text
    soon = await client.get("/calendar/soon", headers={"HX-Request": "true"})
    titles = re.findall(r'<li><a href="([^"]+)">([^<]+)</a>', soon.text)
    assert [title for _, title in titles] == [f"Soon {i}" for i in range(12)]  # at most 12 rows, soonest first
    thread = int(await diary.services.db.fetchval("SELECT thread_id FROM message WHERE id = $1", ids[0]))
    assert titles[0][0] == f"/thread/{thread}#m{ids[0]}"
    assert "Much later" not in soon.text
