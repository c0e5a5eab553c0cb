"""/healthz: is the database reachable and is every local worker running."""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.response import Response

from plmail.admin.service import HealthReport
from plmail.services import services_from


@get("/healthz")
async def healthz(request: Request[Any, Any, Any]) -> Response[dict[str, Any]]:
    services = services_from(request)
    supervisor = request.app.state.get("supervisor")
    report = HealthReport(
        database=await services.health.database(),
        workers=supervisor.status() if supervisor is not None else {},
    )
    body = {"status": "ok" if report.ok else "degraded", "database": report.database, "workers": report.workers}
    return Response(body, status_code=200 if report.ok else 503, headers={"Cache-Control": "no-store"})
