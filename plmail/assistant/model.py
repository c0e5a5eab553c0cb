"""Talking to the model host: an OpenAI-compatible chat-completions endpoint, or Ollama."""

from __future__ import annotations

from typing import Protocol

import httpx

from plmail.assistant.settings import ModelHost
from plmail.domain.errors import PlmailError


class ModelError(PlmailError):
    """The model gave no usable answer; `kind` is timeout, refused, garbage or unavailable."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class ModelClient(Protocol):
    kind: str

    async def chat(self, http: httpx.AsyncClient, host: ModelHost, api_key: str | None, system: str, user: str,
                   seconds: float) -> str: ...


async def _post(http: httpx.AsyncClient, url: str, body: dict[str, object], headers: dict[str, str],
                seconds: float) -> dict[str, object]:
    try:
        response = await http.post(url, json=body, headers=headers, timeout=seconds)
    except httpx.TimeoutException:
        raise ModelError(f"The model did not answer within {seconds:.0f} s.", "timeout") from None
    except httpx.HTTPError as exc:
        raise ModelError(f"The model host cannot be reached: {exc}", "unavailable") from None
    if response.status_code >= 400:
        raise ModelError(f"The model host answered {response.status_code}.", "unavailable")
    try:
        data = response.json()
    except ValueError:
        raise ModelError("The model host sent something that is not JSON.", "garbage") from None
    if not isinstance(data, dict):
        raise ModelError("The model host sent an unexpected answer.", "garbage")
    return data


class OpenAIClient:
    kind = "openai"

    async def chat(self, http: httpx.AsyncClient, host: ModelHost, api_key: str | None, system: str, user: str,
                   seconds: float) -> str:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        base = host.url if host.url.endswith("/v1") else host.url + "/v1"
        data = await _post(http, base + "/chat/completions", {
            "model": host.model, "temperature": 0,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        }, headers, seconds)
        try:
            choice = data["choices"][0]["message"]  # type: ignore[index]
            refusal = choice.get("refusal")
            content = choice.get("content")
        except (KeyError, IndexError, TypeError, AttributeError):
            raise ModelError("The model's answer has no message.", "garbage") from None
        if refusal:
            raise ModelError(f"The model refused: {str(refusal)[:200]}", "refused")
        return str(content or "")


class OllamaClient:
    kind = "ollama"

    async def chat(self, http: httpx.AsyncClient, host: ModelHost, api_key: str | None, system: str, user: str,
                   seconds: float) -> str:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        data = await _post(http, host.url + "/api/chat", {
            "model": host.model, "stream": False, "format": "json", "options": {"temperature": 0},
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        }, headers, seconds)
        message = data.get("message")
        if not isinstance(message, dict):
            raise ModelError("The model's answer has no message.", "garbage")
        return str(message.get("content") or "")


CLIENTS: dict[str, ModelClient] = {client.kind: client for client in (OpenAIClient(), OllamaClient())}
