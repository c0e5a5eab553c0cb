"""/provider-push/<provider>: where Gmail (Pub/Sub) and Microsoft Graph deliver their notifications of new mail.

Public like /jmap, but every notification proves itself (Google's signed token, Graph's clientState) to the
provider's receiver before it triggers anything; the answer tells the sender nothing about any account.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, post
from litestar.params import FromPath
from litestar.response import Response

from plmail.domain.ports import PushDelivery
from plmail.services import services_from

_MAX_BODY = 1_048_576  # Graph batches up to 1000 small notifications; Pub/Sub pushes are a few hundred bytes


@post("/provider-push/{provider:str}", include_in_schema=False, status_code=200)
async def provider_push(request: Request[Any, Any, Any], provider: FromPath[str]) -> Response[str]:
    receiver = services_from(request).provider_roles.push_receivers.get(provider)
    if receiver is None:  # no such provider, or PLMAIL_PUBLIC_URL is unset: nothing listens here
        return Response("Not found\n", status_code=404, media_type="text/plain")
    body = await request.body()
    if len(body) > _MAX_BODY:
        return Response("Too large\n", status_code=413, media_type="text/plain")
    delivery = PushDelivery(url=str(request.url), headers={k.lower(): v for k, v in request.headers.items()},
                            query={k: v for k, v in request.query_params.items()}, body=body)
    answer = await receiver.receive(delivery)
    return Response(answer.body, status_code=answer.status, media_type="text/plain",
                    headers={"Cache-Control": "no-store"})
