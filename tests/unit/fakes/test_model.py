"""The model host fake over real HTTP: both APIs, every behaviour, request records and timings."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import httpx
import pytest

from tests.support.fakes import Behaviour, FakeServer, ModelFake

MODEL = "llama3.2:3b"


def _chat(prompt: str, **extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "messages": [{"role": "system", "content": "Classify the mail."},
                                         {"role": "user", "content": prompt}], **extra}


async def test_openai_answers_with_the_category_json_and_records_the_request(
        model: FakeServer[ModelFake], model_http: httpx.AsyncClient) -> None:
    model.app.set_behaviour(Behaviour.answer("newsletter", "a mailing list"))
    response = await model_http.post("/v1/chat/completions", json=_chat("Subject: Weekly digest", stream=False))
    assert response.status_code == 200
    body = response.json()
    assert body["object"] == "chat.completion" and body["model"] == MODEL
    choice = body["choices"][0]
    assert choice["finish_reason"] == "stop" and choice["message"]["role"] == "assistant"
    assert choice["message"]["refusal"] is None
    assert json.loads(choice["message"]["content"]) == {"category": "newsletter", "reason": "a mailing list"}
    assert set(body["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}

    [record] = model.app.requests
    assert (record.api, record.model, record.prompt, record.system) == (
        "openai", MODEL, "Subject: Weekly digest", "Classify the mail.")
    assert record.outcome == "answered" and record.duration is not None

    models = (await model_http.get("/v1/models")).json()
    assert models["object"] == "list" and [m["id"] for m in models["data"]] == [MODEL, "gpt-4o-mini"]


async def test_ollama_chat_without_and_with_streaming(
        model: FakeServer[ModelFake], model_http: httpx.AsyncClient) -> None:
    model.app.set_behaviour(Behaviour.answer("personal", "from a friend"))
    plain = (await model_http.post("/api/chat", json=_chat("hi", stream=False))).json()
    assert plain["done"] is True and plain["done_reason"] == "stop" and plain["model"] == MODEL
    assert json.loads(plain["message"]["content"])["category"] == "personal"
    assert {"total_duration", "eval_count", "prompt_eval_count", "created_at"} <= set(plain)

    streamed = await model_http.post("/api/chat", json=_chat("hi again"))  # Ollama streams by default
    assert streamed.headers["content-type"] == "application/x-ndjson"
    lines = [json.loads(line) for line in streamed.text.splitlines()]
    assert [line["done"] for line in lines][-1] is True and not any(line["done"] for line in lines[:-1])
    assert json.loads("".join(line["message"]["content"] for line in lines))["reason"] == "from a friend"

    tags = (await model_http.get("/api/tags")).json()
    assert MODEL in [m["name"] for m in tags["models"]]
    assert [r.stream for r in model.app.requests] == [False, True]


async def test_openai_streaming_sends_server_sent_events(
        model: FakeServer[ModelFake], model_http: httpx.AsyncClient) -> None:
    model.app.set_behaviour(Behaviour.text("x" * 40))
    response = await model_http.post("/v1/chat/completions", json=_chat("hi", stream=True))
    assert response.headers["content-type"] == "text/event-stream"
    events = [line[6:] for line in response.text.split("\n\n") if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks) == "x" * 40
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


async def test_refusals_garbage_and_broken_bodies(model: FakeServer[ModelFake], model_http: httpx.AsyncClient) -> None:
    fake = model.app
    fake.queue(Behaviour.refuse("I can't help with that."), Behaviour.refuse("No."), Behaviour.garbage(),
               Behaviour.broken_body())
    openai = (await model_http.post("/v1/chat/completions", json=_chat("a"))).json()["choices"][0]["message"]
    assert openai["content"] is None and openai["refusal"] == "I can't help with that."
    ollama = (await model_http.post("/api/chat", json=_chat("b", stream=False))).json()
    assert ollama["message"]["content"] == "No."
    garbage = (await model_http.post("/v1/chat/completions", json=_chat("c"))).json()
    with pytest.raises(json.JSONDecodeError):
        json.loads(garbage["choices"][0]["message"]["content"])
    broken = await model_http.post("/v1/chat/completions", json=_chat("d"))
    assert broken.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        broken.json()
    assert [r.outcome for r in fake.requests] == ["refused", "refused", "garbage", "broken_body"]
    # the queue is used up: back to the default behaviour
    assert (await model_http.post("/v1/chat/completions", json=_chat("e"))).status_code == 200


async def test_server_errors_and_rate_limits(model: FakeServer[ModelFake], model_http: httpx.AsyncClient) -> None:
    model.app.queue(Behaviour.error(500), Behaviour.rate_limited(retry_after=3), Behaviour.error(500))
    failed = await model_http.post("/v1/chat/completions", json=_chat("a"))
    assert failed.status_code == 500 and failed.json()["error"]["type"] == "server_error"
    limited = await model_http.post("/v1/chat/completions", json=_chat("b"))
    assert limited.status_code == 429 and limited.headers["retry-after"] == "3"
    assert limited.json()["error"]["code"] == "rate_limit_exceeded"
    ollama = await model_http.post("/api/chat", json=_chat("c", stream=False))
    assert ollama.status_code == 500 and isinstance(ollama.json()["error"], str)


async def test_delays_are_measurable_and_the_order_of_prompts_is_recorded(
        model: FakeServer[ModelFake], model_http: httpx.AsyncClient) -> None:
    fake = model.app
    fake.respond_with(lambda request: Behaviour.answer("updates", delay_ms=150) if "slow" in request.prompt else None)
    started = time.monotonic()
    await model_http.post("/v1/chat/completions", json=_chat("slow one"))
    assert time.monotonic() - started >= 0.15
    for subject in ("first", "second", "third"):
        await model_http.post("/api/chat", json=_chat(subject, stream=False))
    assert fake.prompts() == ["slow one", "first", "second", "third"]
    durations = [r.duration or 0 for r in fake.requests]
    assert durations[0] >= 0.15 and max(durations[1:]) < 0.15


async def test_concurrent_requests_are_counted(model: FakeServer[ModelFake], model_http: httpx.AsyncClient) -> None:
    model.app.set_behaviour(Behaviour.answer("personal", delay_ms=100))
    responses = await asyncio.gather(*[model_http.post("/v1/chat/completions", json=_chat(f"m{n}"))
                                       for n in range(4)])
    assert [r.status_code for r in responses] == [200] * 4
    assert model.app.max_in_flight == 4 and model.app.in_flight == 0


async def test_a_hanging_host_holds_the_request_until_the_client_gives_up(
        model: FakeServer[ModelFake], model_http: httpx.AsyncClient) -> None:
    model.app.set_behaviour(Behaviour.hang())
    started = time.monotonic()
    with pytest.raises(httpx.ReadTimeout):
        await model_http.post("/v1/chat/completions", json=_chat("stuck"), timeout=0.2)
    assert 0.2 <= time.monotonic() - started < 1
    for _ in range(100):  # the server notices the hang-up within a few polls
        if model.app.requests[0].outcome != "pending":
            break
        await asyncio.sleep(0.01)
    assert model.app.requests[0].outcome == "client_gone"


def test_a_hanging_request_ends_on_release_and_the_server_stops_promptly() -> None:
    fake = ModelFake(default=Behaviour.hang())
    with FakeServer(fake) as server:
        results: list[int] = []

        def ask() -> None:
            results.append(httpx.post(f"{server.url}/v1/chat/completions", json=_chat("x"), timeout=10).status_code)

        worker = threading.Thread(target=ask)
        worker.start()
        fake.wait_for_requests(1)
        fake.release()
        worker.join(5)
        assert results == [503]
        assert fake.requests[0].outcome == "released"

        hung = threading.Thread(target=ask)
        hung.start()
        fake.wait_for_requests(2)
        stopping = time.monotonic()
    assert time.monotonic() - stopping < 1.5  # stop() released the hung request
    hung.join(5)
    assert results == [503, 503]


async def test_api_key_and_unknown_models_are_checked() -> None:
    async with FakeServer(ModelFake(api_key="sk-test")) as server, httpx.AsyncClient(base_url=server.url) as http:
        denied = await http.post("/v1/chat/completions", json=_chat("a"))
        assert denied.status_code == 401 and denied.json()["error"]["code"] == "invalid_api_key"
        headers = {"Authorization": "Bearer sk-test"}
        unknown = await http.post("/v1/chat/completions", json={**_chat("a"), "model": "nope"}, headers=headers)
        assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "model_not_found"
        ollama = await http.post("/api/chat", json={**_chat("a"), "model": "nope"}, headers=headers)
        assert ollama.status_code == 404 and "not found" in ollama.json()["error"]
        malformed = await http.post("/v1/chat/completions", content=b"{", headers=headers)
        assert malformed.status_code == 400
        assert (await http.post("/v1/chat/completions", json=_chat("a"), headers=headers)).status_code == 200
        assert server.app.request_count == 1  # rejected requests never reached "the model"
