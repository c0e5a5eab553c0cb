"""Holding new mail for the assistant, and the three ways it ends (seed: "Mail für den Assistenten zurückhalten")."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from plmail.domain.enums import QueueName
from plmail.domain.errors import ValidationError
from plmail.domain.ingest import PostIngestResult
from plmail.jobs.assistant import release_overdue_held
from plmail.jobs.catalog import default_catalog
from plmail.jobs.context import SERVICES_KEY
from plmail.jobs.workers import WorkerSupervisor
from plmail.mail.ingest import parse_message
from plmail.mail.rules.model import RuleDraft
from tests.integration.assistant.conftest import Desk, eventually
from tests.support.fakes.model import Behaviour
from tests.support.mail import make_message


async def test_held_mail_is_in_no_tab_until_the_verdict_releases_it_into_the_models_tab(
    desk: Desk, workers: WorkerSupervisor
) -> None:
    await desk.configure(hold_max_seconds=60)
    desk.model.set_behaviour(Behaviour.answer("promotions", "a shop's sale", delay_ms=800))
    stored = await desk.arrive(subject="Our summer sale", sender="Sunny <hello@sunny.example>")
    assert stored.held and stored.thread_id is not None

    row = await desk.message(stored.id)
    assert row["category_held_at"] is not None and row["category_released_at"] is None
    assert row["category"] == "primary"  # the cascade's answer, kept for a release without verdict
    assert row["thread_category"] is None
    assert await desk.tabs_showing(stored.thread_id) == []

    async def released() -> bool:
        return (await desk.message(stored.id))["category_released_at"] is not None

    waited = await eventually(released, what="the verdict released the message")
    assert waited < 10
    row = await desk.message(stored.id)
    assert (row["category"], row["ai_category"], row["ai_reason"]) == ("promotions", "promotions", "a shop's sale")
    assert row["thread_category"] == "promotions"
    assert await desk.tabs_showing(stored.thread_id) == ["promotions"]
    assert desk.model.request_count == 1 and "Our summer sale" in desk.model.prompts()[0]
    stats = await desk.services.assistant.hold_stats()
    assert stats.held == 1 and stats.shown_before_verdict == 0
    assert stats.median_seconds is not None and 0.5 < stats.median_seconds < 10


async def test_the_delayed_job_releases_under_the_cascade_and_a_late_verdict_moves_the_thread_once(
    desk: Desk, workers: WorkerSupervisor
) -> None:
    await desk.configure(hold_max_seconds=2, timeout_seconds=20)
    desk.model.set_behaviour(Behaviour.answer("promotions", "marketing", delay_ms=5000))
    stored = await desk.arrive(subject="New arrivals", sender="Shop <team@shop.example>")
    assert stored.held and stored.thread_id is not None
    release_jobs = await desk.jobs(QueueName.RELEASE, "release_held")
    assert len(release_jobs) == 1 and release_jobs[0]["kwargs"] == {"message_ids": [stored.id]}

    async def released() -> bool:
        return (await desk.message(stored.id))["category_released_at"] is not None

    await eventually(released, timeout=6, what="the delayed release job")
    row = await desk.message(stored.id)
    assert row["ai_categorised_at"] is None  # the model has not answered yet
    assert await desk.tabs_showing(stored.thread_id) == ["primary"]
    [job] = await desk.jobs(QueueName.RELEASE, "release_held")
    assert job["status"] == "complete" and job["result"] == 1

    before = await desk.services.db.fetchval(
        "SELECT count(*) FROM jmap_change_log WHERE object_type = 'Thread' AND entity_id = $1",
        str(stored.thread_id),
    )

    async def answered() -> bool:
        return (await desk.message(stored.id))["ai_categorised_at"] is not None

    await eventually(answered, timeout=10, what="the late verdict")
    assert await desk.tabs_showing(stored.thread_id) == ["promotions"]
    after = await desk.services.db.fetchval(
        "SELECT count(*) FROM jmap_change_log WHERE object_type = 'Thread' AND entity_id = $1",
        str(stored.thread_id),
    )
    assert after - before == 1  # the verdict moved the thread once, announced once
    assert desk.model.request_count == 1  # and the message was asked about once
    stats = await desk.services.assistant.hold_stats()
    assert stats.shown_before_verdict == 1


async def test_the_minute_cron_releases_what_no_job_released(desk: Desk) -> None:
    """No worker runs and the delayed job is lost (its row deleted); the safety-net cron still releases."""
    await desk.configure(hold_max_seconds=2)
    desk.model.set_behaviour(Behaviour.hang())
    stored = await desk.arrive(subject="Lost job")
    assert stored.held
    await desk.services.db.execute("DELETE FROM saq_jobs WHERE queue = 'release'")
    await asyncio.sleep(2.2)
    spec = [c for c in default_catalog().crons_for(QueueName.RELEASE) if c.function is release_overdue_held]
    assert spec and spec[0].spec.cron == "* * * * *"
    released = await release_overdue_held({SERVICES_KEY: desk.services})
    assert released == 1
    row = await desk.message(stored.id)
    assert row["category_released_at"] is not None and row["thread_category"] == "primary"
    assert await release_overdue_held({SERVICES_KEY: desk.services}) == 0  # releasing is idempotent


async def test_a_reply_held_in_an_existing_thread_leaves_that_thread_where_it_is(
    desk: Desk, workers: WorkerSupervisor
) -> None:
    await desk.configure(hold=False)
    first = await desk.arrive(subject="Plans", sender="Ann <ann@friends.example>", message_id="plans-1@friends")
    assert not first.held and first.thread_id is not None
    assert await desk.tabs_showing(first.thread_id) == ["primary"]
    await desk.configure(hold=True, hold_max_seconds=60)
    desk.model.set_behaviour(Behaviour.answer("promotions", "odd", delay_ms=1500))
    reply = await desk.arrive(subject="Re: Plans", sender="Bob <bob@other.example>", message_id="plans-2@other",
                              in_reply_to="plans-1@friends")
    assert reply.held and reply.thread_id == first.thread_id
    assert await desk.tabs_showing(first.thread_id) == ["primary"]


async def test_what_is_never_held(desk: Desk) -> None:
    services = desk.services
    await desk.configure(hold=True)
    importing = await desk.imap_account("importing", importing=True)
    cases = {
        "import": dict(account_id=importing),
        "old": dict(date=datetime.now(UTC) - timedelta(days=45)),
        "own sent copy": dict(sender="Me <live@example.org>"),
        "list mail stays askable": dict(headers={"List-Unsubscribe": "<mailto:u@shop.example>"}),
    }
    held = {}
    for name, facts in cases.items():
        stored = await desk.arrive(subject=name, **facts)  # type: ignore[arg-type]
        held[name] = stored.held
    assert held == {"import": False, "old": False, "own sent copy": False, "list mail stays askable": True}

    # A known correspondent (someone the user wrote to) settles the tab: nothing to wait for.
    sent = make_message(subject="Lunch?", sender="Me <live@example.org>", to=("Friend <friend@pals.example>",),
                        date=datetime.now(UTC), message_id="lunch@me")
    await services.pipeline.ingest([parse_message(sent, account_id=desk.account_id, label_ids=(desk.inbox,))])
    assert not (await desk.arrive(subject="Re: Lunch?", sender="Friend <friend@pals.example>")).held

    # Switched off on the admin page, or no model at all.
    await desk.configure(hold=False)
    assert not (await desk.arrive(subject="off")).held
    await desk.configure(url="")
    assert not (await desk.arrive(subject="no model")).held

    # A user who sorts by rules never waits.
    await desk.configure(hold=True)
    assert await services.sorting.save(desk.user.id, sorting="rules", disabled=[])
    assert not (await desk.arrive(subject="rules")).held


async def test_held_mail_gets_its_proposals_once_released_and_sorted(desk: Desk, workers: WorkerSupervisor) -> None:
    """The proposer reads only General mail; held mail is not sorted yet, so its pass waits for the release."""
    await desk.configure(hold_max_seconds=60)
    desk.model.set_behaviour(Behaviour.answer("primary", "a friend writes", delay_ms=500))
    stored = await desk.arrive(subject="Lunch", sender="Ann <ann@friends.example>", to=("Me <live@example.org>",),
                               body="Shall we meet for lunch tomorrow at 12:30 at the usual place?\n")
    assert stored.held
    assert await desk.jobs(QueueName.ENRICH_LIVE, "propose_events") == []  # not while it is held

    async def proposed() -> bool:
        return bool(await desk.services.db.fetchval(
            "SELECT count(*) FROM event_proposal WHERE message_id = $1", stored.id))

    await eventually(proposed, what="the proposal after the release")
    [job] = await desk.jobs(QueueName.ENRICH_LIVE, "propose_events")
    assert job["kwargs"]["message_ids"] == [stored.id]


async def test_a_filed_message_held_for_the_assistant_is_in_no_tab_until_released_into_the_rules_tab(
    desk: Desk,
) -> None:
    """The user's category resolves hold-aware, like the built-in one (seed: "pin-bewusst, Hold-bewusst")."""
    services = desk.services
    await desk.configure(hold_max_seconds=60)
    desk.model.set_behaviour(Behaviour.hang())
    labels = {r["id"] for r in await services.db.fetch("SELECT id FROM label")}
    await services.rules.save(desk.user.id, None, RuleDraft(
        "bank", None, {"from": "bank.example"}, [{"type": "fileIntoCategory", "category": "updates"}]),
        labels, {desk.account_id})
    await services.sender_auth.set_receivers(desk.user.id, desk.account_id, ["mx.example.net"])
    stored = await desk.arrive(subject="Statement", sender="Bank <alerts@bank.example>", headers={
        "Authentication-Results": "mx.example.net; dkim=pass header.d=bank.example; dmarc=pass"})
    assert stored.held and stored.thread_id is not None
    assert await desk.tabs_showing(stored.thread_id) == []
    assert await services.assistant.releaser.release([stored.id]) == 1
    assert await desk.tabs_showing(stored.thread_id) == ["updates"]


