"""Local fake servers for the services tests cannot reach: Gmail, Microsoft Graph, a model host.

Each fake is an ASGI app holding an in-memory, seedable, inspectable state and speaking the
provider's published API (shapes and errors); `FakeServer` serves one over real HTTP on 127.0.0.1.

    from tests.support.fakes import FakeServer, GmailFake, ManualClock

    @pytest.fixture
    def gmail() -> Iterator[FakeServer[GmailFake]]:
        with FakeServer(GmailFake(clock=ManualClock(), units_per_minute=6_000)) as server:
            yield server            # server.url, server.app.add_message(...), server.app.auth_headers()
"""

from tests.support.fakes.clock import Clock, ManualClock, SystemClock
from tests.support.fakes.gmail import GmailFake, GmailMailbox, GmailMessage
from tests.support.fakes.graph import GraphFake, GraphMailbox, GraphMessage
from tests.support.fakes.mail import rfc822
from tests.support.fakes.model import Behaviour, ModelFake, ModelRequest
from tests.support.fakes.oauth import pkce_challenge
from tests.support.fakes.server import FakeServer

__all__ = [
    "Behaviour", "Clock", "FakeServer", "GmailFake", "GmailMailbox", "GmailMessage", "GraphFake", "GraphMailbox",
    "GraphMessage", "ManualClock", "ModelFake", "ModelRequest", "SystemClock", "pkce_challenge", "rfc822",
]
