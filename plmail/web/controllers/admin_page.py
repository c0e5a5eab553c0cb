"""The administration page's content, shared by the controllers whose forms live on it."""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.response import Template

from plmail.accounts.connection_tests import ALLOWED_PORTS
from plmail.assistant.settings import HOLD_MAX, HOLD_MIN
from plmail.services import services_from
from plmail.web.oauth_context import oauth_context
from plmail.web.pages import render

MODEL_KINDS = {"openai": "OpenAI-compatible (chat completions)", "ollama": "Ollama"}


async def queue_context(request: Request[Any, Any, Any]) -> dict[str, Any]:
    services = services_from(request)
    supervisor = request.app.state.get("supervisor")
    return {
        "counts": await services.queue_overview.counts(),
        "probes": {p.queue: p for p in await services.probes.latest()},
        "failures": await services.queue_overview.failures(),
        "provider_failures": await services.propagation.failing_changes(),
        "local_workers": supervisor.status() if supervisor is not None else {},
    }


async def assistant_context(request: Request[Any, Any, Any]) -> dict[str, Any]:
    services = services_from(request)
    return {
        "assistant": await services.assistant_settings.load(),
        "hold_stats": await services.assistant.hold_stats(),
        "model_kinds": MODEL_KINDS,
        "hold_range": (HOLD_MIN, HOLD_MAX),
    }


async def admin_page(request: Request[Any, Any, Any], *, status_code: int = 200, **extra: Any) -> Template:
    services = services_from(request)
    users = await services.users.all_users()
    return await render(request, "admin.html", status_code=status_code, users=users,
                        any_port=await services.connection_tests.any_port_allowed(),
                        mail_ports=", ".join(str(p) for p in sorted(ALLOWED_PORTS)),
                        **await queue_context(request), **await assistant_context(request),
                        **await oauth_context(request), **extra)
