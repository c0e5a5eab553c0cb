"""/metrics for Prometheus: there only when PLMAIL_METRICS_TOKEN is set, and then only with that bearer token."""

from __future__ import annotations

import hmac
from typing import Any

from litestar import Request, get
from litestar.response import Response

from plmail.ops.metrics import CONTENT_TYPE_LATEST
from plmail.services import services_from


@get("/metrics", include_in_schema=False)
async def metrics(request: Request[Any, Any, Any]) -> Response[bytes]:
    services = services_from(request)
    token = services.settings.metrics_token or ""
    given = request.headers.get("authorization", "")
    if not token or not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
        return Response(b"a bearer token is needed\n", status_code=401, media_type="text/plain",
                        headers={"WWW-Authenticate": 'Bearer realm="plmail metrics"', "Cache-Control": "no-store"})
    return Response(await services.metrics.render(), media_type=CONTENT_TYPE_LATEST,
                    headers={"Cache-Control": "no-store"})
