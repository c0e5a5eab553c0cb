"""The HTTP server of `plmail serve`: uvicorn, ending open event streams first when it stops."""

from __future__ import annotations

import socket
from typing import Any

import uvicorn


class StreamClosingServer(uvicorn.Server):
    """A stream (JMAP push, page updates) never finishes by itself: without closing them first, uvicorn
    would wait out the whole grace period on them and then cancel them with a traceback."""

    def __init__(self, config: uvicorn.Config, app: Any) -> None:
        super().__init__(config)
        self.plmail_app = app

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        services = getattr(self.plmail_app.state, "services", None)
        if services is not None:
            await services.change_feed.close()
        await super().shutdown(sockets)
