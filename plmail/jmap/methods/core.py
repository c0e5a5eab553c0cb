"""Core/echo (RFC 8620 §4): the arguments come back unchanged."""

from __future__ import annotations

from typing import Any

from plmail.jmap.capabilities import CORE
from plmail.jmap.registry import Call, MethodTable

table = MethodTable()


@table.method("Core/echo", CORE)
async def echo(call: Call) -> dict[str, Any]:
    return dict(call.arguments)
