"""`/events`: tells the user's open pages that their mail changed, so lists refresh without a reload.

It rides on the JMAP push hub: the same notification that tells a phone a state moved (sent once per
committed batch, after commit) tells the browser. The event carries no mail, only which accounts moved;
the page fetches the list again through the normal, access-checked route.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from litestar import Request, get
from litestar.response import ServerSentEvent
from litestar.response.sse import ServerSentEventMessage

from plmail.aio import wait_at_most
from plmail.services import services_from
from plmail.web.pages import signed_in_user

STREAM_SECONDS = 300.0  # then the browser reconnects, so a signed-out session stops listening
KEEPALIVE_SECONDS = 25.0


@get("/events")
async def mail_events(request: Request[Any, Any, Any]) -> ServerSentEvent:
    user = signed_in_user(request)
    services = services_from(request)
    accounts = [a.id for a in await services.accounts.for_user(user.id)]
    hub = services.change_feed

    async def stream() -> AsyncIterator[ServerSentEventMessage]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STREAM_SECONDS
        async with hub.subscribe(accounts) as queue:
            yield ServerSentEventMessage(event="ready", data="{}", retry=3000)
            while (remaining := deadline - loop.time()) > 0:
                try:
                    first = await wait_at_most(queue.get(), min(KEEPALIVE_SECONDS, remaining))
                except TimeoutError:
                    yield ServerSentEventMessage(comment="keep-alive")
                    continue
                moved = {first}
                while not queue.empty():  # a burst of notifications goes out as one event
                    moved.add(queue.get_nowait())
                if any(account < 0 for account in moved):  # the hub is shutting down
                    return
                yield ServerSentEventMessage(event="mail", data=json.dumps(sorted(a for a in moved if a > 0)))

    return ServerSentEvent(stream(), headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
