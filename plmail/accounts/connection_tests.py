"""Whether a user may make plmail connect to a host and port they typed ("Test connection", adding an account).

Without limits such a test is a port scanner run from the server's network: it tells open from closed and
shows what answered. So connections a user asks for go only to the mail ports (and a short list of
bridge ports), at most ten a minute per user, unless an administrator allows any port (a self-hosted
server on an unusual port). The account test calls `admit` with the IMAP and the SMTP port before it connects.
"""

from __future__ import annotations

from typing import Final

from plmail.db.database import Database
from plmail.db.repos.settings import SettingsRepository
from plmail.db.repos.users import LoginThrottleRepository
from plmail.domain.errors import RateLimitedError, ValidationError

# IMAP 143/993, SMTP submission 587/465, SMTP 25.
MAIL_PORTS: Final = frozenset({25, 143, 465, 587, 993})
# Local bridges that speak IMAP/SMTP for a provider without them: Proton Mail Bridge (1143 IMAP, 1025 SMTP),
# and the same pair as other bridges (Hydroxide, DavMail's 1143) default to.
BRIDGE_PORTS: Final = frozenset({1025, 1143})
ALLOWED_PORTS: Final = MAIL_PORTS | BRIDGE_PORTS
TESTS_PER_MINUTE: Final = 10
SETTINGS_KEY: Final = "connections"
PORT_REFUSED: Final = (f"plmail connects only to mail ports ({', '.join(str(p) for p in sorted(ALLOWED_PORTS))}). "
                       "An administrator can allow other ports.")
TOO_MANY_TESTS: Final = "Too many connection tests. Wait a minute and try again."


class ConnectionTestGate:
    def __init__(self, db: Database, *, per_minute: int = TESTS_PER_MINUTE) -> None:
        self.settings = SettingsRepository(db)
        self.counters = LoginThrottleRepository(db)
        self.per_minute = per_minute

    async def any_port_allowed(self) -> bool:
        return bool((await self.settings.get(SETTINGS_KEY)).get("any_port", False))

    async def allow_any_port(self, allowed: bool) -> None:
        """The administrator's switch: let users' connection tests reach any port."""
        await self.settings.put(SETTINGS_KEY, {**await self.settings.get(SETTINGS_KEY), "any_port": allowed})

    async def admit(self, user_id: int, port: int, *more_ports: int) -> None:
        """One connection test (IMAP, and SMTP beside it): raises ValidationError for a port outside the list
        (before anything connects), RateLimitedError past the user's allowance of tests per minute."""
        for wanted, field in ((port, "port"), *((p, "smtp_port") for p in more_ports)):
            if wanted not in ALLOWED_PORTS and not await self.any_port_allowed():
                raise ValidationError(PORT_REFUSED, field=field)
        count = await self.counters.record_failure(f"conntest:user:{user_id}", window_seconds=60)
        if count > self.per_minute:
            raise RateLimitedError(TOO_MANY_TESTS, retry_after=60)
