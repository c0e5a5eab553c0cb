"""Proposals end to end: the step queues, the job stores, the unique index guards, accept and decline over
HTTP, backfill gives the live answers, and a proposal is never a calendar occurrence before it is accepted."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from plmail.calendar.proposals import ProposalCandidate, dedup_key, hash_dedup_key
from plmail.calendar.proposals.step import ProposeEventsStep
from plmail.calendar.repos.proposals import ProposalRow
from plmail.calendar.suppression import suppression_hash
from plmail.config import Settings
from plmail.domain.enums import QueueName
from plmail.domain.jobs import PROPOSE_EVENTS
from plmail.jobs.calendar import propose_events
from plmail.jobs.context import SERVICES_KEY
from tests.integration.calendar.conftest import Diary, utc
from tests.support.mail import make_message
from tests.support.repos import event_rows
from tests.support.web import csrf_token, sign_in

SENT = utc(2022, 3, 1, 8)  # a Tuesday, 09:00 in Berlin, the reader's zone
LUNCH = "Können wir morgen um 12 Uhr essen gehen?"
MEETING = "Can we meet on March 10, 2022 at 3pm?"


def mail(body: str, *, subject: str = "Lunch", to: tuple[str, ...] = ("reader@example.org",),
         date: datetime = SENT, message_id: str | None = None, headers: dict[str, str] | None = None) -> bytes:
    return make_message(subject=subject, sender="Anna <anna@example.org>", to=to, date=date,
                        body=f"Hi,\n\n{body}\n\nAnna\n", message_id=message_id, headers=headers)


async def run_job(diary: Diary, ids: list[int], *, user_id: int | None = None) -> dict[str, int]:
    """The job the step enqueues, run in this process with this process's services."""
    return await propose_events({SERVICES_KEY: diary.services}, user_id=user_id or diary.user_id, message_ids=ids)


async def proposals(diary: Diary) -> list[dict[str, Any]]:
    rows = await diary.services.db.fetch(
        """SELECT id, message_id, title, starts_at, ends_at, is_all_day, time_zone, confidence, source_sentence,
                  dedup_key_hash, detector FROM event_proposal ORDER BY message_id, starts_at""")
    return [dict(r) for r in rows]


