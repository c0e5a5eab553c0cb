"""A model that is slow, wrong or down never loses or mis-files mail."""

from __future__ import annotations

import pytest

from plmail.jobs.workers import WorkerSupervisor
from tests.integration.assistant.conftest import Desk, eventually
from tests.support.fakes.model import Behaviour
from tests.support.net import free_port

FAILURES = {
    "timeout": (Behaviour.hang(), "timeout"),
    "refusal": (Behaviour.refuse(), "refused"),
    "prose": (Behaviour.garbage(), "garbage"),
    "unknown tab": (Behaviour.text('{"category": "spam", "reason": "looks bad"}'), "garbage"),
    "injected tab": (Behaviour.text('{"category": "promotions; DROP TABLE message", "reason": "x"}'), "garbage"),
    "html error page": (Behaviour.broken_body(), "garbage"),
    "server error": (Behaviour.error(500), "unavailable"),
    "rate limited": (Behaviour.rate_limited(30), "unavailable"),
}


@pytest.mark.parametrize("case", list(FAILURES))
async def test_a_bad_answer_releases_the_mail_under_the_cascade_category(
    desk: Desk, workers: WorkerSupervisor, case: str
) -> None:
    behaviour, kind = FAILURES[case]
    await desk.configure(hold_max_seconds=60, timeout_seconds=1.0)
    desk.model.set_behaviour(behaviour)
    newsletter = await desk.arrive(subject=f"Weekly news ({case})", sender="News <news@paper.example>",
                                   headers={"List-Unsubscribe": "<mailto:leave@paper.example>"})
    assert newsletter.held and newsletter.thread_id is not None

    async def released() -> bool:
        return (await desk.message(newsletter.id))["category_released_at"] is not None

    await eventually(released, timeout=8, what=f"release after {case}")
    row = await desk.message(newsletter.id)
    assert row["category"] == "promotions"  # what the header rules said, not a guess from the answer
    assert row["ai_category"] is None
    assert await desk.tabs_showing(newsletter.thread_id) == ["promotions"]
    if kind == "unavailable":
        # The host could not answer at all: the message stays unasked so the catch-up asks again later.
        assert row["ai_categorised_at"] is None and row["ai_error"] is None
    else:
        assert row["ai_categorised_at"] is not None and row["ai_error"].startswith(kind)


async def test_a_host_that_is_down_costs_nothing_and_stops_the_rest_of_the_job(
    desk: Desk, workers: WorkerSupervisor
) -> None:
    await desk.configure(url=f"http://127.0.0.1:{free_port()}", hold_max_seconds=60, timeout_seconds=1.0)
    stored = await desk.arrive_many([{"subject": f"Note {i}"} for i in range(5)])
    assert all(m.held for m in stored)

    async def all_released() -> bool:
        rows = [await desk.message(m.id) for m in stored]
        return all(r["category_released_at"] is not None for r in rows)

    await eventually(all_released, timeout=8, what="release while the host is down")
    for message in stored:
        assert message.thread_id is not None
        assert await desk.tabs_showing(message.thread_id) == ["primary"]
        assert (await desk.message(message.id))["ai_categorised_at"] is None


async def test_one_bad_answer_in_a_batch_costs_only_that_message(desk: Desk, workers: WorkerSupervisor) -> None:
    await desk.configure(hold_max_seconds=60)

    def decide(request: object) -> Behaviour | None:
        prompt = getattr(request, "prompt", "")
        return Behaviour.garbage() if "Odd one" in prompt else Behaviour.answer("updates", "a notice")

    desk.model.respond_with(decide)
    stored = await desk.arrive_many([{"subject": "Receipt 1"}, {"subject": "Odd one"}, {"subject": "Receipt 2"}])

    async def all_released() -> bool:
        rows = [await desk.message(m.id) for m in stored]
        return all(r["category_released_at"] is not None for r in rows)

    await eventually(all_released, what="every message released")
    tabs = [(await desk.message(m.id))["thread_category"] for m in stored]
    assert tabs == ["updates", "primary", "updates"]
