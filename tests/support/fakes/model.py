"""A fake model host: OpenAI-compatible chat completions and Ollama's chat API, with scriptable behaviour.

Endpoints (shapes from the OpenAI API reference and Ollama's docs/api.md):
- `POST /v1/chat/completions`   `{"id", "object": "chat.completion", "created", "model", "choices":
                                [{"index", "message": {"role", "content", "refusal"}, "finish_reason"}],
                                "usage"}`; `"stream": true` answers server-sent events
                                (`chat.completion.chunk` ... `data: [DONE]`)
- `GET  /v1/models`             `{"object": "list", "data": [{"id", "object": "model", ...}]}`
- `POST /api/chat`              `{"model", "created_at", "message": {"role", "content"}, "done": true,
                                "done_reason", durations, counts}`; streams NDJSON unless `"stream": false`
                                (Ollama's default is to stream)
- `GET  /api/tags`, `GET /api/version`

Errors: OpenAI's `{"error": {"message", "type", "param", "code"}}` (401 invalid_api_key when the fake
has an `api_key`, 404 model_not_found, 400 invalid_request_error, 429 rate_limit_exceeded with
`Retry-After`, 500 server_error); Ollama's `{"error": "..."}`.

What a test controls (`Behaviour`, set with `fake.set_behaviour(...)` as the default, `fake.queue(...)`
for one-shot answers consumed in order, or `fake.respond_with(fn)` to decide per request):
- `Behaviour.answer(category, reason)`     the content is `{"category": ..., "reason": ...}`
- `Behaviour.text(content)`                any content
- `Behaviour.refuse(text)`                 OpenAI: `content: null`, `refusal: text`; Ollama: the text
- `Behaviour.garbage(text)`                content that is not the JSON asked for
- `Behaviour.broken_body()`                HTTP 200 whose body is not JSON at all
- `Behaviour.error(status)`, `Behaviour.rate_limited(retry_after)`
- `Behaviour.hang()`                       never answers: held until the client gives up (disconnects),
                                           `fake.release()` or the server stops (then 503)
- `delay_ms=` on any of them               wait before answering
- `ModelFake(parallel=1)`                  answer one request after another, like one Ollama host
                                           (`OLLAMA_NUM_PARALLEL=1`): the rest wait in line in arrival order
Every request is recorded (`fake.requests`: api, model, messages, the prompt, timings, outcome) so a
test can assert the order in which messages were asked about and measure waits; `fake.max_in_flight`
shows how many were served at once; `wait_for_requests(n)` blocks until n arrived.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from tests.support.fakes._asgi import AsgiApp, Request, Response, json_response

BehaviourKind = Literal["answer", "refuse", "garbage", "broken_body", "error", "hang"]
Api = Literal["openai", "ollama"]


@dataclass(frozen=True)
class Behaviour:
    kind: BehaviourKind
    content: str = ""
    status: int = 200
    delay_ms: int = 0
    retry_after: float | None = None

    @classmethod
    def answer(cls, category: str, reason: str = "", *, delay_ms: int = 0) -> Behaviour:
        return cls("answer", json.dumps({"category": category, "reason": reason}), delay_ms=delay_ms)

    @classmethod
    def text(cls, content: str, *, delay_ms: int = 0) -> Behaviour:
        return cls("answer", content, delay_ms=delay_ms)

    @classmethod
    def refuse(cls, text: str = "I'm sorry, but I can't help with that request.", *, delay_ms: int = 0) -> Behaviour:
        return cls("refuse", text, delay_ms=delay_ms)

    @classmethod
    def garbage(cls, text: str = "Sure! The category is probably newsletter-ish?? {category: ", *,
                delay_ms: int = 0) -> Behaviour:
        return cls("garbage", text, delay_ms=delay_ms)

    @classmethod
    def broken_body(cls, body: str = "<html><body>502 Bad Gateway</body></html>", *, delay_ms: int = 0) -> Behaviour:
        return cls("broken_body", body, delay_ms=delay_ms)

    @classmethod
    def error(cls, status: int = 500, *, delay_ms: int = 0) -> Behaviour:
        return cls("error", "", status=status, delay_ms=delay_ms)

    @classmethod
    def rate_limited(cls, retry_after: float = 1.0, *, delay_ms: int = 0) -> Behaviour:
        return cls("error", "", status=429, delay_ms=delay_ms, retry_after=retry_after)

    @classmethod
    def hang(cls) -> Behaviour:
        return cls("hang")


Outcome = Literal["pending", "answered", "refused", "garbage", "broken_body", "error", "client_gone", "released"]


@dataclass
class ModelRequest:
    seq: int
    api: Api
    path: str
    model: str
    messages: list[dict[str, Any]]
    body: dict[str, Any]
    stream: bool
    received_at: float
    """`time.monotonic()` when the request arrived."""
    finished_at: float | None = None
    started_at: float | None = None
    """When the host began working on it (later than `received_at` while it waited for a free slot)."""
    outcome: Outcome = "pending"
    behaviour: Behaviour | None = None

    @property
    def prompt(self) -> str:
        """The last user message's text (what the classifier asked about)."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                content = message.get("content")
                if isinstance(content, list):  # OpenAI content parts
                    return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
                return str(content or "")
        return ""

    @property
    def system(self) -> str:
        return next((str(m.get("content") or "") for m in self.messages if m.get("role") == "system"), "")

    @property
    def duration(self) -> float | None:
        return None if self.finished_at is None else self.finished_at - self.received_at