def snapshot(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Everything a proposal says, without its row id."""
    return [tuple(v for k, v in row.items() if k != "id") for row in rows]


async def counts(diary: Diary) -> tuple[int, int, int]:
    db = diary.services.db
    return (int(await db.fetchval("SELECT count(*) FROM event_proposal")),
            int(await db.fetchval("SELECT count(*) FROM calendar_event")),
            int(await db.fetchval("SELECT count(*) FROM calendar_event_occurrence")))


async def thread_of(diary: Diary, message_id: int) -> int:
    return int(await diary.services.db.fetchval("SELECT thread_id FROM message WHERE id = $1", message_id))


def week(page: str) -> dict[str, str]:
    return dict(re.findall(r'<section class="day[^"]*" data-day="([\d-]+)">(.*?)</section>', page, re.DOTALL))


async def test_the_step_queues_recent_mail_only_on_the_queue_the_router_picks(diary: Diary) -> None:
    now = datetime.now(UTC)
    box = diary.box
    batch = [box.message(mail(LUNCH, date=now - timedelta(hours=1)), received_at=now - timedelta(minutes=5)),
             box.message(mail("Bis bald."), received_at=now - timedelta(minutes=4)),
             box.message(mail(MEETING), received_at=now - timedelta(days=400))]  # old mail: no job
    result = await diary.services.pipeline.ingest(batch)
    ids = [m.id for m in result.messages]

    async def jobs(queue: QueueName) -> list[Any]:
        keys = [r["key"] for r in await diary.services.db.fetch("SELECT key FROM saq_jobs WHERE queue = $1",
                                                                 queue.value)]
        found = await diary.services.queues[queue].jobs(keys)
        return [job for job in found if job is not None and job.function == PROPOSE_EVENTS.name]

    (job,) = await jobs(QueueName.ENRICH)  # an archive account is never live
    assert job.kwargs == {"user_id": diary.user_id, "message_ids": [ids[0], ids[1]]}
    assert job.retries == 1
    assert await jobs(QueueName.ENRICH_LIVE) == []
    assert await proposals(diary) == []  # the step only enqueued

    # Live mail of a finished account goes where the router sends it; the step never names a queue.
    await ProposeEventsStep(diary.services.queues).after_commit(dataclasses.replace(result, live=True))
    (live,) = await jobs(QueueName.ENRICH_LIVE)
    assert live.kwargs == {"user_id": diary.user_id, "message_ids": [ids[0], ids[1]]}

    report = await run_job(diary, live.kwargs["message_ids"])
    assert report == {"messages": 2, "offered": 1, "stored": 1, "failed": 0}


async def test_the_job_stores_what_the_proposer_offers_relative_to_the_message_date(diary: Diary) -> None:
    ids = await diary.deliver(
        mail(LUNCH, subject="Re: Mittagessen", message_id="lunch@example.org"),
        mail(MEETING, subject="Project", message_id="meet@example.org"),
        mail(MEETING, subject="Announcement", headers={"List-Id": "<team.example.org>"}),  # bulk
        mail(MEETING, subject="Not you", to=("someone@example.net",)),  # not addressed to the reader
        mail("Can we meet on March 10, 2022 at 3pm?", subject="Alias", to=("me@reader.example",),
             message_id="alias@example.org"),  # the account's alias counts
        mail("We met on February 1, 2022 at 10am.", subject="Past"),
        start=SENT,
    )
    report = await run_job(diary, ids)
    assert report == {"messages": 6, "offered": 3, "stored": 3, "failed": 0}
    rows = await proposals(diary)
    assert [(r["message_id"], r["title"], r["starts_at"], r["ends_at"], r["is_all_day"], r["time_zone"],
             r["confidence"], r["source_sentence"], r["detector"]) for r in rows] == [
        (ids[0], "Mittagessen", utc(2022, 3, 2, 11), utc(2022, 3, 2, 12), False, "Europe/Berlin", 80, LUNCH,
         "deterministic"),  # "morgen" from the message's own date in 2022, never from today
        (ids[1], "Project", utc(2022, 3, 10, 14), utc(2022, 3, 10, 15), False, "Europe/Berlin", 90, MEETING,
         "deterministic"),
        (ids[4], "Alias", utc(2022, 3, 10, 14), utc(2022, 3, 10, 15), False, "Europe/Berlin", 90, MEETING,
         "deterministic"),
    ]
    candidate = ProposalCandidate(utc(2022, 3, 2, 11), utc(2022, 3, 2, 12), False, "Europe/Berlin", 80, LUNCH, "")
    assert rows[0]["dedup_key_hash"] == suppression_hash(dedup_key("lunch@example.org", candidate))
    assert await counts(diary) == (3, 0, 0)  # proposals only: nothing on any calendar


async def test_a_rerun_and_a_repeated_message_do_not_duplicate_and_the_index_is_the_guard(diary: Diary) -> None:
    ids = await diary.deliver(mail(MEETING, message_id="meet@example.org"))
    first = await run_job(diary, [ids[0], ids[0]])  # the same message twice in one batch
    assert (first["messages"], first["stored"]) == (1, 1)
    before = await proposals(diary)
    again = await run_job(diary, ids)
    assert (again["offered"], again["stored"]) == (1, 0)  # offered again, stored once: ON CONFLICT did nothing
    assert await proposals(diary) == before

    # The unique (message_id, starts_at) index holds on its own, for rows nobody checked first.
    row = ProposalRow(user_id=diary.user_id, message_id=ids[0], title="Other", starts_at=utc(2022, 3, 10, 14),
                      ends_at=utc(2022, 3, 10, 16), is_all_day=False, time_zone="UTC", confidence=50,
                      source_sentence="x", dedup_key_hash=hash_dedup_key("x"), detector="other")
    repo = diary.services.calendar.proposals.proposals
    assert await repo.insert([row, row]) == 0
    later = dataclasses.replace(row, starts_at=utc(2022, 3, 11, 14), ends_at=utc(2022, 3, 11, 15))
    assert await repo.insert([later, later]) == 1
    assert len(await proposals(diary)) == 2
    index = await diary.services.db.fetchval(
        "SELECT indexdef FROM pg_indexes WHERE indexname = 'uniq_event_proposal_message_starts_at'")
    assert index.startswith("CREATE UNIQUE INDEX") and "(message_id, starts_at)" in index


async def test_a_proposal_is_no_occurrence_until_accepted_then_it_is_on_the_calendar(
    client: httpx.AsyncClient, diary: Diary
) -> None:
    ids = await diary.deliver(mail(MEETING, subject="Project kickoff", message_id="kick@example.org"))
    await run_job(diary, ids)
    (proposal,) = await proposals(diary)
    assert await counts(diary) == (1, 0, 0)
    assert await event_rows(diary.services).between(diary.user_id, utc(2022, 3, 1), utc(2022, 4, 1),
                                                        limit=100) == []
    assert (await sign_in(client, "reader@example.org", "correct horse")).status_code == 200
    before = await client.get("/calendar?view=week&day=2022-03-10")
    assert before.status_code == 200 and "Project kickoff" not in before.text

    thread = await thread_of(diary, ids[0])
    page = await client.get(f"/thread/{thread}")
    card = re.search(r'<aside class="proposal-card".*?</aside>', page.text, re.DOTALL)
    assert card is not None
    assert page.text.index(f'id="m{ids[0]}"') < page.text.index('<aside class="proposal-card')
    assert f"<blockquote class=\"source-sentence\">{MEETING}</blockquote>" in card.group(0)
    assert "Thu 10 March 2022, 15:00–16:00" in card.group(0)  # 14:00 UTC read in Berlin
    assert "Add to calendar" in card.group(0) and "Not an event" in card.group(0)
    assert f'hx-post="/calendar/proposal/{proposal["id"]}/accept"' in card.group(0)

    token = await csrf_token(client, f"/thread/{thread}")
    accepted = await client.post(f"/calendar/proposal/{proposal['id']}/accept", data={"next": f"/thread/{thread}"},
                                 headers={"HX-Request": "true", "x-csrftoken": token})
    assert accepted.status_code == 200, accepted.text
    assert "<html" not in accepted.text and "Added to your calendar" in accepted.text
    event = await diary.only_event()
    assert f'href="/calendar/event/{event["id"]}"' in accepted.text
    assert (event["source"], event["confidence"], event["title"], event["starts_at"], event["ends_at"],
            event["uid"]) == ("accepted_proposal", 100, "Project kickoff", utc(2022, 3, 10, 14),
                              utc(2022, 3, 10, 15), f"proposal-{proposal['dedup_key_hash']}")
    assert await counts(diary) == (0, 1, 1)  # the proposal is gone, the event and its occurrence are there
    after = week((await client.get("/calendar?view=week&day=2022-03-10")).text)
    assert "Project kickoff" in after["2022-03-10"] and "15:00–16:00" in after["2022-03-10"]
    assert "proposal-card" not in (await client.get(f"/thread/{thread}")).text

    # Accepting is a decision: neither a rerun nor a backfill offers it again.
    assert (await run_job(diary, ids))["offered"] == 0
    await diary.services.calendar.proposal_backfill.run()
    assert await counts(diary) == (0, 1, 1)
    again = await client.post(f"/calendar/proposal/{proposal['id']}/accept", data={"next": "/"},
                              headers={"x-csrftoken": token})
    assert again.status_code == 404

    # Changing one's mind later: "Not an event" on the accepted event keeps it away for good.
    await diary.services.calendar.suppressor.not_an_event(diary.user_id, event["id"])
    assert await counts(diary) == (0, 0, 0)
    assert (await run_job(diary, ids))["offered"] == 0
    await diary.services.calendar.proposal_backfill.run()
    assert await counts(diary) == (0, 0, 0)


async def test_declining_suppresses_so_neither_a_rerun_nor_a_backfill_brings_it_back(
    client: httpx.AsyncClient, diary: Diary
) -> None:
    ids = await diary.deliver(mail(MEETING, message_id="meet@example.org"), mail(LUNCH, subject="Lunch"))
    await run_job(diary, ids)
    meeting, lunch = await proposals(diary)
    await diary.services.db.execute("UPDATE app_user SET locale = 'de' WHERE id = $1", diary.user_id)
    assert (await sign_in(client, "reader@example.org", "correct horse")).status_code == 200
    thread = await thread_of(diary, ids[0])
    german = (await client.get(f"/thread/{thread}")).text
    assert "Vorschlag aus dieser Nachricht" in german and "In den Kalender eintragen" in german
    assert "Kein Termin" in german and "Do 10. März 2022, 15:00–16:00" in german
    token = await csrf_token(client, f"/thread/{thread}")
    # Without htmx the form posts and the browser is sent back to the conversation.
    done = await client.post(f"/calendar/proposal/{meeting['id']}/decline",
                             data={"next": f"/thread/{thread}", "_csrf_token": token})
    assert done.status_code == 200 and done.url.path == f"/thread/{thread}"
    assert "proposal-card" not in done.text
    stored = await diary.services.db.fetchval("SELECT dedup_key_hash FROM event_suppression")
    assert stored == meeting["dedup_key_hash"]
    assert snapshot(await proposals(diary)) == snapshot([lunch])

    await run_job(diary, ids)
    report = await diary.services.calendar.proposal_backfill.run(email="reader@example.org")
    assert report.users == 1 and report.run.refusals.get("suppressed") == 1
    assert snapshot(await proposals(diary)) == snapshot([lunch])
    assert await counts(diary) == (1, 0, 0)

    # Another user's proposal is a 404, like a missing one.
    other = await diary.services.users.create_user("other@example.org", "correct horse")
    assert other.id != diary.user_id
    client.cookies.clear()
    assert (await sign_in(client, "other@example.org", "correct horse")).status_code == 200
    token = await csrf_token(client, "/")
    refused = await client.post(f"/calendar/proposal/{lunch['id']}/decline", data={"next": "/"},
                                headers={"HX-Request": "true", "x-csrftoken": token})
    assert refused.status_code == 404
    assert await counts(diary) == (1, 0, 0)


async def test_backfill_gives_the_answers_the_live_path_gave(
    diary: Diary, settings: Settings, database_url: str
) -> None:
    await diary.services.db.execute("UPDATE app_user SET locale = 'de' WHERE id = $1", diary.user_id)
    raws = [mail(LUNCH, subject="Essen", message_id="a@x"),
            mail("Die Party ist am 12.3.2022.", subject="Party", message_id="b@x"),
            mail("Let's talk on 4/8/2022 at 2pm.", subject="Call", message_id="c@x"),  # 4 August in German order
            mail(MEETING, subject="Shop news", headers={"List-Unsubscribe": "<mailto:u@shop.example>"}),
            mail("Treffen am 10.3.2023 um 14 Uhr.", subject="Far off", message_id="d@x")]  # beyond a year
    ids: list[int] = []
    for index, raw in enumerate(raws):  # mail arriving over the years, each proposed as it arrived
        delivered = await diary.deliver(raw, start=SENT + timedelta(days=index))
        await run_job(diary, delivered)
        ids += delivered
    live = await proposals(diary)
    assert [(r["title"], r["starts_at"], r["is_all_day"]) for r in live] == [
        ("Essen", utc(2022, 3, 2, 11), False), ("Party", utc(2022, 3, 11, 23), True),
        ("Call", utc(2022, 8, 4, 12), False)]

    await diary.services.db.execute("DELETE FROM event_proposal")
    report = await diary.services.calendar.proposal_backfill.run(email="reader@example.org", page=2)
    assert report.users == 1 and report.run.messages == 5 and not report.run.failed
    assert snapshot(await proposals(diary)) == snapshot(live)
    again = await diary.services.calendar.proposal_backfill.run()
    assert (again.run.offered, again.run.stored) == (3, 0)
    assert snapshot(await proposals(diary)) == snapshot(live)

    # The command line, in a process of its own against the same database.
    await diary.services.db.execute("DELETE FROM event_proposal")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
    env.update({"PLMAIL_DATABASE_URL": database_url, "PLMAIL_DATA_DIR": str(settings.data_dir)})
    done = subprocess.run([sys.executable, "-m", "plmail.cli", "backfill", "proposals", "--user", "reader@example.org"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "users 1, messages 5, offered 3, stored 3, failed 0" in done.stdout
    assert snapshot(await proposals(diary)) == snapshot(live)


async def test_garbage_costs_only_its_own_message(diary: Diary) -> None:
    junk = bytes(range(256)) * 40
    raws = [make_message(subject="Empty", to=["reader@example.org"], body=""),
            make_message(subject="Binary", to=["reader@example.org"], body="").replace(b"\r\n\r\n",
                                                                                        b"\r\n\r\n" + junk, 1),
            make_message(subject="Html only", to=["reader@example.org"], html="<p>" + "<b>" * 500 + "</p>", body=""),
            mail(MEETING, subject="Fine", message_id="fine@x")]
    ids = await diary.deliver(*raws)
    # A provider's broken clock dates this one in the year 9999: reading "morgen" from it overflows.
    dateless = mail(LUNCH, subject="Broken clock").replace(b"Date: Tue, 01 Mar 2022", b"Date: Fri, 31 Dec 9999")
    broken = await diary.deliver(dateless, arrivals=[datetime(9999, 12, 31, 23, 30, tzinfo=UTC)])
    report = await run_job(diary, [*broken, *ids])
    assert (report["messages"], report["stored"], report["failed"]) == (5, 1, 1)
    (row,) = await proposals(diary)
    assert (row["message_id"], row["title"]) == (ids[3], "Fine")
