"""Administration → Assistant, the queue panel's failures, and the user's sorting settings, over HTTP."""

from __future__ import annotations

import dataclasses
import re

import httpx

from plmail.domain.enums import QueueName
from plmail.domain.jobs import RELEASE_HELD, JobSpec
from plmail.jobs.workers import WorkerSupervisor
from tests.integration.assistant.conftest import Desk, eventually
from tests.support.fakes.model import Behaviour, ModelFake
from tests.support.fakes.server import FakeServer
from tests.support.net import free_port
from tests.support.web import post_form, sign_in


async def _admin(client: httpx.AsyncClient, desk: Desk) -> None:
    await desk.services.users.create_user("admin@example.org", "correct horse", is_admin=True)
    assert (await sign_in(client, "admin@example.org", "correct horse")).status_code == 200


def _form(desk: Desk, **changes: str) -> dict[str, str]:
    form = {"kind": "openai", "url": desk.model_url, "model": "gpt-4o-mini", "api_key": "",
            "timeout_seconds": "5", "hold_enabled": "on", "hold_max_seconds": "30"}
    form.update(changes)
    return form


async def test_the_admin_sets_up_and_tests_the_model_host(client: httpx.AsyncClient, desk: Desk) -> None:
    await _admin(client, desk)
    page = await client.get("/admin")
    assert page.status_code == 200 and "Assistant" in page.text and 'name="url" type="url" value=""' in page.text

    desk.model.set_behaviour(Behaviour.answer("promotions", "a shoe sale"))
    tested = await post_form(client, "/admin/assistant/test", _form(desk), token_from="/admin")
    assert tested.status_code == 200
    assert "The model answered in" in tested.text and "Promotions" in tested.text and "a shoe sale" in tested.text
    assert (await desk.services.assistant_settings.load()).host is None  # testing saves nothing

    down = await post_form(client, "/admin/assistant/test", _form(desk, url=f"http://127.0.0.1:{free_port()}"),
                           token_from="/admin")
    assert "cannot be reached" in down.text
    desk.model.set_behaviour(Behaviour.garbage())
    wrong = await post_form(client, "/admin/assistant/test", _form(desk), token_from="/admin")
    assert "not with one of the five tabs" in wrong.text

    refused = await post_form(client, "/admin/assistant", _form(desk, hold_max_seconds="500"), token_from="/admin")
    assert refused.status_code == 400 and "Hold mail between 2 and 300 seconds." in refused.text
    bad_url = await post_form(client, "/admin/assistant", _form(desk, url="ftp://model"), token_from="/admin")
    assert bad_url.status_code == 400 and "must start with http" in bad_url.text

    saved = await post_form(client, "/admin/assistant", _form(desk, api_key="sk-secret-1"), token_from="/admin")
    assert saved.status_code == 200 and "Saved." in saved.text
    settings = await desk.services.assistant_settings.load()
    assert settings.host is not None and settings.host.has_key and settings.hold_max_seconds == 30
    assert await desk.services.assistant_settings.api_key() == "sk-secret-1"
    stored = await desk.services.db.fetchval("SELECT value::text FROM app_setting WHERE key = 'assistant'")
    assert "sk-secret-1" not in stored  # sealed with the installation key
    # Saving again with the key field empty keeps the stored key.
    await post_form(client, "/admin/assistant", _form(desk), token_from="/admin")
    assert await desk.services.assistant_settings.api_key() == "sk-secret-1"

    await desk.services.db.execute("UPDATE app_user SET locale = 'de' WHERE email = 'admin@example.org'")
    german = await client.get("/admin")
    assert "Assistent" in german.text and "Verbindung testen" in german.text and "Wartet am längsten" in german.text


async def test_the_stored_key_goes_only_to_the_origin_it_was_saved_for(client: httpx.AsyncClient,
                                                                       desk: Desk) -> None:
    await _admin(client, desk)
    desk.model.api_key = "sk-secret-1"  # the saved host wants the key
    desk.model.set_behaviour(Behaviour.answer("promotions", "a shoe sale"))
    await post_form(client, "/admin/assistant", _form(desk, api_key="sk-secret-1"), token_from="/admin")
    same = await post_form(client, "/admin/assistant/test", _form(desk, url=desk.model_url + "/v1/../"),
                           token_from="/admin")
    assert "The model answered in" in same.text  # same origin, key field empty: the stored key goes along

    async with FakeServer(ModelFake(api_key="sk-secret-1")) as elsewhere:
        # A typed URL elsewhere, key field empty: were the stored key sent, this host would accept it.
        for url in (elsewhere.url, desk.model_url.replace("127.0.0.1", "localhost")):
            tested = await post_form(client, "/admin/assistant/test", _form(desk, url=url), token_from="/admin")
            assert tested.status_code == 200 and "The model answered in" not in tested.text, url
            assert "answered 401" in tested.text, url  # it was asked, without the key
        moved = await post_form(client, "/admin/assistant", _form(desk, url=elsewhere.url), token_from="/admin")
        assert moved.status_code == 400 and "enter its API key again" in moved.text
        assert (await desk.services.assistant_settings.load()).host.url == desk.model_url  # type: ignore[union-attr]
        rekeyed = await post_form(client, "/admin/assistant", _form(desk, url=elsewhere.url, api_key="sk-secret-1"),
                                  token_from="/admin")
        assert rekeyed.status_code == 200
        assert await desk.services.assistant_settings.api_key() == "sk-secret-1"
        assert await desk.services.assistant_settings.api_key(for_url=desk.model_url) is None