class ModelFake(AsgiApp):
    """An OpenAI-compatible and Ollama model host whose answers a test scripts."""

    def __init__(self, *, models: tuple[str, ...] = ("llama3.2:3b", "gpt-4o-mini"), api_key: str | None = None,
                 default: Behaviour | None = None, parallel: int | None = None) -> None:
        super().__init__()
        self.parallel = parallel
        self._slots: asyncio.Semaphore | None = None  # made on the server's own loop, at first use
        self.models = models
        self.api_key = api_key
        self.default = default or Behaviour.answer("personal", "default answer of the fake model host")
        self.requests: list[ModelRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Condition()
        self._queue: list[Behaviour] = []
        self._decide: Callable[[ModelRequest], Behaviour | None] | None = None
        self._released = 0
        self._seq = itertools.count(1)
        self.router.add("POST", "/v1/chat/completions", self._openai_chat)
        self.router.add("GET", "/v1/models", self._openai_models)
        self.router.add("POST", "/api/chat", self._ollama_chat)
        self.router.add("GET", "/api/tags", self._ollama_tags)
        self.router.add("GET", "/api/version", self._ollama_version)

    # --- what a test sets ---
    def set_behaviour(self, behaviour: Behaviour) -> None:
        with self._lock:
            self.default = behaviour

    def queue(self, *behaviours: Behaviour) -> None:
        """One-shot behaviours for the next requests, in order; then the default again."""
        with self._lock:
            self._queue.extend(behaviours)

    def respond_with(self, decide: Callable[[ModelRequest], Behaviour | None] | None) -> None:
        """Decide per request (e.g. by `request.prompt`); None from `decide` falls back to queue/default."""
        with self._lock:
            self._decide = decide

    def release(self) -> None:
        """Let every request hanging right now finish (with a 503)."""
        with self._lock:
            self._released += 1

    def shutdown(self) -> None:
        """Called by `FakeServer.stop()`: hung requests end so the server can stop promptly."""
        self.release()

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self._queue.clear()
            self._decide = None
            self.max_in_flight = self.in_flight

    # --- what a test reads ---
    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    def prompts(self) -> list[str]:
        with self._lock:
            return [r.prompt for r in self.requests]

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[ModelRequest]:
        """Block until at least `count` requests arrived (for sync tests)."""
        with self._lock:
            if not self._lock.wait_for(lambda: len(self.requests) >= count, timeout):
                raise TimeoutError(f"{len(self.requests)} of {count} model requests after {timeout}s")
            return list(self.requests)

    async def wait_for_requests_async(self, count: int, timeout: float = 5.0) -> list[ModelRequest]:
        return await asyncio.to_thread(self.wait_for_requests, count, timeout)

    # --- serving ---
    def _begin(self, request: Request, api: Api, body: dict[str, Any]) -> ModelRequest:
        messages = body.get("messages")
        stream = bool(body.get("stream", api == "ollama"))
        with self._lock:
            record = ModelRequest(next(self._seq), api, request.path, str(body.get("model", "")),
                                  list(messages) if isinstance(messages, list) else [], body, stream,
                                  time.monotonic())
            self.requests.append(record)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self._lock.notify_all()
            decided = self._decide(record) if self._decide is not None else None
            if decided is None:
                decided = self._queue.pop(0) if self._queue else self.default
            record.behaviour = decided
            return record

    def _finish(self, record: ModelRequest, outcome: Outcome) -> None:
        with self._lock:
            record.finished_at = time.monotonic()
            record.outcome = outcome
            self.in_flight -= 1
            self._lock.notify_all()

    async def _wait(self, request: Request, seconds: float | None) -> Literal["done", "client_gone", "released"]:
        """Sleep `seconds` (None: forever) unless the client hangs up or the test releases hung requests."""
        with self._lock:
            released_at_start = self._released
        deadline = None if seconds is None else time.monotonic() + seconds
        while True:
            remaining = 0.02 if deadline is None else min(0.02, deadline - time.monotonic())
            if remaining <= 0:
                return "done"
            if await request.wait_disconnect(remaining):
                return "client_gone"
            with self._lock:
                if seconds is None and self._released != released_at_start:
                    return "released"

    def _authorized(self, request: Request, api: Api) -> Response | None:
        if self.api_key is None:
            return None
        header = request.header("authorization") or ""
        if header == f"Bearer {self.api_key}":
            return None
        if api == "ollama":
            return json_response({"error": "unauthorized"}, 401)
        shown = header[7:][:3] + "*" * 4 if header.startswith("Bearer ") else ""
        return _openai_error(401, f"Incorrect API key provided: {shown}.", "invalid_request_error", "invalid_api_key")

    def _body(self, request: Request, api: Api) -> dict[str, Any] | Response:
        try:
            body = request.json()
        except ValueError:
            if api == "ollama":
                return json_response({"error": "invalid character in request body"}, 400)
            return _openai_error(400, "We could not parse the JSON body of your request.", "invalid_request_error")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or not body.get("model"):
            if api == "ollama":
                return json_response({"error": "model and messages are required"}, 400)
            return _openai_error(400, "'messages' and 'model' are required properties.", "invalid_request_error")
        if body["model"] not in self.models:
            if api == "ollama":
                return json_response({"error": f"model \"{body['model']}\" not found, try pulling it first"}, 404)
            return _openai_error(404, f"The model `{body['model']}` does not exist or you do not have access to it.",
                                 "invalid_request_error", "model_not_found")
        return body

    async def _chat(self, request: Request, api: Api) -> Response:
        denied = self._authorized(request, api)
        if denied is not None:
            return denied
        body = self._body(request, api)
        if isinstance(body, Response):
            return body
        record = self._begin(request, api, body)
        if self.parallel is None:
            return await self._serve(request, api, record)
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.parallel)
        async with self._slots:
            return await self._serve(request, api, record)

    async def _serve(self, request: Request, api: Api, record: ModelRequest) -> Response:
        record.started_at = time.monotonic()
        behaviour = record.behaviour or self.default
        if behaviour.kind == "hang":
            ended = await self._wait(request, None)
            self._finish(record, "client_gone" if ended == "client_gone" else "released")
            return _error_for(api, 503, None)
        if behaviour.delay_ms and await self._wait(request, behaviour.delay_ms / 1000) == "client_gone":
            self._finish(record, "client_gone")
            return _error_for(api, 499, None)
        if behaviour.kind == "error":
            self._finish(record, "error")
            return _error_for(api, behaviour.status, behaviour.retry_after)
        if behaviour.kind == "broken_body":
            self._finish(record, "broken_body")
            return Response(200, behaviour.content.encode(), [("content-type", "application/json")])
        outcomes: dict[BehaviourKind, Outcome] = {"answer": "answered", "refuse": "refused", "garbage": "garbage"}
        self._finish(record, outcomes[behaviour.kind])
        refusal = behaviour.kind == "refuse"
        if api == "openai":
            return _openai_answer(record, behaviour.content, refusal=refusal)
        return _ollama_answer(record, behaviour.content)

    async def _openai_chat(self, request: Request) -> Response:
        return await self._chat(request, "openai")

    async def _ollama_chat(self, request: Request) -> Response:
        return await self._chat(request, "ollama")

    async def _openai_models(self, request: Request) -> Response:
        denied = self._authorized(request, "openai")
        if denied is not None:
            return denied
        return json_response({"object": "list", "data": [
            {"id": name, "object": "model", "created": 1_700_000_000, "owned_by": "fake"} for name in self.models]})

    async def _ollama_tags(self, request: Request) -> Response:
        return json_response({"models": [
            {"name": name, "model": name, "modified_at": "2026-01-01T00:00:00Z", "size": 2_019_393_189,
             "digest": hashlib.sha256(name.encode()).hexdigest(), "details": {"format": "gguf", "family": "llama"}}
            for name in self.models]})

    async def _ollama_version(self, request: Request) -> Response:
        return json_response({"version": "0.6.0"})


