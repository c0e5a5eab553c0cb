"""A drag on the time grid, over HTTP (issue 32): POST /calendar/event/{id}/move gives the event, or the one
occurrence dragged, new times and nothing else; the answer carries an undo toast whose form moves it back; bad
times are refused with a reason and change nothing; another user's event is a 404."""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import quote

import httpx

from plmail.calendar.editor import EventForm
from tests.integration.calendar.conftest import Diary, utc
from tests.support.web import csrf_token, post_form, sign_in


async def signed_in(client: httpx.AsyncClient) -> None:
    assert (await sign_in(client, "reader@example.org", "correct horse")).status_code == 200


def editor(**fields: str) -> dict[str, str]:
    return {"title": "Dentist", "start_date": "2026-05-04", "start_time": "09:00", "end_date": "2026-05-04",
            "end_time": "10:00", "repeat": "none", "location": "Main St 1", "description": "", **fields}


async def move(client: httpx.AsyncClient, event_id: int, fields: dict[str, str], *, htmx: bool = True
               ) -> httpx.Response:
    token = await csrf_token(client, "/calendar")
    headers = {"hx-request": "true", "x-csrftoken": token} if htmx else {}
    return await client.post(f"/calendar/event/{event_id}/move", data={**fields, "_csrf_token": token},
                             headers=headers)


def undo_fields(page: str) -> dict[str, str]:
    form = re.search(r"<form[^>]*data-undo-form.*?</form>", page, re.S)
    assert form is not None, "no undo form in the answer"
    return {name: unescape(value) for name, value in re.findall(r'name="(\w+)" value="([^"]*)"', form.group(0))
            if name != "_csrf_token"}


async def test_a_moved_event_keeps_everything_but_its_times_and_undo_restores_them(
    client: httpx.AsyncClient, diary: Diary
) -> None:
    await signed_in(client)
    await post_form(client, "/calendar/new", editor(), token_from="/calendar/new")
    event = await diary.only_event()
    answer = await move(client, event["id"], {"start": "2026-05-04T11:00", "end": "2026-05-04T12:00",
                                              "view": "week", "day": "2026-05-04"})
    assert answer.status_code == 200
    assert "“Dentist” moved to" in answer.text and "11:00–12:00" in answer.text
    moved = await diary.only_event()
    assert (moved["starts_at"], moved["ends_at"]) == (utc(2026, 5, 4, 9), utc(2026, 5, 4, 10))  # Berlin, summer
    assert (moved["title"], moved["location"]) == ("Dentist", "Main St 1")

    back = undo_fields(answer.text)
    assert (back["start"], back["end"], back["undone"]) == ("2026-05-04T09:00", "2026-05-04T10:00", "1")
    undone = await move(client, event["id"], back)
    assert undone.status_code == 200 and "The move is undone." in undone.text
    assert "data-undo-form" not in undone.text  # an Undo is not undone again
    restored = await diary.only_event()
    assert (restored["starts_at"], restored["ends_at"]) == (utc(2026, 5, 4, 7), utc(2026, 5, 4, 8))

    # Without htmx (z in the toast submits the form itself): back to the calendar it came from.
    plain = await move(client, event["id"], {"start": "2026-05-05T09:00", "end": "2026-05-05T10:00",
                                             "view": "day", "day": "2026-05-05"}, htmx=False)
    assert plain.url.path == "/calendar" and plain.url.params["view"] == "day"
    assert (await diary.only_event())["starts_at"] == utc(2026, 5, 5, 7)
    # An Undo the browser posted itself (before htmx took the toast's form over) still says it was undone.
    plain_undo = await move(client, event["id"], {"start": "2026-05-04T09:00", "end": "2026-05-04T10:00",
                                                  "view": "day", "day": "2026-05-04", "undone": "1"}, htmx=False)
    assert plain_undo.url.path == "/calendar" and "The move is undone." in plain_undo.text
    assert (await diary.only_event())["starts_at"] == utc(2026, 5, 4, 7)


async def test_dragging_one_occurrence_moves_only_that_one(client: httpx.AsyncClient, diary: Diary) -> None:
    await signed_in(client)
    await post_form(client, "/calendar/new", editor(title="Standup", repeat="weekly", start_time="09:00",
                                                    end_time="09:15"), token_from="/calendar/new")
    event = await diary.only_event()
    rows = await diary.occurrences(event["id"])
    second = rows[1][0]  # 11 May, 07:00 UTC
    answer = await move(client, event["id"], {"start": "2026-05-11T11:00", "end": "2026-05-11T11:15",
                                              "occurrence": second.isoformat(), "view": "week",
                                              "day": "2026-05-11"})
    assert answer.status_code == 200
    rows = await diary.occurrences(event["id"])
    assert rows[0][0] == utc(2026, 5, 4, 7) and rows[2][0] == utc(2026, 5, 18, 7)  # the others stay
    assert any(start == utc(2026, 5, 11, 9) for start, *_ in rows)
    assert not any(start == utc(2026, 5, 11, 7) for start, *_ in rows)
    week = await client.get("/calendar?view=week&day=2026-05-11")
    assert f'data-occurrence="{second.isoformat()}"' in week.text and "11:00–11:15" in week.text


async def test_bad_times_are_refused_and_another_users_event_is_not_found(
    client: httpx.AsyncClient, diary: Diary
) -> None:
    await signed_in(client)
    await post_form(client, "/calendar/new", editor(), token_from="/calendar/new")
    event = await diary.only_event()
    for start, end, reason in (("2026-05-04T11:00", "2026-05-04T10:00", "The end must be after the start."),
                               ("tomorrow", "2026-05-04T10:00", "Give the new start and end as date and time.")):
        refused = await move(client, event["id"], {"start": start, "end": end, "view": "week", "day": "2026-05-04"})
        assert refused.status_code == 400 and reason in refused.text
        assert "data-undo-form" not in refused.text
    unchanged = await diary.only_event()
    assert (unchanged["starts_at"], unchanged["ends_at"]) == (utc(2026, 5, 4, 7), utc(2026, 5, 4, 8))
    other = await diary.services.users.create_user("other@example.org", "correct horse", time_zone="UTC")
    theirs = await diary.services.calendar.editor.create(other.id, EventForm(
        title="Theirs", start=utc(2026, 5, 4, 9), end=utc(2026, 5, 4, 10), all_day=False), user_zone="UTC")
    foreign = await move(client, theirs, {"start": "2026-05-04T11:00", "end": "2026-05-04T12:00"})
    assert foreign.status_code == 404
    kept = await diary.services.calendar.writer.owned(other.id, theirs)
    assert kept is not None and kept.values.starts_at == utc(2026, 5, 4, 9)
    # From the grid: a span dragged on empty grid opens the editor on it.
    form = await client.get("/calendar/new?day=2026-05-06&start=13:30&end=15:00")
    assert 'name="start_time" value="13:30"' in form.text and 'name="end_time" value="15:00"' in form.text
    assert quote("2026-05-06") in form.text
