"""POST /jmap/api: validate the request (RFC 8620 §3.3, §3.6.1), then run its method calls in order.

Each call runs behind its own guard: a method that fails answers with an error response in its
place and the calls after it still run; a bug is logged and answered as serverFail, never as an
HTTP 500 that would throw away the answers of the calls that worked.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from plmail.domain.errors import PlmailError
from plmail.domain.models import Principal
from plmail.jmap.capabilities import LIMITS, SUPPORTED, Limits
from plmail.jmap.errors import MethodError, RequestError, method_error
from plmail.jmap.refs import resolve_references
from plmail.jmap.registry import Call, MethodRegistry, RequestContext
from plmail.jmap.session import session_state

if TYPE_CHECKING:
    from plmail.services import Services

log = logging.getLogger(__name__)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not I-JSON")


def parse_request(body: bytes, content_type: str | None, limits: Limits = LIMITS) -> dict[str, Any]:
    if len(body) > limits.max_size_request:
        raise RequestError("limit", f"The request is larger than {limits.max_size_request} bytes.",
                           limit="maxSizeRequest")
    if (content_type or "").split(";")[0].strip().lower() != "application/json":
        raise RequestError("notJSON", "The request must be sent as application/json.")
    try:
        request = json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError):
        raise RequestError("notJSON", "The request body is not valid I-JSON.") from None
    return check_request(request, limits)


def check_request(request: Any, limits: Limits = LIMITS) -> dict[str, Any]:
    """A decoded Request object (RFC 8620 §3.3), checked; over a WebSocket it comes with "@type" and "id"."""
    if not isinstance(request, dict):
        raise RequestError("notRequest", "The request must be a JSON object.")
    using, calls = request.get("using"), request.get("methodCalls")
    if not isinstance(using, list) or not all(isinstance(u, str) for u in using):
        raise RequestError("notRequest", "'using' must be a list of capability names.")
    if not isinstance(calls, list) or not all(_is_invocation(c) for c in calls):
        raise RequestError("notRequest", "'methodCalls' must be a list of [name, arguments, callId].")
    created = request.get("createdIds")
    if created is not None and (not isinstance(created, dict)
                                or not all(isinstance(k, str) and isinstance(v, str) for k, v in created.items())):
        raise RequestError("notRequest", "'createdIds' must map creation ids to ids.")
    unknown = sorted(set(using) - SUPPORTED)
    if unknown:
        raise RequestError("unknownCapability", f"This server does not support {', '.join(unknown)}.")
    if len(calls) > limits.max_calls_in_request:
        raise RequestError("limit", f"A request may make at most {limits.max_calls_in_request} method calls.",
                           limit="maxCallsInRequest")
    return request


def _is_invocation(value: object) -> bool:
    return (isinstance(value, list) and len(value) == 3 and isinstance(value[0], str)
            and isinstance(value[1], dict) and isinstance(value[2], str))


class ApiProcessor:
    def __init__(self, registry: MethodRegistry, limits: Limits = LIMITS) -> None:
        self.registry = registry
        self.limits = limits
        self._running: Counter[int] = Counter()

    @asynccontextmanager
    async def slot(self, principal: Principal) -> AsyncIterator[None]:
        """At most maxConcurrentRequests requests per user in this process at once."""
        if self._running[principal.user_id] >= self.limits.max_concurrent_requests:
            raise RequestError("limit", "Too many requests at once; wait for one to finish.",
                               limit="maxConcurrentRequests")
        self._running[principal.user_id] += 1
        try:
            yield
        finally:
            self._running[principal.user_id] -= 1
            if self._running[principal.user_id] <= 0:
                del self._running[principal.user_id]

    async def process(self, services: Services, principal: Principal, request: dict[str, Any], *,
                      base_url: str = "") -> dict[str, Any]:
        ctx = RequestContext(principal=principal, services=services, using=frozenset(request["using"]),
                             states=services.changes.reader(), created_ids=dict(request.get("createdIds") or {}),
                             base_url=base_url)
        responses: list[tuple[str, Any, str]] = []
        for name, arguments, call_id in request["methodCalls"]:
            responses.extend(await self._call(ctx, name, arguments, call_id, responses))
        body: dict[str, Any] = {"methodResponses": [list(r) for r in responses],
                                "sessionState": session_state(principal)}
        if "createdIds" in request:
            body["createdIds"] = ctx.created_ids
        return body

    async def _call(self, ctx: RequestContext, name: str, arguments: dict[str, Any], call_id: str,
                    responses: list[tuple[str, Any, str]]) -> list[tuple[str, Any, str]]:
        try:
            spec = self.registry.get(name)
            if spec is None or spec.capability not in ctx.using:
                raise MethodError("unknownMethod", f"Unknown method {name!r} (or its capability is not in 'using').")
            resolved = resolve_references(arguments, responses)
            call = Call(ctx, name, resolved)
            answer = await spec.handler(call)
            return [(name, answer, call_id), *((n, a, call_id) for n, a in call.implicit)]
        except MethodError as exc:
            return [("error", exc.arguments(), call_id)]
        except PlmailError as exc:
            translated = method_error(exc)
            if translated is not None:
                return [("error", translated.arguments(), call_id)]
            log.exception("JMAP method %s failed for user %s", name, ctx.principal.user_id)
            return [("error", {"type": "serverFail", "description": "The server failed to answer this call."}, call_id)]
        except Exception:
            log.exception("JMAP method %s failed for user %s", name, ctx.principal.user_id)
            return [("error", {"type": "serverFail", "description": "The server failed to answer this call."}, call_id)]