# --- response shapes ---------------------------------------------------------------------------
def _openai_error(status: int, message: str, kind: str, code: str | None = None,
                  headers: list[tuple[str, str]] | None = None) -> Response:
    return json_response({"error": {"message": message, "type": kind, "param": None, "code": code}}, status,
                         headers or [])


def _error_for(api: Api, status: int, retry_after: float | None) -> Response:
    headers = [("retry-after", str(max(1, round(retry_after))))] if retry_after is not None else []
    if api == "ollama":
        message = {429: "too many requests", 503: "server busy, please try again. maximum pending requests exceeded"}
        return json_response({"error": message.get(status, "an internal error occurred")}, status, headers)
    if status == 429:
        return _openai_error(429, "Rate limit reached for requests. Please try again later.", "requests",
                             "rate_limit_exceeded", headers)
    if status == 503:
        return _openai_error(503, "The engine is currently overloaded, please try again later.", "server_error")
    return _openai_error(status, "The server had an error while processing your request. Sorry about that!",
                         "server_error", None, headers)


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _openai_answer(record: ModelRequest, content: str, *, refusal: bool) -> Response:
    completion_id = f"chatcmpl-fake{record.seq:08d}"
    created = int(time.time())
    prompt_tokens = _tokens(json.dumps(record.messages))
    if record.stream:
        async def events() -> AsyncIterator[bytes]:
            def chunk(delta: dict[str, Any], finish: str | None) -> bytes:
                data = {"id": completion_id, "object": "chat.completion.chunk", "created": created,
                        "model": record.model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
                return f"data: {json.dumps(data)}\n\n".encode()

            yield chunk({"role": "assistant", "content": ""}, None)
            key = "refusal" if refusal else "content"
            for start in range(0, len(content), 16):
                yield chunk({key: content[start: start + 16]}, None)
            yield chunk({}, "stop")
            yield b"data: [DONE]\n\n"

        return Response(200, headers=[("content-type", "text/event-stream")], stream=events())
    message: dict[str, Any] = {"role": "assistant", "content": None if refusal else content,
                               "refusal": content if refusal else None}
    completion_tokens = _tokens(content)
    return json_response({
        "id": completion_id, "object": "chat.completion", "created": created, "model": record.model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    })


def _ollama_answer(record: ModelRequest, content: str) -> Response:
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    duration_ns = int(((record.finished_at or record.received_at) - record.received_at) * 1e9)
    final = {"model": record.model, "created_at": now, "message": {"role": "assistant", "content": ""},
             "done_reason": "stop", "done": True, "total_duration": duration_ns, "load_duration": 0,
             "prompt_eval_count": _tokens(json.dumps(record.messages)), "prompt_eval_duration": 0,
             "eval_count": _tokens(content), "eval_duration": duration_ns}
    if record.stream:
        async def lines() -> AsyncIterator[bytes]:
            for start in range(0, len(content), 16):
                part = {"model": record.model, "created_at": now,
                        "message": {"role": "assistant", "content": content[start: start + 16]}, "done": False}
                yield (json.dumps(part) + "\n").encode()
            yield (json.dumps(final) + "\n").encode()

        return Response(200, headers=[("content-type", "application/x-ndjson")], stream=lines())
    return json_response({**final, "message": {"role": "assistant", "content": content}})


__all__ = ["Behaviour", "BehaviourKind", "ModelFake", "ModelRequest", "Outcome"]
