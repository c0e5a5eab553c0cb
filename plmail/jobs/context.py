"""How a job function reaches the services of the process it runs in."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from plmail.services import Services

SERVICES_KEY = "services"


def services_of(ctx: dict[str, Any]) -> Services:
    services = ctx.get(SERVICES_KEY)
    if services is None:
        raise RuntimeError("job context has no services; the worker was started without them")
    return services  # type: ignore[no-any-return]