async def test_the_timed_release_is_scheduled_even_when_the_model_was_switched_off_meanwhile(desk: Desk) -> None:
    """Seed: "deshalb wird die zeitgesteuerte Freigabe in ClassifyMailStep vor der Feature-Prüfung abgeschickt" —
    held mail must come out even if the model was switched off between the hold and the step."""
    services = desk.services
    await desk.configure(hold_max_seconds=60)
    desk.model.set_behaviour(Behaviour.hang())
    stored = await desk.arrive(subject="Switched off meanwhile")
    assert stored.held
    await services.db.execute("DELETE FROM saq_jobs")
    await desk.configure(url="")  # no model now: nothing will be classified
    [step] = [s for s in services.pipeline.steps.steps if s.name == "classify_mail"]
    await step.after_commit(PostIngestResult(messages=(stored,), accounts={}, threads_by_account={}, live=True,
                                             recent_ids=(stored.id,)))
    [job] = await desk.jobs(QueueName.RELEASE, "release_held")
    assert job["kwargs"] == {"message_ids": [stored.id]}
    assert await desk.jobs(QueueName.ENRICH_LIVE, "classify_messages") == []


async def test_the_hold_lasts_60_seconds_by_default_and_between_2_and_300(desk: Desk) -> None:
    """Seed: "mit einer Verzögerung von AiSettings::$holdMaxSeconds (Vorgabe 60, 2–300) abgeschickt"."""
    services = desk.services
    assert (await services.assistant_settings.load()).hold_max_seconds == 60
    for refused in (1, 301):
        with pytest.raises(ValidationError):
            await desk.configure(hold_max_seconds=refused)
    for allowed in (2, 300):
        await desk.configure(hold_max_seconds=allowed)
        assert (await services.assistant_settings.load()).hold_max_seconds == allowed
    await services.db.execute("UPDATE app_setting SET value = jsonb_set(value, '{hold_max_seconds}', '1') "
                              "WHERE key = 'assistant'")
    assert (await services.assistant_settings.load()).hold_max_seconds == 2  # a stored value below is raised
    await desk.configure(hold_max_seconds=60)
    desk.model.set_behaviour(Behaviour.hang())
    stored = await desk.arrive(subject="Waits a minute")
    [job] = [j for j in await desk.jobs(QueueName.RELEASE, "release_held")
             if j["kwargs"]["message_ids"] == [stored.id]]
    assert job["scheduled"] - job["queued"] / 1000 == pytest.approx(60, abs=2)  # saq: seconds, and milliseconds
