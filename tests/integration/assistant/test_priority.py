"""Routing follow-up work by the mail, and live mail ahead of bulk classification on one model host."""

from __future__ import annotations

import itertools
import time

from plmail.domain.enums import QueueName
from plmail.jobs.workers import WorkerSupervisor
from tests.integration.assistant.conftest import Desk, eventually
from tests.support.fakes.model import Behaviour, ModelFake
from tests.support.fakes.server import FakeServer

MODEL_MS = 200


async def test_live_mail_is_asked_before_the_import_backlog_and_import_work_stays_off_enrich_live(
    desk: Desk, workers: WorkerSupervisor
) -> None:
    host = ModelFake(parallel=1, default=Behaviour.answer("updates", "a notice", delay_ms=MODEL_MS))
    async with FakeServer(host) as server:
        await desk.configure(url=server.url, hold_max_seconds=60, timeout_seconds=10)
        importing = await desk.imap_account("big", importing=True)
        imported = await desk.arrive_many([{"subject": f"Imported {i}"} for i in range(60)], account_id=importing)
        assert not any(m.held for m in imported)  # import mail is never held
        await host.wait_for_requests_async(3, timeout=10)

        arrived = time.monotonic()
        live = await desk.arrive(subject="Live mail", sender="Post <post@bank.example>")
        assert live.held and live.thread_id is not None
        thread_id = live.thread_id

        async def visible() -> bool:
            return await desk.tabs_showing(thread_id) == ["updates"]

        await eventually(visible, timeout=10, what="the live mail in its tab")
        visible_after = time.monotonic() - arrived

        [live_request] = [r for r in host.requests if "Live mail" in r.prompt]
        assert live_request.started_at is not None
        waited_for_host = live_request.started_at - live_request.received_at
        bulk_before_live = [r for r in host.requests if "Imported" in r.prompt and r.seq < live_request.seq]
        # Most of the backlog was still waiting, yet the live question went first, behind at most one bulk call.
        assert len(bulk_before_live) < 20, len(bulk_before_live)
        assert waited_for_host <= MODEL_MS / 1000 + 0.15, waited_for_host
        assert visible_after < 1.5, visible_after

        # The import's follow-up work (classification and event extraction) never ran on enrich_live.
        on_live = {i for job in await desk.jobs(QueueName.ENRICH_LIVE) for i in job["kwargs"].get("message_ids", [])}
        assert on_live == {live.id}
        on_enrich = {i for job in await desk.jobs(QueueName.ENRICH, "classify_messages")
                     for i in job["kwargs"]["message_ids"]}
        assert on_enrich == {m.id for m in imported}

        async def backlog_done() -> bool:
            return sum(1 for r in host.requests if "Imported" in r.prompt and r.outcome == "answered") == 60

        await eventually(backlog_done, timeout=30, what="the import's questions")
        # Bulk questions went one at a time: none arrived before the previous one was answered.
        bulk = sorted((r for r in host.requests if "Imported" in r.prompt), key=lambda r: r.received_at)
        assert all(b.received_at >= a.finished_at for a, b in itertools.pairwise(bulk)
                   if a.finished_at is not None)


async def test_catch_up_waits_for_every_import_to_finish_and_for_an_empty_backlog_queue(desk: Desk) -> None:
    services = desk.services
    await desk.configure(hold=False)
    other = await desk.imap_account("second", importing=True)
    old = [await desk.arrive(subject=f"Old {i}", account_id=other) for i in range(3)]
    assert await services.classification_catch_up.run() == 0  # one account of the user is still importing
    assert await desk.jobs(QueueName.ENRICH_BACKLOG) == []

    await services.db.execute("UPDATE mailbox SET import_floor_uid = 1 WHERE account_id = $1", other)
    queued = await services.classification_catch_up.run()
    assert queued == len(old)
    [job] = await desk.jobs(QueueName.ENRICH_BACKLOG, "classify_messages")
    assert job["kwargs"]["message_ids"] == [m.id for m in reversed(old)]  # newest first
    assert await services.classification_catch_up.run() == 0  # the queue is not empty yet

    await services.db.execute("DELETE FROM saq_jobs WHERE queue = 'enrich_backlog'")
    await services.db.execute("UPDATE message SET ai_categorised_at = now() WHERE id = $1", old[0].id)
    assert await services.classification_catch_up.run() == 2  # ai_categorised_at is the progress mark

    await services.db.execute("DELETE FROM saq_jobs WHERE queue = 'enrich_backlog'")
    await desk.configure(url="")
    assert await services.classification_catch_up.run() == 0  # without a model there is nothing to catch up


async def test_the_backlog_is_classified_after_live_and_enrich_work(desk: Desk, workers: WorkerSupervisor) -> None:
    await desk.configure(url="")  # mail that arrived before a model was set up was never asked about
    stored = await desk.arrive_many([{"subject": f"Archive {i}"} for i in range(4)])
    assert await desk.jobs(QueueName.ENRICH_LIVE, "classify_messages") == []
    await desk.configure(hold=False)
    desk.model.set_behaviour(Behaviour.answer("forums", "a list"))
    assert await desk.services.classification_catch_up.run() == 4

    async def classified() -> bool:
        rows = [await desk.message(m.id) for m in stored]
        return all(r["ai_category"] == "forums" for r in rows)

    await eventually(classified, what="the catch-up's verdicts")
    for message in stored:
        assert message.thread_id is not None
        assert await desk.tabs_showing(message.thread_id) == ["forums"]