async def test_hold_statistics_show_on_the_admin_page(client: httpx.AsyncClient, desk: Desk,
                                                      workers: WorkerSupervisor) -> None:
    await desk.configure(hold_max_seconds=60)
    desk.model.set_behaviour(Behaviour.answer("updates", "a receipt", delay_ms=300))
    stored = await desk.arrive_many([{"subject": f"Receipt {i}"} for i in range(3)])

    async def released() -> bool:
        rows = [await desk.message(m.id) for m in stored]
        return all(r["category_released_at"] is not None for r in rows)

    await eventually(released, what="the verdicts")
    await _admin(client, desk)
    page = await client.get("/admin")
    assert re.search(r'<td class="held">3</td>', page.text)
    assert re.search(r'<td class="median">\d+\.\d s</td>', page.text)
    assert re.search(r'<td class="early">0</td>', page.text)


async def test_failed_jobs_show_with_retry_and_discard(client: httpx.AsyncClient, desk: Desk,
                                                       workers: WorkerSupervisor) -> None:
    services = desk.services
    # One attempt, so the failure shows at once.
    await services.queues.enqueue(dataclasses.replace(RELEASE_HELD, retries=1), message_ids=["not-a-number"])

    async def failed() -> bool:
        return any(j["status"] == "failed" for j in await desk.jobs(QueueName.RELEASE, "release_held"))

    await eventually(failed, what="the failing job")
    await services.queues.enqueue(JobSpec("nobody_runs_this", QueueName.INGEST_BACKLOG))  # no worker on that queue here
    await _admin(client, desk)
    panel = await client.get("/admin/queues")
    [key] = re.findall(r'hx-post="/admin/jobs/([^"/]+)/retry"', panel.text)
    assert "invalid literal for int()" in panel.text
    assert re.search(r'<tr data-queue="ingest_backlog">.*?<td class="oldest">\d+ s</td>', panel.text, re.S)
    assert re.search(r'<tr data-queue="enrich">.*?<td class="oldest">–</td>', panel.text, re.S)

    retried = await post_form(client, f"/admin/jobs/{key}/retry", {}, token_from="/admin")
    assert retried.status_code == 200

    async def failed_again() -> bool:
        jobs = await desk.jobs(QueueName.RELEASE, "release_held")
        return any(j["status"] == "failed" and j["attempts"] == 1 and j["completed"] for j in jobs)

    await eventually(failed_again, what="the retried job ran again")
    discarded = await post_form(client, f"/admin/jobs/{key}/discard", {}, token_from="/admin")
    assert discarded.status_code == 200 and "No failed jobs." in discarded.text
    gone = await post_form(client, f"/admin/jobs/{key}/discard", {}, token_from="/admin")
    assert gone.status_code == 404


async def test_a_user_switches_to_rules_and_off_a_tab_and_mail_is_re_sorted(
    client: httpx.AsyncClient, desk: Desk, workers: WorkerSupervisor
) -> None:
    services = desk.services
    await desk.configure(hold=False)
    desk.model.set_behaviour(Behaviour.answer("promotions", "a sale"))
    plain = await desk.arrive(subject="Hello from the shop", sender="Shop <hi@shop.example>")
    social = await desk.arrive(subject="You have a new follower", sender="Net <notify@linkedin.com>")

    async def asked() -> bool:
        return (await desk.message(plain.id))["ai_category"] == "promotions"

    await eventually(asked, what="the assistant's verdict")
    assert plain.thread_id is not None and social.thread_id is not None
    assert await desk.tabs_showing(plain.thread_id) == ["promotions"]

    assert (await sign_in(client, desk.user.email, "correct horse")).status_code == 200
    page = await client.get("/settings/sorting")  # Settings → Inbox sorting (issue 32: a section of its own)
    assert 'name="sorting" value="assistant" checked' in page.text
    changed = await post_form(client, "/settings/sorting",
                              {"sorting": "rules", "enabled": ["promotions", "updates", "forums"]},  # type: ignore[dict-item]
                              token_from="/settings")
    assert changed.status_code == 200 and "Your mail is being sorted again." in changed.text
    assert 'name="sorting" value="rules" checked' in changed.text

    async def resorted() -> bool:
        return await desk.tabs_showing(plain.thread_id or 0) == ["primary"]

    await eventually(resorted, what="the re-sort by rules")
    # Social is off: LinkedIn mail is in General, and the assistant's old verdict is kept but unused.
    assert await desk.tabs_showing(social.thread_id) == ["primary"]
    assert (await desk.message(plain.id))["ai_category"] == "promotions"
    same = await post_form(client, "/settings/sorting",
                           {"sorting": "rules", "enabled": ["promotions", "updates", "forums"]},  # type: ignore[dict-item]
                           token_from="/settings")
    assert "being sorted again" not in same.text  # nothing changed, nothing re-sorted
    bad = await post_form(client, "/settings/sorting", {"sorting": "astrology"}, token_from="/settings")
    assert bad.status_code == 400 and "Choose who sorts your mail." in bad.text
    assert len(await desk.jobs(QueueName.ENRICH, "resort_mail")) == 1
    assert not (await desk.arrive(subject="After the switch")).held
    assert services is desk.services
